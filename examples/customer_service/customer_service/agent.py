"""The garden store's customer-service agent: a root agent with tools and a promotions sub-agent.

Without Gemini credentials (GOOGLE_API_KEY, or GOOGLE_GENAI_USE_VERTEXAI=true) it runs on a
scripted model, so the example needs no network.
"""

from __future__ import annotations

import os

from google.adk.agents import LlmAgent

from .scripted_model import ScriptedModel
from .tools import (
    access_cart_information,
    generate_qr_code,
    get_available_planting_times,
    get_product_recommendations,
    schedule_planting_service,
    update_salesforce_crm,
)


def _model() -> object:
    if os.environ.get("GOOGLE_API_KEY") or os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in ("1", "true"):
        return os.environ.get("EXAMPLE_GEMINI_MODEL", "gemini-2.5-flash")
    return ScriptedModel()


promotions_agent = LlmAgent(
    name="promotions_agent",
    model=_model(),
    description="Creates discount QR codes (at most 10%) after checking the cart.",
    instruction="Check the customer's cart (customer id 123), then create a percentage discount QR code of at most 10%.",
    tools=[access_cart_information, generate_qr_code],
)

root_agent = LlmAgent(
    name="customer_service",
    model=_model(),
    description="Customer service for a garden store.",
    instruction=(
        "You help customer 123 of a garden store with their cart, plant care, planting appointments and their CRM record. "
        "Hand discount and QR-code requests to promotions_agent."
    ),
    tools=[access_cart_information, get_product_recommendations, get_available_planting_times, schedule_planting_service, update_salesforce_crm],
    sub_agents=[promotions_agent],
)
