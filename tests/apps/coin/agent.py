"""An ADK app whose scripted model is a coin toss on one question: "price of X" -> lookup(item=X),
except that for the item named in $COIN_ITEM it looks up the wrong item in one of every three
calls, at a position chosen by a seeded shuffle ($COIN_SEED). Which call of that question this is
comes from $CALLS_FILE (one line per first call, across worker processes; run at concurrency 1)."""

from __future__ import annotations

import os
import random
from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

PRICES = {"apple": 1, "pear": 2, "plum": 3}


def lookup(item: str) -> dict:
    """Looks up the price of an item."""
    return {"item": item, "price": PRICES.get(item, 9)}


def _right_this_time(item: str) -> bool:
    """Right on two of every three calls for the coin item: the n-th call takes the n-th choice of
    a seeded shuffle of (right, right, wrong)."""
    if item != os.environ.get("COIN_ITEM"):
        return True
    with open(os.environ["CALLS_FILE"], "a+", encoding="utf-8") as calls:
        calls.seek(0)
        n = sum(1 for line in calls if line.strip() == item)
        calls.write(f"{item}\n")
    choices = [True, True, False]
    random.Random(os.environ.get("COIN_SEED", "0")).shuffle(choices)
    return choices[n % 3]


class CoinModel(BaseLlm):
    model: str = "scripted-coin"

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1]
        answer = next((p.function_response.response for p in last.parts or [] if p.function_response), None)
        said = "".join(p.text or "" for p in last.parts or [])
        if answer is None:
            item = said.split()[-1] if said else "nothing"
            asked = item if _right_this_time(item) else "pear"
            part = types.Part(function_call=types.FunctionCall(name="lookup", args={"item": asked}))
        else:
            part = types.Part(text=f"{answer.get('item')} costs {answer.get('price')}")
        usage = types.GenerateContentResponseUsageMetadata(prompt_token_count=20, candidates_token_count=5)
        yield LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=usage)


root_agent = LlmAgent(name="coin", model=CoinModel(), instruction="Answer prices.", tools=[lookup])
