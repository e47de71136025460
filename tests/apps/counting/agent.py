"""An ADK app whose scripted model writes one line per call to $CALLS_FILE (across worker
processes), to count what a run cost: "price of X" -> lookup(item=X) -> the tool's answer."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

PRICES = {"apple": 1, "pear": 2, "plum": 3}


def lookup(item: str) -> dict:
    """Looks up the price of an item. With $COUNTING_FLAKY_TOOL, every other lookup of that item
    raises (the tool's own error: the agent's, not the model's), counted in $CALLS_FILE's folder."""
    if item == os.environ.get("COUNTING_FLAKY_TOOL"):
        with open(os.path.join(os.path.dirname(os.environ["CALLS_FILE"]), "flaky.txt"), "a+", encoding="utf-8") as seen:
            seen.seek(0)
            count = len(seen.read().splitlines())
            seen.write("lookup\n")
        if count % 2 == 0:
            raise RuntimeError(f"the price service dropped the lookup of {item}")
    return {"item": item, "price": PRICES.get(item, 9)}


class CountingModel(BaseLlm):
    model: str = "scripted-counting"

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        with open(os.environ["CALLS_FILE"], "a", encoding="utf-8") as calls:
            calls.write("call\n")
        if os.environ.get("COUNTING_LATENCY_MS"):  # the benchmarks' stand-in for a model's latency
            await asyncio.sleep(float(os.environ["COUNTING_LATENCY_MS"]) / 1000)
        last = llm_request.contents[-1]
        answer = next((p.function_response.response for p in last.parts or [] if p.function_response), None)
        said = "".join(p.text or "" for p in last.parts or [])
        first = "".join(p.text or "" for p in llm_request.contents[0].parts or [])
        if os.environ.get("COUNTING_OUTAGE") and first.startswith(os.environ["COUNTING_OUTAGE"]):
            # What google-genai does without a key: its client raises, in its own code (infrastructure).
            from google import genai

            for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
                os.environ.pop(name, None)
            genai.Client()
        if os.environ.get("COUNTING_BROKEN"):  # a change nothing observed (the environment, not a file)
            said = "nothing"
        if answer is None:
            item = said.split()[-1] if said else "nothing"
            part = types.Part(function_call=types.FunctionCall(name="lookup", args={"item": item}))
        else:
            part = types.Part(text=f"{answer.get('item')} costs {answer.get('price')}")
        usage = types.GenerateContentResponseUsageMetadata(prompt_token_count=20, candidates_token_count=5)
        yield LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=usage)


root_agent = LlmAgent(name="counting", model=CountingModel(), instruction="Answer prices.", tools=[lookup])
