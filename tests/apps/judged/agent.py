"""A garden store's price desk for ADK's judged criteria: a scripted model that looks a price up
with its tool and says it, greets, thanks, and refuses what the store does not sell. It states
one price wrong (the rake's: the tool says 25, it says 99), so the judges have something to fail,
guesses the seeds' price wrong in the words it says with the tool call (an intermediate response),
and gives the opening hours only its instruction states (a judge sees them in ADK's app_details).
Every run makes the same calls and says the same words."""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

PRICES = {"soil": 12, "rake": 25, "hose": 30, "seeds": 4}
SAID = {"rake": 99}  # what the model says instead of the tool's price
GUESSED = {"seeds": "Seeds are usually $3, let me check."}  # said with the tool call, before its answer


def price(item: str) -> dict:
    """Looks up the price of an item the store sells."""
    return {"item": item, "price": PRICES[item]}


def _said(request: LlmRequest) -> str:
    for content in reversed(request.contents):
        text = "".join(p.text or "" for p in content.parts or [] if not p.thought)
        if content.role == "user" and text and not text.startswith("For context:"):
            return text.lower()
    return ""


def _answered(request: LlmRequest) -> dict | None:
    last = request.contents[-1]
    for part in last.parts or []:
        if part.function_response is not None:
            return dict(part.function_response.response or {})
    return None


class DeskModel(BaseLlm):
    model: str = "scripted-desk"

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        said, answered = _said(llm_request), _answered(llm_request)

        def text(words: str) -> LlmResponse:
            return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=words)]))

        item = next((name for name in PRICES if re.search(rf"\b{name}\b", said)), None)
        if answered is not None:
            name = str(answered["item"])
            yield text(f"The {name} costs ${SAID.get(name, answered['price'])}. Anything else?")
        elif item is not None:
            call = types.Part(function_call=types.FunctionCall(name="price", args={"item": item}))
            # Words with the call, before the tool answers (ADK's intermediate response): a guess, wrong.
            parts = [types.Part(text=GUESSED[item]), call] if item in GUESSED else [call]
            yield LlmResponse(content=types.Content(role="model", parts=parts))
        elif "thank" in said:
            yield text("You are welcome. Happy gardening!")
        elif "hello" in said or "hi" in said.split():
            yield text("Hello! I can tell you our prices.")
        else:  # the opening hours are the instruction's: only its text supports them
            yield text("Sorry, we do not sell that. We are open from 9 to 17.")


root_agent = LlmAgent(
    name="desk",
    model=DeskModel(),
    instruction="Tell customers the prices of what the store sells. The store is open from 9 to 17.",
    tools=[price],
)
