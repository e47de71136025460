"""The base of every stored model: unknown fields refused, figures rounded as stored."""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict

# Stored figures keep 6 decimals: reruns write identical files, and no metric needs more.
DIGITS = 6


def rounded(value: Any) -> Any:
    """A stored figure rounded; one that is not finite is unknown (None): results are JSON, which
    has no NaN or Infinity, and the figures are computed so that none arises."""
    if isinstance(value, float):
        return round(value, DIGITS) if math.isfinite(value) else None
    if isinstance(value, tuple):
        each = tuple(rounded(v) for v in value)
        return None if None in each else each
    return value


class Stored(BaseModel):
    # Our own models refuse unknown fields: a typo in a stored file must not pass silently.
    model_config = ConfigDict(extra="forbid")
