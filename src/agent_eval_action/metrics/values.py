"""Comparing expected values with actual ones, as the reference-based metrics need it.

Numbers compare as numbers (``10 == 10.0``, with a small tolerance), strings compare
trimmed, dicts compare the expected keys only (recursively), lists element by element.
"""

from __future__ import annotations

import math
from typing import Any

REL_TOL = 1e-6
ABS_TOL = 1e-9


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def mismatches(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Every place where ``actual`` differs from ``expected``, as readable lines. Empty means equal."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path or 'value'}: expected an object, got {_show(actual)}"]
        out: list[str] = []
        for key, want in expected.items():
            sub = f"{path}.{key}" if path else str(key)
            if key not in actual:
                out.append(f"{sub}: missing (expected {_show(want)})")
            else:
                out.extend(mismatches(want, actual[key], sub))
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return [f"{path or 'value'}: expected a list, got {_show(actual)}"]
        if len(expected) != len(actual):
            return [f"{path or 'value'}: expected {len(expected)} items, got {len(actual)}"]
        out = []
        for i, (want, got) in enumerate(zip(expected, actual, strict=True)):
            out.extend(mismatches(want, got, f"{path}[{i}]"))
        return out
    if _is_number(expected) and _is_number(actual):
        if math.isclose(expected, actual, rel_tol=REL_TOL, abs_tol=ABS_TOL):
            return []
    elif isinstance(expected, str) and isinstance(actual, str):
        if expected.strip() == actual.strip():
            return []
    elif type(expected) is type(actual) and expected == actual:
        return []
    return [f"{path or 'value'}: expected {_show(expected)}, got {_show(actual)}"]


def matches(expected: Any, actual: Any) -> bool:
    return not mismatches(expected, actual)


def _show(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
