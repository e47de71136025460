"""An ADK app whose scripted model answers "price of X" by calling lookup(item=X), right with the
probability $STOCHASTIC_RATES gives the item (a JSON object; 1.0 when absent), drawing afresh on
every run (the bench: truly random; tests use rates of 0 and 1 only, so nothing depends on
chance). Else it looks up the wrong item. With $STOCHASTIC_NO_KEY set, every model call fails as
google-genai does without an API key. Each first call of a question appends a line to $CALLS_FILE
when set, as the counting app does."""

from __future__ import annotations

import json
import os
import random
from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

PRICES = {"apple": 1, "pear": 2, "plum": 3, "fig": 4, "kiwi": 5, "lime": 6, "date": 7, "peach": 8}
# Rates the code itself sets (a PR's change to the agent), laid over $STOCHASTIC_RATES.
RATES: dict[str, float] = {}
NO_KEY = "Missing key inputs argument! To use the Google AI API, provide (`api_key`) arguments."


def lookup(item: str) -> dict:
    """Looks up the price of an item."""
    return {"item": item, "price": PRICES.get(item, 9)}


def no_key() -> None:
    """What google-genai does without an API key: its client raises, in its own code."""
    from google import genai

    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        os.environ.pop(name, None)
    genai.Client()


class StochasticModel(BaseLlm):
    model: str = "scripted-stochastic"

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        if os.environ.get("STOCHASTIC_NO_KEY"):
            no_key()
        calls = os.environ.get("CALLS_FILE")
        if calls:
            with open(calls, "a", encoding="utf-8") as out:
                out.write("call\n")
        last = llm_request.contents[-1]
        answer = next((p.function_response.response for p in last.parts or [] if p.function_response), None)
        said = "".join(p.text or "" for p in last.parts or [])
        if answer is None:
            item = said.split()[-1] if said else "nothing"
            rates = {**json.loads(os.environ.get("STOCHASTIC_RATES") or "{}"), **RATES}
            rate = float(rates.get(item, 1.0))
            asked = item if random.random() < rate else "nothing"
            part = types.Part(function_call=types.FunctionCall(name="lookup", args={"item": asked}))
        else:
            part = types.Part(text=f"{answer.get('item')} costs {answer.get('price')}")
        usage = types.GenerateContentResponseUsageMetadata(prompt_token_count=20, candidates_token_count=5)
        yield LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=usage)


root_agent = LlmAgent(name="stochastic", model=StochasticModel(), instruction="Answer prices.", tools=[lookup])
