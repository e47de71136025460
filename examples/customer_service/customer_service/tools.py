"""Tools of the garden-store customer-service agent (the dataset guide's example domain)."""

from __future__ import annotations

from google.adk.tools import ToolContext

CARTS = {"123": {"items": [{"sku": "soil-01", "name": "Potting soil", "qty": 2}], "subtotal": 25.98}}
# Lowered from 10 after the committed baseline was recorded, and nobody told the agent: its
# instructions and the scripted model still offer 10%. This is the change `make example` checks
# (the README walks through it); set it back to 10 and the check passes.
MAX_DISCOUNT = 5


def access_cart_information(customer_id: str, tool_context: ToolContext) -> dict:
    """Returns the items in the customer's cart and its subtotal."""
    cart = CARTS.get(customer_id, {"items": [], "subtotal": 0.0})
    tool_context.state["cart"] = cart
    return cart


def generate_qr_code(customer_id: str, discount_value: float, discount_type: str, tool_context: ToolContext) -> dict:
    """Creates a discount QR code. Discounts above MAX_DISCOUNT percent need a manager."""
    if discount_value > MAX_DISCOUNT:
        return {"error": f"discounts above {MAX_DISCOUNT}% need approval"}
    tool_context.state["discount_value"] = discount_value
    tool_context.state["qr_generated"] = True
    return {"qr_code": f"QR-{customer_id}-{discount_type}-{discount_value:g}"}


def get_product_recommendations(plant_type: str, customer_id: str) -> dict:
    """Recommends products for a plant type."""
    return {"recommendations": [f"{plant_type} fertilizer", "mister"]}


def get_available_planting_times(date: str) -> dict:
    """Lists free planting-service slots on a date (YYYY-MM-DD)."""
    return {"date": date, "slots": ["9-12", "13-16"]}


def schedule_planting_service(customer_id: str, date: str, time_range: str, details: str, tool_context: ToolContext) -> dict:
    """Books a planting-service appointment."""
    tool_context.state["appointment"] = {"date": date, "time_range": time_range}
    return {"status": "booked", "date": date, "time_range": time_range}


def update_salesforce_crm(customer_id: str, details: dict, tool_context: ToolContext) -> dict:
    """Updates the customer's record in the CRM."""
    tool_context.state["address_updated"] = "address" in details
    return {"status": "updated"}
