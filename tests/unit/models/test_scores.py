"""``scored`` makes the score ``Score(...)`` makes, whatever it is given, at half the cost."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from agent_eval_action.models.scores import Score, scored

NO_DETAILS = object()
VALUES: list[Any] = [
    None, 0.0, -0.0, 1.0, 4.0, 0.1234567891, -3.3333333333, 1e300, 1e-9, 2.0**60,
    float("inf"), float("-inf"), float("nan"),
    3, True, 2**60, "0.5", np.float64(0.123456789), np.float64(2.0), np.float64("nan"),
]  # fmt: skip
EXPLANATIONS: list[Any] = ["", "3 model call(s)", None, 3]
DETAILS: list[Any] = [NO_DETAILS, {}, {"source": "trace"}, {"per_turn": [1.0, 2.5]}, {1: 2}, [("a", 1)], "x"]


def _made(make: Any) -> tuple[Any, ...]:
    """What a maker gives: the score's fields with their types, the fields it was given, or its error."""
    try:
        score = make()
    except Exception as error:  # noqa: BLE001 - the error is what is compared
        return ("error", type(error).__name__, str(error))
    return (
        type(score),
        [(name, type(value), repr(value)) for name, value in score.__dict__.items()],
        sorted(score.model_fields_set),
        score.__pydantic_extra__,
        score.__pydantic_private__,
        score.model_dump_json(),
    )


def test_scored_makes_what_score_makes() -> None:
    differ = []
    for value, explanation, details in itertools.product(VALUES, EXPLANATIONS, DETAILS):
        given = {"value": value, "explanation": explanation, **({} if details is NO_DETAILS else {"details": details})}
        ours, theirs = _made(lambda: scored(value, explanation, None if details is NO_DETAILS else details)), _made(lambda: Score(**given))  # noqa: B023
        if ours != theirs:
            differ.append((given, ours, theirs))
    assert differ == []


def test_a_score_keeps_a_copy_of_its_details_and_shares_no_set_of_its_fields_it_changes() -> None:
    details = {"source": "trace"}
    first, second = scored(0.5, "half", details), scored(0.5, "half", details)
    details["source"] = "changed"
    assert first.details == {"source": "trace"} and first.details is not second.details
    first.explanation = "changed"  # a score changed after it is made changes alone
    assert second.model_fields_set == {"value", "explanation", "details"} and second.explanation == "half"
