"""The metric registry: one small unit per metric, with a name, a direction and the unit of its figures."""

from __future__ import annotations

import contextvars
import functools
import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, cast

from agent_eval_action.models.questions import Question
from agent_eval_action.models.scores import Direction, Score, Unit, scored
from agent_eval_action.models.traces import Trace


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
    # What its figures are (models.scores.Unit): the one place every view and the gate learn it.
    unit: Unit = "ratio"
    # Slow set-up (imports) the scorer may do ahead, while the agent runs.
    prepare: Callable[[], object] | None = None
    # The producer's ``metric.*`` columns it falls back on (without the prefix), in its unit:
    # what a cell of them holds is read by that unit (``recorded_unit``).
    recorded: tuple[str, ...] = ()

    @property
    def timing(self) -> bool:
        """Measured in wall-clock time (its unit is seconds): it moves with the machine and its
        load, so a run on another machine or hour is no evidence of a change; the views show it
        for information unless a gate rule names it."""
        return self.unit == "seconds"


REGISTRY: dict[str, Metric] = {}


def register(
    name: str,
    direction: Direction,
    description: str,
    kind: Literal["reference", "trace"] = "reference",
    prepare: Callable[[], object] | None = None,
    *,
    unit: Unit = "ratio",
    recorded: tuple[str, ...] = (),
) -> Callable[[ScoreFn], ScoreFn]:
    """Decorator that adds a scoring function to :data:`REGISTRY` under ``name``."""

    def wrap(fn: ScoreFn) -> ScoreFn:
        if name in REGISTRY:
            raise ValueError(f"metric {name!r} registered twice")
        REGISTRY[name] = Metric(
            name=name, direction=direction, description=description, score=fn, kind=kind, prepare=prepare, unit=unit, recorded=recorded
        )
        return fn

    return wrap


# The units of metrics outside the registry: the config's custom metrics, and those a results file
# recorded (a custom metric of the run that wrote it). One run's, not the process's: a library user
# (or a test) running twice in one process must not see the first run's units in the second.
_DECLARED: contextvars.ContextVar[dict[str, Unit] | None] = contextvars.ContextVar("agent_eval_declared_units", default=None)
_OUTSIDE_ANY_RUN: dict[str, Unit] = {}
F = TypeVar("F", bound=Callable[..., Any])  # declared by a caller of the lower layers, outside :func:`one_run`


def _declared() -> dict[str, Unit]:
    found = _DECLARED.get()
    return found if found is not None else _OUTSIDE_ANY_RUN


def one_run(function: F) -> F:
    """``function`` (a public entry point: a command, an API call) with units of its own: what it
    declares is forgotten when it returns."""

    @functools.wraps(function)
    def scoped(*args: Any, **kwargs: Any) -> Any:
        token = _DECLARED.set(dict(_DECLARED.get() or {}))  # an outer run's units hold inside, never after
        try:
            return function(*args, **kwargs)
        finally:
            _DECLARED.reset(token)

    return cast(F, scoped)


def declare_unit(name: str, unit: Unit) -> None:
    """Records the unit of a metric the registry does not hold (a custom metric's ``unit``)."""
    if name not in REGISTRY:
        _declared()[name] = unit


def unit_of(name: str) -> Unit:
    """The one answer to "what are this metric's figures": as registered or declared, else a
    ratio (ADK's scores, the judges' and recorded ``score.*`` columns are all 0..1)."""
    found = REGISTRY.get(name)
    return found.unit if found is not None else _declared().get(name, "ratio")


def recorded_unit(column: str) -> Unit | None:
    """The unit of a producer's ``metric.*`` column (``duration_sec``: seconds) as the metric that
    falls back on it declares it; None when no metric reads the column."""
    return next((metric.unit for metric in REGISTRY.values() if column in metric.recorded), None)


# The run whose metrics are being computed: the scorer starts each run's with :func:`new_run`.
# What several metrics of one run compute alike (:func:`per_run`) is computed once for it.
_RUNS = itertools.count(1)
_run = 0

R = TypeVar("R")


def new_run() -> None:
    """The next metric calls are of another run (or of the same objects changed since)."""
    global _run
    _run = next(_RUNS)


def per_run(compute: Callable[[Question, Trace], R]) -> Callable[[Question, Trace], R]:
    """``compute`` done once per run: asked again of the same question and trace while the scorer
    scores that run, it gives what it gave (shared: its callers read it and never change it). The
    memo holds the objects it was computed for, so no other object can take their identity; each
    entry is one tuple, read whole, so a thread scoring another run never gets this one's."""
    memo: list[tuple[int, Question, Trace, R] | None] = [None]

    @functools.wraps(compute)
    def shared(question: Question, trace: Trace) -> R:
        entry, run = memo[0], _run
        if entry is not None and entry[0] == run and entry[1] is question and entry[2] is trace:
            return entry[3]
        value = compute(question, trace)
        memo[0] = (run, question, trace, value)
        return value

    return shared


def unscored(reason: str, **details: object) -> Score:
    return scored(value=None, explanation=reason, details=details)


# A run passes our ROUGE-L response_match at 0.8, the level ADK's own response match passes at
# (0.5 let "apple costs 11" pass for "apple costs 1"): a pass threshold like every reference metric's, so its falls are decided
# question by question from runs (verdict/noise.py), not by one run's score against five.
RESPONSE_MATCH_PASS = 0.8
# ADK's default criteria (evaluation/eval_config.py: _DEFAULT_EVAL_CONFIG), when no test_config.json gives any.
ADK_DEFAULT_CRITERIA = {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.8}


def default_pass_thresholds(overrides: dict[str, float]) -> dict[str, float]:
    """A run passes an exact reference metric (tools, trajectory, state) when it is perfect (1.0),
    our similarity score (ROUGE-L ``response_match``) at :data:`RESPONSE_MATCH_PASS`, unless the
    config says otherwise; ADK's metrics keep ADK's own defaults (tool_trajectory_avg_score 1.0,
    response_match_score 0.8)."""
    thresholds = {name: 1.0 for name, metric in REGISTRY.items() if metric.kind == "reference" and metric.direction == "higher"}
    thresholds["response_match"] = RESPONSE_MATCH_PASS
    thresholds.update(ADK_DEFAULT_CRITERIA)
    thresholds.update(overrides)
    return thresholds
