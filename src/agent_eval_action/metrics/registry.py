"""The metric registry: one small unit per metric, with a name and a direction."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agent_eval_action.models import Question, Score, Trace

Direction = Literal["higher", "lower", "neutral"]


@dataclass(frozen=True, kw_only=True)
class MetricContext:
    """What a metric may need beyond the question and the trace."""

    # USD per million tokens: {model_prefix: {"input": x, "output": y, "cached": z}}.
    prices: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    # The dataset's ADK criteria by metric name, as given (``{"threshold": 1.0, "match_type":
    # "IN_ORDER"}``): how ADK's own metrics are to be computed for it.
    criteria: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


ScoreFn = Callable[[Question, Trace, MetricContext], Score]


@dataclass(frozen=True, kw_only=True)
class Metric:
    name: str
    direction: Direction
    description: str
    score: ScoreFn
    # "reference": needs reference data; "trace": measured from what the agent did.
    kind: Literal["reference", "trace"] = "reference"


REGISTRY: dict[str, Metric] = {}


def register(
    name: str, direction: Direction, description: str, kind: Literal["reference", "trace"] = "reference"
) -> Callable[[ScoreFn], ScoreFn]:
    """Decorator that adds a scoring function to :data:`REGISTRY` under ``name``."""

    def wrap(fn: ScoreFn) -> ScoreFn:
        if name in REGISTRY:
            raise ValueError(f"metric {name!r} registered twice")
        REGISTRY[name] = Metric(name=name, direction=direction, description=description, score=fn, kind=kind)
        return fn

    return wrap


def unscored(reason: str, **details: object) -> Score:
    return Score(value=None, explanation=reason, details=dict(details))
