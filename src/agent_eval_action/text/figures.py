"""A figure in its metric's unit, as plain text: the one formatter below the views (the verdict's
prose uses it; the views keep their own marks and colours around it)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent_eval_action.models.scores import Unit

NBSP = "\u00a0"
# 300 digits of a recorded 1e308 say nothing more than its exponent.
HUGE = 1e15


def figure(value: float | None, unit: Unit = "ratio") -> str:
    """``value`` in ``unit``: seconds, counts, dollars, plain numbers, else a percentage of 0..1."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if abs(value) >= HUGE:
        return f"{value:.3g}"
    if unit == "seconds":
        return f"{value:.2f}{NBSP}s"
    if unit in ("count", "number"):
        return f"{value:,.1f}" if value != int(value) else f"{value:,.0f}"
    if unit == "usd":
        return f"${value:.4f}" if abs(value) < 1 else f"${value:,.2f}"
    text = f"{value * 100:.1f}"
    return (text[:-2] if text.endswith(".0") else text) + "%"
