"""Helpers for loosely typed JSON: camelCase or snake_case keys, JSON text inside strings."""

from __future__ import annotations

import json
from typing import Any


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def get(obj: Any, key: str, default: Any = None) -> Any:
    """``obj[key]`` under its snake_case or camelCase name (ADK writes either)."""
    if not isinstance(obj, dict):
        return default
    if key in obj:
        return obj[key]
    return obj.get(camel(key), default)


def parse_cell(value: Any) -> Any:
    """A table cell: JSON text becomes the object it encodes; empty cells become ``None``.

    Raises ``ValueError`` for text that starts like JSON but is not.
    """
    if value is None:
        return None
    if isinstance(value, float) and value != value:  # NaN from pandas
        return None
    if not isinstance(value, str):
        return value
    text = value.strip()
    if not text:
        return None
    if text[0] in "[{" or text in ("null", "true", "false"):
        return json.loads(text)
    return value


def maybe_json(value: Any) -> Any:
    """JSON text decoded where it is JSON; anything else unchanged."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def opt_str(value: Any) -> str | None:
    """A string field as recorded: text stays, numbers become text, anything else is absent."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None
