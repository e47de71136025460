"""A scripted model for the observed-inputs tests: it writes one line per call to $CALLS_FILE
and follows its agent's instruction: "price of X" -> lookup(item=X) -> the tool's answer,
unless the instruction (or its own ``mode``) says BROKEN: then it answers without the tool.
Each test's agent builds its instruction from what the test is about (a prompt file, a
provider module, a .env file...), so a PR that breaks that input breaks the answers."""

from __future__ import annotations

import os
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


class ScriptedModel(BaseLlm):
    model: str = "scripted-observed"
    # A setting of the model object (as an endpoint is): "broken" answers without the tool.
    mode: str = "ok"

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        with open(os.environ["CALLS_FILE"], "a", encoding="utf-8") as calls:
            calls.write("call\n")
        instruction = str(llm_request.config.system_instruction or "") if llm_request.config else ""
        last = llm_request.contents[-1]
        answer = next((p.function_response.response for p in last.parts or [] if p.function_response), None)
        said = "".join(p.text or "" for p in last.parts or [])
        if "BROKEN" in instruction or self.mode == "broken":
            part = types.Part(text="no idea")
        elif answer is None:
            item = said.split()[-1] if said else "nothing"
            part = types.Part(function_call=types.FunctionCall(name="lookup", args={"item": item}))
        else:
            part = types.Part(text=f"{answer.get('item')} costs {answer.get('price')}")
        usage = types.GenerateContentResponseUsageMetadata(prompt_token_count=20, candidates_token_count=5)
        yield LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=usage)


def agent(instruction: str, name: str = "shop", model: BaseLlm | None = None) -> LlmAgent:
    return LlmAgent(name=name, model=model or ScriptedModel(), instruction=instruction, tools=[lookup])
