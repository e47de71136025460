"""Figures in their metric's unit, and values on one line: how every view words a number.

Pure: it reads only the metric registry's units (a custom metric's declared one). A figure alone
is text/figures.py's, which the verdict's prose uses too: both say a number alike.
"""

from __future__ import annotations

import json
from typing import Any

from agent_eval_action.models.scores import Unit
from agent_eval_action.text.figures import NBSP, figure

SPARK = "▁▂▃▄▅▆▇█"
# Characters of a value (tool arguments, a state variable, an answer) in a side-by-side row.
VALUE_CHARS = 160


def unit(metric: str) -> Unit:
    """The metric's unit, as the registry (or a custom metric's ``unit``) declares it."""
    from agent_eval_action.metrics.registry import unit_of  # the metric modules: only when a figure is shown

    return unit_of(metric)


def fmt(value: float | None, metric: str = "") -> str:
    """A figure in the metric's unit: seconds, counts, dollars, plain numbers, else a percentage of
    0..1 (the one formatter, text/figures.py, with the metric's unit)."""
    return figure(value, unit(metric) if metric and value is not None else "ratio")


def is_share(metric: str) -> bool:
    return not metric or unit(metric) == "ratio"


def signed(value: float | None, metric: str = "") -> str:
    """A change in the metric's unit: shares in points (``-40 pts``, with a minus sign), others as figures."""
    if value is None:
        return "–"
    if abs(value) < 1e-9:
        return "±0"
    text = fmt(abs(value), metric)
    if not any(digit in text for digit in "123456789"):
        text = _small(abs(value), metric)  # a rounded "-0.00 s" would read as no change
    if is_share(metric):
        text = text.replace("%", f"{NBSP}pts")
    return ("+" if value > 0 else "−") + text


def _small(value: float, metric: str) -> str:
    """A change too small for the metric's usual precision, with two significant digits."""
    kind = unit(metric) if metric else "ratio"
    if kind == "seconds":
        return f"{value:.2g}{NBSP}s"
    if kind == "usd":
        return f"${value:.2g}"
    if kind in ("count", "number"):
        return f"{value:.2g}"
    return f"{value * 100:.2g}%"


def ci(interval: tuple[float, float] | list[float] | None, metric: str = "") -> str:
    if not interval:
        return "–"
    return f"[{signed(interval[0], metric)}, {signed(interval[1], metric)}]"


def limit_words(max_regression: float | str | None, metric: str) -> str:
    """A max_regression as the gate stored it, with its rule: "the 10 pts allowed (max_regression 0.1)"."""
    if max_regression is None:
        return "the allowed amount"
    return f"the {allowed(max_regression, metric)} allowed (max_regression {max_regression})"


def allowed(max_regression: float | str, metric: str) -> str:
    """``max_regression`` as a reader reads it: "5 pts", "20% of the baseline", "0.50 s"."""
    if isinstance(max_regression, str):
        return f"{max_regression.strip()} of the baseline"
    return signed(float(max_regression), metric).lstrip("+")


def spark(values: list[float | None], metric: str) -> str:
    """A unicode sparkline; shares on a fixed 0..100% scale (noise must not look like a cliff),
    other units from 0 (or their minimum) to their maximum. ``·`` where a value is missing."""
    known = [v for v in values if v is not None]
    if not known:
        return ""
    low, high = (0.0, 1.0) if is_share(metric) else (min(0.0, *known), max(known))
    span = high / 2 - low / 2  # halves: the span of -1e308 and 1e308 is past the float range
    out = []
    for value in values:
        if value is None:
            out.append("·")
            continue
        level = 0 if span <= 0 else round((min(max(value, low), high) / 2 - low / 2) / span * (len(SPARK) - 1))
        out.append(SPARK[level])
    return "".join(out)


def compact(value: Any, limit: int = VALUE_CHARS) -> str:
    """A value on one line: strings as they are, anything else as JSON; cut to ``limit``."""
    if isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
