"""The customer profile, loaded into the session state before the first turn."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Product(BaseModel):
    product_id: str
    name: str
    quantity: int


class Customer(BaseModel):
    account_number: str
    customer_id: str
    customer_first_name: str
    customer_last_name: str
    email: str
    loyalty_points: int
    cart: list[Product] = Field(default_factory=list)

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)

    @staticmethod
    def get_customer(current_customer_id: str) -> Customer:
        """A mock CRM lookup: always Alex Johnson."""
        return Customer(
            account_number="428765091",
            customer_id=current_customer_id,
            customer_first_name="Alex",
            customer_last_name="Johnson",
            email="alex.johnson@example.com",
            loyalty_points=133,
            cart=[Product(product_id="soil-123", name="Standard Potting Soil", quantity=1)],
        )
