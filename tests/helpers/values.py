"""Small checks shared by the tests."""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


def present(value: T | None) -> T:
    """An optional field the test expects to be filled."""
    assert value is not None
    return value


def timings() -> frozenset[str]:
    """The metrics measured in wall-clock time (as registered): no two runs share their values."""
    from agent_eval_action.metrics import REGISTRY

    return frozenset(name for name, metric in REGISTRY.items() if metric.timing)
