"""A second small ADK app for runner tests: transfers, state writes, a raising tool (alone, or
after a call that succeeds), a model that answers 429 twice, and a slow model. Behaviour is chosen by the user's words."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools.tool_context import ToolContext
from google.genai import errors, types

CALLS: Counter[str] = Counter()  # model calls per user text, to script "fail twice, then succeed"


def lookup_order(order_id: str, tool_context: ToolContext) -> dict:
    """Looks up an order."""
    tool_context.state["last_order"] = order_id
    tool_context.state["lookups"] = tool_context.state.get("lookups", 0) + 1
    return {"order_id": order_id, "status": "shipped", "total": 10}


def explode(reason: str) -> dict:
    """Always fails."""
    raise RuntimeError(f"tool exploded: {reason}")


def refund(order_id: str, amount: float, tool_context: ToolContext) -> dict:
    """Refunds an order."""
    tool_context.state["refund"] = {"order_id": order_id, "amount": amount}
    return {"ok": True}


def _latest_user(request: LlmRequest) -> str:
    for content in reversed(request.contents):
        text = "".join(p.text or "" for p in content.parts or [])
        if content.role == "user" and text and not text.startswith("For context:"):
            return text
    return ""


def _answered(request: LlmRequest) -> list[str]:
    last = request.contents[-1]
    return [p.function_response.name for p in last.parts or [] if p.function_response and p.function_response.name]


class ShopModel(BaseLlm):
    model: str = "scripted-shop"

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        agent = (llm_request.config.labels or {}).get("adk_agent_name")
        said = _latest_user(llm_request)
        answered = _answered(llm_request)
        CALLS[said] += 1
        if "flaky" in said and CALLS[said] <= 2:
            raise errors.ClientError(429, {"error": {"code": 429, "message": "Resource exhausted", "status": "RESOURCE_EXHAUSTED"}})
        if "slow" in said:
            await asyncio.sleep(30)
        usage = types.GenerateContentResponseUsageMetadata(prompt_token_count=40, candidates_token_count=4, cached_content_token_count=8)

        def reply(part: types.Part) -> LlmResponse:
            return LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=usage)

        def call(name: str, **args: object) -> LlmResponse:
            return reply(types.Part(function_call=types.FunctionCall(name=name, args=args)))

        if agent == "shop":
            if "refund" in said and not answered:
                yield call("transfer_to_agent", agent_name="refunds")
            elif "order" in said and not answered:
                yield call("lookup_order", order_id="A1")
            elif "boom" in said and not answered:
                yield call("explode", reason="test")
            elif "boom" in said and answered == ["lookup_order"]:  # "my order, then boom": a call succeeds, the next raises
                yield call("explode", reason="after the lookup")
            else:
                yield reply(types.Part(text=f"shop: {said}"))
        else:  # refunds
            if "lookup_order" not in answered and "refund" not in answered:
                yield call("lookup_order", order_id="A1")
            elif "refund" not in answered:
                yield call("refund", order_id="A1", amount=10)
            else:
                yield reply(types.Part(text="Refunded 10 on order A1."))


refunds = LlmAgent(name="refunds", model=ShopModel(), instruction="Refund orders.", tools=[lookup_order, refund])
root_agent = LlmAgent(name="shop", model=ShopModel(), instruction="Shop assistant.", tools=[lookup_order, explode], sub_agents=[refunds])
