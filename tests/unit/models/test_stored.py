"""``constructed`` makes what pydantic's model_construct makes, for the models the scorer builds per row."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import Field

from agent_eval_action.models.questions import ReferenceData, ToolInteraction, TrajectoryStep
from agent_eval_action.models.results import QuestionResult
from agent_eval_action.models.scores import Score
from agent_eval_action.models.stored import Stored, constructed
from agent_eval_action.models.traces import Transcript, TranscriptTurn


class _Defaults(Stored):
    name: str
    tags: list[str] = Field(default_factory=list)
    mapping: dict[str, Any] = {}  # noqa: RUF012 - a mutable default, which pydantic copies for each model
    count: int = 3
    note: str | None = None


class _Aliased(Stored):
    name: str = Field(alias="Name")


SLOTS = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")

CASES: list[tuple[type[Stored], dict[str, Any]]] = [
    (TranscriptTurn, {"user": "hi", "response": None}),
    (TranscriptTurn, {}),
    (
        ToolInteraction,
        {"tool_name": "refund", "input_arguments": {"id": 1}, "output_result": [1], "agent": None, "error": None, "call_id": None},
    ),
    (ToolInteraction, {"tool_name": "refund"}),
    (
        Transcript,
        {"turns": [TranscriptTurn(user="hi")], "tool_calls": None, "trajectory": [TrajectoryStep(kind="agent", name="a")], "error": None},
    ),
    (Transcript, {"reference": ReferenceData(reference_trajectory=["a"])}),
    (QuestionResult, {"id": "q1", "run": 2, "scores": {"m": Score(value=1.0)}, "failed_thresholds": [], "content_key": "k"}),
    (_Defaults, {"name": "n"}),
    (_Defaults, {"name": "n", "tags": ["t"], "count": 4, "note": "x"}),
]


@pytest.mark.parametrize(("model", "values"), CASES)
def test_constructed_is_what_model_construct_makes(model: type[Stored], values: dict[str, Any]) -> None:
    made, theirs = constructed(model, **values), model.model_construct(**values)
    for slot in SLOTS:
        assert getattr(made, slot) == getattr(theirs, slot), slot
    assert list(made.__dict__) == list(theirs.__dict__)  # the declared order, as repr and iteration show it
    assert made == theirs and made.model_dump_json() == theirs.model_dump_json()
    assert made.model_fields_set is not constructed(model, **values).model_fields_set  # pydantic adds to it in place


def test_each_model_gets_its_own_mutable_defaults() -> None:
    first, second = constructed(_Defaults, name="a"), constructed(_Defaults, name="b")
    first.tags.append("x")
    first.mapping["k"] = 1
    assert second.tags == [] and second.mapping == {} and _Defaults(name="c").mapping == {}


def test_a_name_that_is_no_field_or_a_required_field_left_out_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="has no field 'tool'"):
        constructed(ToolInteraction, tool_name="refund", tool="refund")
    with pytest.raises(TypeError, match="the required field 'tool_name' is not given"):
        constructed(ToolInteraction)
    with pytest.raises(TypeError, match="the required field 'tool_name' is not given"):
        constructed(ToolInteraction, tool="refund")  # both wrong: the missing field is named first
    with pytest.raises(TypeError, match="has an alias"):
        constructed(_Aliased, name="x")
