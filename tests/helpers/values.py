"""Small checks shared by the tests."""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


def present(value: T | None) -> T:
    """An optional field the test expects to be filled."""
    assert value is not None
    return value
