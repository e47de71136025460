"""The agent, as the sample defines it: one LLM agent with mocked tools and callbacks."""

from __future__ import annotations

from google.adk import Agent

from .config import Config
from .prompts import GLOBAL_INSTRUCTION, INSTRUCTION
from .shared_libraries.callbacks import after_tool, before_agent, before_tool, rate_limit_callback
from .tools.tools import (
    access_cart_information,
    approve_discount,
    get_available_planting_times,
    modify_cart,
    sync_ask_for_approval,
)

configs = Config()

root_agent = Agent(
    model=configs.agent_settings.model,
    global_instruction=GLOBAL_INSTRUCTION,
    instruction=INSTRUCTION,
    name=configs.agent_settings.name,
    tools=[
        access_cart_information,
        modify_cart,
        approve_discount,
        sync_ask_for_approval,
        get_available_planting_times,
    ],
    before_tool_callback=before_tool,
    after_tool_callback=after_tool,
    before_agent_callback=before_agent,
    before_model_callback=rate_limit_callback,
)
