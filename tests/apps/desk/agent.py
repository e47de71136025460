"""A three-agent ADK app for the model-call cache: the root (``desk``) answers the greeting and
transfers each question to ``billing`` or ``shipping``, which look the answer up. Its scripted
model writes one line per call to $CALLS_FILE (across worker processes): the agent and what the
user said.

With $GREETING_BARRIER=N the model answers the greeting only once N greeting requests have
reached the model step (each counted in $CALLS_FILE.requests by the root's
before_model_callback, which runs before the model, cached or not): N questions greeting at
once are then all in flight together when the model answers, whichever runs first."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

GREETING = "hello"
PRICES = {"apple": 1, "pear": 2}
DAYS = {"apple": 3, "pear": 5}
BARRIER_TIMEOUT_S = 120.0  # a generous bound, so a broken cache fails the count instead of hanging


def lookup_price(item: str) -> dict:
    """The price of an item."""
    return {"item": item, "price": PRICES.get(item, 9)}


def lookup_delivery(item: str) -> dict:
    """How many days an item takes to arrive."""
    return {"item": item, "days": DAYS.get(item, 7)}


def _said(request: LlmRequest) -> str:
    for content in reversed(request.contents):
        text = "".join(p.text or "" for p in content.parts or [])
        if content.role == "user" and text and not text.startswith("For context:"):
            return text
    return ""


def count_greeting(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
    if _said(llm_request) == GREETING:
        with open(os.environ["CALLS_FILE"] + ".requests", "a", encoding="utf-8") as requests:
            requests.write("greeting\n")


async def _greeting_barrier() -> None:
    want = int(os.environ.get("GREETING_BARRIER") or 0)
    path = os.environ["CALLS_FILE"] + ".requests"
    loop = asyncio.get_running_loop()
    deadline = loop.time() + BARRIER_TIMEOUT_S
    while want and loop.time() < deadline:
        try:
            with open(path, encoding="utf-8") as requests:
                if len(requests.read().splitlines()) >= want:
                    return
        except OSError:
            pass
        await asyncio.sleep(0.02)


class DeskModel(BaseLlm):
    model: str = "scripted-desk"

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        agent = (llm_request.config.labels or {}).get("adk_agent_name")
        said = _said(llm_request)
        with open(os.environ["CALLS_FILE"], "a", encoding="utf-8") as calls:
            calls.write(f"{agent}\t{said}\n")
        last = llm_request.contents[-1]
        answer = next((p.function_response for p in last.parts or [] if p.function_response), None)
        usage = types.GenerateContentResponseUsageMetadata(prompt_token_count=30, candidates_token_count=5)

        def reply(part: types.Part) -> LlmResponse:
            return LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=usage)

        item = said.split()[-1] if said else "nothing"
        if agent == "desk":
            if said == GREETING:
                await _greeting_barrier()
                yield reply(types.Part(text="Hello! Ask me about prices or deliveries."))
            else:
                target = "billing" if "price" in said else "shipping"
                yield reply(types.Part(function_call=types.FunctionCall(name="transfer_to_agent", args={"agent_name": target})))
        elif answer is None or answer.name == "transfer_to_agent":
            tool = "lookup_price" if agent == "billing" else "lookup_delivery"
            yield reply(types.Part(function_call=types.FunctionCall(name=tool, args={"item": item})))
        else:
            found = answer.response or {}
            fact = f"costs {found.get('price')}" if "price" in found else f"arrives in {found.get('days')} days"
            yield reply(types.Part(text=f"{found.get('item')} {fact}"))


billing = LlmAgent(name="billing", model=DeskModel(), instruction="Answer prices.", tools=[lookup_price])
shipping = LlmAgent(name="shipping", model=DeskModel(), instruction="Answer delivery times.", tools=[lookup_delivery])
root_agent = LlmAgent(
    name="desk",
    model=DeskModel(),
    instruction="Greet, then hand each question to billing or shipping.",
    sub_agents=[billing, shipping],
    before_model_callback=count_greeting,
)
