"""An ADK app whose root consults two ``AgentTool`` sub-agents, as google/adk-samples'
financial-advisor does: each runs in a ``Runner`` of its own, which the tree's ``sub_agents`` do
not list. Its models are google-genai's ``Gemini``, so every call is an HTTP request to wherever
``GOOGLE_GEMINI_BASE_URL`` says (``tests/fakes/gemini_server.py`` with :func:`model`'s script)."""

from __future__ import annotations

import json
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.tools.agent_tool import AgentTool

MODEL = "gemini-2.5-flash"

researcher = LlmAgent(name="researcher", model=MODEL, description="Finds the facts.", instruction="Find the facts.")
writer = LlmAgent(name="writer", model=MODEL, description="Writes the answer.", instruction="Write the answer.")
root_agent = LlmAgent(
    name="advisor",
    model=MODEL,
    instruction="Ask the researcher, then the writer.",
    tools=[AgentTool(agent=researcher), AgentTool(agent=writer)],
)


def model(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The model's answer to a generateContent request: the advisor asks the researcher, then
    the writer, then answers with what the writer said; each sub-agent answers its request."""
    system = json.dumps(body.get("systemInstruction") or {})
    contents = body.get("contents") or []
    said = next((p["text"] for c in contents for p in c.get("parts") or [] if "text" in p), "")
    if '\\"researcher\\"' in system:
        return [{"text": f"facts about {said}"}]
    if '\\"writer\\"' in system:
        return [{"text": f"an answer from {said}"}]
    answered = [p["functionResponse"] for c in contents for p in c.get("parts") or [] if "functionResponse" in p]
    if not answered:
        return [{"functionCall": {"name": "researcher", "args": {"request": said}}}]
    if len(answered) == 1:
        return [{"functionCall": {"name": "writer", "args": {"request": json.dumps(answered[0].get("response"))}}}]
    return [{"text": f"done: {json.dumps(answered[-1].get('response'), sort_keys=True)}"}]
