"""What a metric gives: a run's score and a dataset's summary of a metric (the scoring stage's types)."""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator

from agent_eval_action.models.stored import DIGITS, Stored, filled, rounded

# Which way is better for a metric (config, registry and results all say it so).
Direction = Literal["higher", "lower", "neutral"]
# What a metric's figures are, which every view shows them in (declared where the metric is
# registered, or by a custom metric's ``unit``): "ratio" a share of 0..1 (a percentage, changes
# in points), "count" a number of things (tokens, calls), "seconds", "usd", "number" any other
# figure (shown as it is).
Unit = Literal["ratio", "count", "seconds", "usd", "number"]


# A score's details key saying the metric could not be computed for the run, and why (no judge,
# a judge that could not be reached, the judges' budget, a Vertex-backed ADK criterion): a
# criterion that gates then leaves the check unchecked (exit 3), never passed or failed on it.
NOT_COMPUTED = "not_computed"

_MISSING: Any = object()
_NO_DETAILS: Any = object()
_set_attribute = object.__setattr__
# The fields a score was given ("explanation" given, "details" given) -> the one set of their
# names every such score shares: pydantic keeps a set per model (216 bytes, more than the rest of
# a score), and a recorded table of 20,000 rows holds 780,000 scores. Never changed: pydantic adds
# a name to it only when a field is assigned, and a score assigned one first takes a set of its own.
# Never change a score's ``model_fields_set`` in place: it is every such score's.
GIVEN_FIELDS: dict[tuple[bool, bool], set[str]] = {
    (explained, detailed): {"value", *(["explanation"] if explained else []), *(["details"] if detailed else [])}
    for explained in (False, True)
    for detailed in (False, True)
}


class Score(Stored):
    """A metric's verdict on one question. ``value=None`` is unscored, with the reason in ``explanation``."""

    value: float | None
    explanation: str = ""
    details: dict[str, Any] = Field(default_factory=dict)

    def __init__(self, **data: Any) -> None:
        # Rounded where a score is made, not by a validator: results files and worker payloads
        # hold rounded values already, and parsing thousands of them must not call Python per score.
        value = data.get("value")
        if isinstance(value, float):
            if math.isfinite(value):
                # A whole number (a count, a 0/1 match) is its own rounding: round() is half a score's cost.
                if not value.is_integer():
                    data["value"] = round(value, DIGITS)
            else:  # a metric's NaN or infinity is no score: unscored, saying what it gave
                data["value"] = None
                data["explanation"] = f"not a finite number ({value}): {data.get('explanation') or 'no explanation'}"
        # A recorded row makes some 40 scores: their fields are set as validation would leave them
        # when they are of their exact types already (half a score's cost), else validated.
        if len(data) == 1 + ("explanation" in data) + ("details" in data):
            fields = _exact(data.get("value", _MISSING), data.get("explanation", ""), data.get("details", _NO_DETAILS))
            if fields is not None:
                filled(self, fields, GIVEN_FIELDS["explanation" in data, "details" in data])
                return
        super().__init__(**data)

    def __setattr__(self, name: str, value: Any) -> None:
        # Copy on write: the fields set may be one every score shares (GIVEN_FIELDS).
        _set_attribute(self, "__pydantic_fields_set__", set(self.__pydantic_fields_set__))
        super().__setattr__(name, value)


def _exact(value: Any, explanation: Any, details: Any) -> dict[str, Any] | None:
    """A score's fields as validation leaves them, when each is of its exact type already: a float
    (rounded) or None, a text, a dict with text keys (copied; ``_NO_DETAILS``: none given); None
    when pydantic is to validate them."""
    if not ((value is None or type(value) is float) and type(explanation) is str):
        return None
    if details is _NO_DETAILS:
        details = {}
    elif type(details) is dict:
        details = dict(details)
        for key in details:
            if type(key) is not str:
                return None
    else:
        return None
    return {"value": value, "explanation": explanation, "details": details}


_new = object.__new__


def scored(value: float | None, explanation: str, details: dict[str, Any] | None = None) -> Score:
    """``Score(value=value, explanation=explanation, details=details)`` (``details`` None: none
    given), the same score at half the cost: the built-in metrics make some 40 a recorded row, and
    half of a ``Score(...)`` is the call through the model's class with its dict of keywords."""
    if value is None or (type(value) is float and math.isfinite(value)):
        figure = value if value is None or value.is_integer() else round(value, DIGITS)
        fields = _exact(figure, explanation, _NO_DETAILS if details is None else details)
        if fields is not None:
            return filled(_new(Score), fields, GIVEN_FIELDS[True, details is not None])
    # Another type, no finite number, or parts to validate: as Score() makes it.
    return Score(value=value, explanation=explanation, **({} if details is None else {"details": details}))


class MetricSummary(Stored):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    mean: float | None
    n: int
    unscored: int
    stdev: float | None = None
    ci95: tuple[float, float] | None = None
    direction: Direction = "higher"
    # "reference", "trace" or "judge": which gate rules apply by default. Stored so compare and
    # gate need only the results (None in files written before it was).
    kind: Literal["reference", "trace", "judge"] | None = None
    # The metric's unit, stored so that every view of the results shows its figures so (None in
    # files written before it was: the registry's unit, else a ratio).
    unit: Unit | None = None
    unscored_reasons: dict[str, int] = Field(default_factory=dict)
    p50: float | None = None
    p90: float | None = None
    max: float | None = None
    # With a pass threshold: the share of scored runs that pass, and (runs > 1) the share of
    # questions whose every run passes, pass^k.
    pass_rate: float | None = None
    pass_hat_k: float | None = None
    # The threshold the pass rate was judged with (config, dataset criteria or default): every view
    # names the failing runs by it, from the results alone.
    pass_threshold: float | None = None
    runs: int = 1

    _round_figures = field_validator("mean", "stdev", "ci95", "p50", "p90", "max", "pass_rate", "pass_hat_k")(
        classmethod(lambda cls, v: rounded(v))
    )


class JudgeUsage(Stored):
    """What judging cost, apart from the agent's own tokens."""

    calls: int = 0
    cached: int = 0
    failed: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
