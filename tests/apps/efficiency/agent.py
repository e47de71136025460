"""A three-turn app for ADK's efficiency reports: per turn a different number of tool and model
calls, token counts of every kind (cached, thinking, tool-use prompt), a transfer, and a model
call that reports no usage (turn 3), so ADK's per-turn figures and their means are all exercised.
The model is scripted: every run makes the same calls with the same usage."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types


def lookup_order(order_id: str) -> dict:
    """Looks up an order."""
    return {"order_id": order_id, "status": "shipped", "total": 10}


def refund(order_id: str, amount: float) -> dict:
    """Refunds an order."""
    return {"ok": True}


def _said(request: LlmRequest) -> str:
    for content in reversed(request.contents):
        text = "".join(p.text or "" for p in content.parts or [] if not p.thought)
        if content.role == "user" and text and not text.startswith("For context:"):
            return text
    return ""


def _answered(request: LlmRequest) -> list[str]:
    last = request.contents[-1]
    return [p.function_response.name for p in last.parts or [] if p.function_response and p.function_response.name]


def _usage(
    prompt: int, candidates: int, *, cached: int = 0, thoughts: int = 0, tool_use: int = 0
) -> types.GenerateContentResponseUsageMetadata:
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt,
        candidates_token_count=candidates,
        cached_content_token_count=cached or None,
        thoughts_token_count=thoughts or None,
        tool_use_prompt_token_count=tool_use or None,
        total_token_count=prompt + candidates + thoughts + tool_use,
    )


class EfficiencyModel(BaseLlm):
    model: str = "scripted-efficiency"

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        agent = (llm_request.config.labels or {}).get("adk_agent_name")
        said, answered = _said(llm_request), _answered(llm_request)

        def call(name: str, usage: types.GenerateContentResponseUsageMetadata, **args: object) -> LlmResponse:
            part = types.Part(function_call=types.FunctionCall(name=name, args=args))
            return LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=usage, model_version=self.model)

        def text(words: str, usage: types.GenerateContentResponseUsageMetadata | None) -> LlmResponse:
            return LlmResponse(
                content=types.Content(role="model", parts=[types.Part(text=words)]), usage_metadata=usage, model_version=self.model
            )

        if agent == "front":
            if "order" in said and not answered:
                yield call("lookup_order", _usage(1_200, 14, cached=800, thoughts=61), order_id="A1")
            elif "order" in said:
                yield text("Your order A1 has shipped.", _usage(1_310, 9))
            else:
                yield call("transfer_to_agent", _usage(1_400, 11, tool_use=37), agent_name="refunds")
        elif "thanks" in said:  # ADK routes turn 3 to the agent that answered turn 2
            yield text("You are welcome.", None)  # a backend that reports no usage
        elif not answered:
            yield call("refund", _usage(900, 20, cached=512, thoughts=140), order_id="A1", amount=10)
        else:
            yield text("Refunded 10 on order A1.", _usage(1_050, 12, thoughts=33))


refunds = LlmAgent(name="refunds", model=EfficiencyModel(), instruction="Refund orders.", tools=[refund])
root_agent = LlmAgent(name="front", model=EfficiencyModel(), instruction="Help.", tools=[lookup_order], sub_agents=[refunds])
