"""A stochastic ADK app: its scripted model answers each question right with a chance that
depends on the "model version" it is served as ($MODEL_VERSION, as a Gemini alias moves under
the same name), drawn from a generator seeded by the question and that version: the same model
version answers a question the same way on every side of a run, another one may not.

"price of X" -> lookup(item=X) -> "X costs P", or "I am not sure" when the draw says so. With
$MARKS_FILE set, each tool call appends the worker's folder and the marker module its venv's
install command wrote (``depmarker``), to show which environment each side ran in."""

from __future__ import annotations

import hashlib
import os
import random
from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

PRICES = {"apple": 1, "pear": 2, "plum": 3, "fig": 4}
# The chance of a right answer under each model version.
# "v1.1": a minor update that words its answers as v1 does, wrong on one of the 20 questions (q01) v1 got right.
SKILL = {"v1": 1.0, "v1.1": 0.95, "v2": 0.5}


def lookup(item: str) -> dict:
    """Looks up the price of an item."""
    marks = os.environ.get("MARKS_FILE")
    if marks:
        try:
            import depmarker  # type: ignore[import-not-found]  # written into the venv by the install command

            mark = depmarker.MARK
        except ImportError:
            mark = "none"
        with open(marks, "a", encoding="utf-8") as out:
            out.write(f"{os.getcwd()}\t{mark}\n")
    return {"item": item, "price": PRICES.get(item, 9)}


def draw(question: str, version: str) -> float:
    seed = hashlib.sha256(f"{version}\0{question}".encode()).hexdigest()
    return random.Random(seed).random()


class DriftingModel(BaseLlm):
    model: str = "scripted-drifting"

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        version = os.environ.get("MODEL_VERSION", "v1")
        first = next((p.text for c in llm_request.contents for p in c.parts or [] if c.role == "user" and p.text), "")
        last = llm_request.contents[-1]
        answer = next((p.function_response.response for p in last.parts or [] if p.function_response), None)
        if answer is None:
            item = first.split()[-1] if first else "nothing"
            part = types.Part(function_call=types.FunctionCall(name="lookup", args={"item": item}))
        elif draw(first, version) < SKILL.get(version, 0.5):
            # Another model version words its answers its own way too.
            said = "" if version in ("v1", "v1.1") else f" (as of {version})"
            part = types.Part(text=f"{answer.get('item')} costs {answer.get('price')}{said}")
        else:
            part = types.Part(text="I am not sure")
        usage = types.GenerateContentResponseUsageMetadata(prompt_token_count=20, candidates_token_count=5)
        yield LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=usage)


root_agent = LlmAgent(name="drifting", model=DriftingModel(), instruction="Answer prices.", tools=[lookup])
