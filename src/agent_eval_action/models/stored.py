"""The base of every stored model: unknown fields refused, figures rounded as stored."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, TypeVar

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


M = TypeVar("M", bound=BaseModel)
_set_attribute = object.__setattr__
_set_fields = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def filled(model: M, fields: dict[str, Any], fields_set: set[str]) -> M:
    """``model`` (new, not validated) with its fields and the set of those given, as
    model_construct leaves a model of ours: no extra fields, no private attributes. Each pydantic
    slot is set by its descriptor."""
    _set_attribute(model, "__dict__", fields)
    _set_fields(model, fields_set)
    _set_extra(model, None)
    _set_private(model, None)
    return model


# Per model: every field's name with its default, in declared order (a placeholder where the
# default is made per model or there is none); the fields whose default is made, with what makes
# it; and the required fields.
_Plan = tuple[dict[str, Any], tuple[tuple[str, Callable[[], Any]], ...], tuple[str, ...]]
_PLANS: dict[type[BaseModel], _Plan] = {}
_IMMUTABLE = (type(None), bool, int, float, str, bytes)
_REQUIRED: Any = object()  # in a plan: the field's value is given or made, never this


def constructed(cls: type[M], **values: Any) -> M:
    """What ``cls.model_construct(**values)`` makes from trusted values (the fields given are set,
    the others at their defaults, in their declared order), at a fraction of its cost:
    model_construct looks at each field's aliases and default on every call, and the scorer makes
    several models a row (a QuestionResult, a model call, a trajectory step). For our stored models
    (no aliases, private attributes or post-init); a name that is not a field, or a required field
    left out, is a TypeError."""
    defaults, made, required = _PLANS.get(cls) or _plan(cls)
    # A required field left out is named first, then a name that is no field (as ever).
    for name in required:
        if name not in values:
            raise TypeError(f"{cls.__name__}: the required field {name!r} is not given")
    # The defaults' copy updated: every given field keeps its declared place, and a name that is no
    # field is added at the end, which the count tells.
    fields = defaults.copy()
    fields.update(values)
    if len(fields) != len(defaults):
        raise TypeError(f"{cls.__name__} has no field {', '.join(repr(name) for name in values if name not in defaults)}")
    for name, make in made:
        if name not in values:
            fields[name] = make()
    return filled(cls.__new__(cls), fields, set(values))


def _plan(cls: type[M]) -> _Plan:
    if cls.__private_attributes__ or cls.__pydantic_post_init__ or cls.__pydantic_root_model__ or cls.model_config.get("extra") == "allow":
        raise TypeError(f"{cls.__name__} is made by model_construct, not constructed()")
    defaults: dict[str, Any] = {}
    made: list[tuple[str, Callable[[], Any]]] = []
    required: list[str] = []
    for name, field in cls.__pydantic_fields__.items():
        if field.alias not in (None, name) or field.validation_alias not in (None, name):
            raise TypeError(f"{cls.__name__}.{name} has an alias: made by model_construct, not constructed()")
        defaults[name] = _REQUIRED
        if field.default_factory is not None:
            if field.default_factory_takes_validated_data:
                raise TypeError(f"{cls.__name__}.{name}'s default factory takes the data: made by model_construct")
            made.append((name, field.default_factory))  # type: ignore[arg-type]  # takes no data (above)
        elif field.is_required():
            required.append(name)
        elif isinstance(field.default, _IMMUTABLE):
            defaults[name] = field.default
        else:  # a mutable default: pydantic gives each model a copy of it
            made.append((name, functools.partial(field.get_default, call_default_factory=True)))
    _PLANS[cls] = (defaults, tuple(made), tuple(required))
    return _PLANS[cls]
