"""Misspelt names: the closest known one ("did you mean `datasets`?"), and the pydantic model a
schema expects at an error's location (whose fields are the known names there)."""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Iterable
from typing import Any

# How alike a typed name and a known one must be (difflib's ratio) to be called a misspelling:
# `user_input` for `user_inputs` (0.95), `input_args` for `input_arguments` (0.8), `dataset` for
# `datasets` (0.93); `updated_datetime` is near no question key (at most 0.5).
CLOSE = 0.75
# A typed name that is the start of a known one, at least this share of it, is a cut-off spelling.
PREFIX = 0.6


def closest(name: str, known: Iterable[str], cutoff: float = CLOSE) -> str | None:
    """The known name ``name`` most likely misspells, or None when none is close."""
    candidates = [k for k in known if isinstance(k, str)]
    # The start of a known name, most of it: `input_args` of `input_arguments`, `reference_state`
    # of `reference_state_variables` (`reference` alone is a custom key of its own).
    prefixed = [k for k in candidates if k.startswith(name) and k != name and len(name) >= PREFIX * len(k)]
    found = sorted(prefixed, key=len)[:1] or difflib.get_close_matches(name, candidates, n=1, cutoff=cutoff)
    return found[0] if found else None


def did_you_mean(name: str, known: Iterable[str], cutoff: float = CLOSE) -> str:
    """`` (did you mean `X`?)`` for a misspelt name, else an empty string."""
    found = closest(name, known, cutoff)
    return f" (did you mean `{found}`?)" if found else ""


def field_names(model: Any) -> list[str]:
    """A pydantic model class's field names and their aliases."""
    names: list[str] = []
    for name, info in getattr(model, "model_fields", {}).items():
        names.append(name)
        if info.alias:
            names.append(info.alias)
    return names


def model_at(model: Any, loc: tuple[Any, ...]) -> type[Any] | None:
    """The pydantic model class ``model``'s schema expects at a pydantic error location."""
    node: Any = model
    for part in loc:
        node = _step(node, part)
        if node is None:
            return None
    node = unwrap(node)
    if typing.get_origin(node) in (typing.Union, types.UnionType):  # Optional[Model]
        members = [unwrap(a) for a in typing.get_args(node) if a is not type(None)]
        node = members[0] if len(members) == 1 else None
    return node if isinstance(node, type) and hasattr(node, "model_fields") else None


def unwrap(annotation: Any) -> Any:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _step(annotation: Any, part: Any) -> Any:
    annotation = unwrap(annotation)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        members = [unwrap(a) for a in args if a is not type(None)]
        named = [m for m in members if getattr(m, "__name__", None) == part]
        if named:
            return named[0]
        return _step(members[0], part) if len(members) == 1 else None
    if isinstance(annotation, type) and hasattr(annotation, "model_fields") and isinstance(part, str):
        for name, info in annotation.model_fields.items():
            if part in (name, info.alias):
                return info.annotation
        return None
    if origin in (list, set, frozenset) and isinstance(part, int) and args:
        return args[0]
    if origin is tuple and isinstance(part, int) and args:
        return args[0] if len(args) == 2 and args[1] is Ellipsis else (args[part] if part < len(args) else None)
    if origin is dict and isinstance(part, str) and len(args) == 2:
        return args[1]
    return None
