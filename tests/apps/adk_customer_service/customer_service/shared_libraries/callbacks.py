"""The sample's callbacks: arguments lower-cased and the customer id checked before each tool,
the discount rule in a callback, the customer profile put in the state before the agent runs."""

from __future__ import annotations

from typing import Any

from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext

from ..entities.customer import Customer

MAX_DISCOUNT_RATE = 10


def rate_limit_callback(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
    """The sample fills empty text parts (the model API refuses them) and counts requests."""
    for content in llm_request.contents:
        for part in content.parts or []:
            if part.text == "":
                part.text = " "
    callback_context.state["request_count"] = int(callback_context.state.get("request_count", 0)) + 1


def lowercase_value(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: lowercase_value(v) for k, v in value.items()}
    if isinstance(value, str):
        return value.lower()
    if isinstance(value, list):
        return [lowercase_value(i) for i in value]
    return value


def before_tool(tool: BaseTool, args: dict[str, Any], tool_context: ToolContext) -> dict[str, Any] | None:
    normalized = lowercase_value(args)
    args.clear()
    args.update(normalized)
    if "customer_id" in args:
        profile = Customer.model_validate_json(tool_context.state["customer_profile"])
        if args["customer_id"] != profile.customer_id:
            return {"error": f"You cannot use the tool with customer_id {args['customer_id']}, only for {profile.customer_id}."}
    if tool.name == "sync_ask_for_approval" and float(args.get("value", 0)) <= MAX_DISCOUNT_RATE:
        return {"status": "approved", "message": "You can approve this discount; no manager needed."}
    return None


def after_tool(tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, tool_response: dict[str, Any]) -> dict[str, Any] | None:
    if tool.name == "approve_discount" and tool_response.get("status") == "ok":
        tool_context.state["discount_applied"] = args.get("value")
    return None


def before_agent(callback_context: CallbackContext) -> None:
    if "customer_profile" not in callback_context.state:
        callback_context.state["customer_profile"] = Customer.get_customer("123").to_json()
