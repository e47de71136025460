"""Mocked tools, as in the sample (a subset of its twelve)."""

from __future__ import annotations

from typing import Any


def access_cart_information(customer_id: str) -> dict[str, Any]:
    """Args:
        customer_id (str): The ID of the customer.

    Returns:
        dict: A dictionary representing the cart contents.
    """
    return {"items": [{"product_id": "soil-123", "name": "Standard Potting Soil", "quantity": 1}], "subtotal": 25.98}


def modify_cart(customer_id: str, items_to_add: list[dict[str, Any]], items_to_remove: list[dict[str, Any]]) -> dict[str, Any]:
    """Modifies the user's shopping cart by adding and/or removing items."""
    return {"status": "success", "message": "Cart updated successfully.", "items_added": True, "items_removed": True}


def approve_discount(discount_type: str, value: float, reason: str) -> dict[str, Any]:
    """Approve the flat rate or percentage discount requested by the user."""
    if value > 10:
        return {"status": "rejected", "message": "discount too large. Must be 10 or less."}
    return {"status": "ok"}


def sync_ask_for_approval(discount_type: str, value: float, reason: str) -> dict[str, Any]:
    """Asks the manager for approval for a discount."""
    return {"status": "approved"}


def get_available_planting_times(date: str) -> list[str]:
    """Retrieves available planting service time slots for a given date."""
    return ["9-12", "13-16"]
