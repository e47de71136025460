"""A deterministic stand-in for Gemini, so the example runs offline and reproducibly.

It reads the conversation the way a model would (the latest user text, the tool results
so far in this turn) and answers by a fixed policy per agent. Token counts are estimated
from the text length.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.genai import types

LATENCY_S = float(os.environ.get("EXAMPLE_MODEL_LATENCY_MS", "20")) / 1000


def _text(content: types.Content) -> str:
    return "".join(part.text or "" for part in content.parts or [])


def _user_text(request: LlmRequest) -> str:
    """The user's latest words; after a transfer, ADK relays other agents' turns as user
    content starting with "For context:", which is not the user speaking."""
    for content in reversed(request.contents):
        text = _text(content)
        if content.role == "user" and text and not text.startswith("For context:"):
            return text
    return ""


def _results_this_turn(request: LlmRequest) -> dict[str, Any]:
    """Tool name -> response, for the calls made since the user last spoke."""
    results: dict[str, Any] = {}
    for content in reversed(request.contents):
        text = _text(content)
        if content.role == "user" and text and not text.startswith("For context:"):
            break
        for part in content.parts or []:
            if part.function_response and part.function_response.name not in results:
                results[part.function_response.name] = part.function_response.response
    return results


def _call(name: str, **args: Any) -> types.Part:
    return types.Part(function_call=types.FunctionCall(name=name, args=args))


def _say(text: str) -> types.Part:
    return types.Part(text=text)


def customer_service_policy(user: str, done: dict[str, Any]) -> types.Part:
    said = user.lower()
    if re.search(r"discount|qr|% off", said):
        return _call("transfer_to_agent", agent_name="promotions_agent")
    if "cart" in said:
        if "access_cart_information" not in done:
            return _call("access_cart_information", customer_id="123")
        cart = done["access_cart_information"]
        return _say(f"Your cart has {cart['items'][0]['qty']} bags of potting soil, subtotal ${cart['subtotal']}.")
    if re.search(r"water|care|fern", said):
        if "get_product_recommendations" not in done:
            return _call("get_product_recommendations", plant_type="fern", customer_id="123")
        return _say("Water ferns when the top inch of soil is dry, about twice a week. A mister helps.")
    if "book" in said or "planting service" in said:
        if "get_available_planting_times" not in done:
            return _call("get_available_planting_times", date="2024-11-23")
        return _say("Saturday has 9-12 and 13-16 free. Which do you prefer?")
    if "morning" in said or "afternoon" in said:
        if "schedule_planting_service" not in done:
            slot = "9-12" if "morning" in said else "13-16"
            return _call("schedule_planting_service", customer_id="123", date="2024-11-23", time_range=slot, details="planting")
        return _say(f"You're booked for Saturday {done['schedule_planting_service']['time_range']}.")
    if "address" in said:
        if "update_salesforce_crm" not in done:
            address = said.split(" to ", 1)[-1].strip(" .") if " to " in said else ""
            return _call("update_salesforce_crm", customer_id="123", details={"address": address})
        return _say("Your address is updated.")
    if re.search(r"^(hi|hello|hey)\b", said):
        return _say("Hello! Welcome to the garden store. How can I help?")
    return _say("Sorry, I can only help with orders, plant care and planting services.")


def promotions_policy(user: str, done: dict[str, Any]) -> types.Part:
    if "access_cart_information" not in done:
        return _call("access_cart_information", customer_id="123")
    if "generate_qr_code" not in done:
        asked = re.search(r"(\d+)\s*%", user)
        value = min(float(asked.group(1)), 10.0) if asked else 10.0  # the store caps discounts at 10%
        return _call("generate_qr_code", customer_id="123", discount_value=value, discount_type="percentage")
    result = done["generate_qr_code"]
    if "error" in result:
        return _say(f"I couldn't create that code: {result['error']}.")
    return _say(f"Here is your QR code: {result['qr_code']}.")


POLICIES = {"customer_service": customer_service_policy, "promotions_agent": promotions_policy}


class ScriptedModel(BaseLlm):
    """Answers as the example's agents would, without a network."""

    model: str = "scripted-customer-service"

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        if LATENCY_S:
            await asyncio.sleep(LATENCY_S)
        agent = (llm_request.config.labels or {}).get("adk_agent_name", "customer_service")
        part = POLICIES[agent](_user_text(llm_request), _results_this_turn(llm_request))
        prompt_chars = sum(len(_text(c)) for c in llm_request.contents) + len(str(llm_request.config.system_instruction or ""))
        usage = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=prompt_chars // 4 + 50,
            candidates_token_count=len(part.text or "") // 4 + 5,
            total_token_count=prompt_chars // 4 + 55 + len(part.text or "") // 4,
        )
        yield LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=usage)
