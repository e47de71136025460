"""ADK eval history read as recorded runs: written with ADK's own models from a real run of the
shop app (tests/helpers/adk_files.py), with and without the session, and as older ADK wrote it;
the references from the expected invocations, ADK's scores kept beside ours, bad durations and
scores refused with their place."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_eval_action.datasets import Record
from agent_eval_action.datasets.adk import load_eval_history
from agent_eval_action.system.errors import DatasetError
from tests.helpers.adk_files import (
    ADK_ROUGE,
    ADK_ROUGE_PER_TURN,
    ADK_TRAJECTORY,
    ADK_TRAJECTORY_PER_TURN,
    ANSWERS,
    INPUTS,
    history,
    old_history,
)


def read(path: Path, change: Any = None) -> tuple[list[Record | DatasetError], dict[str, float]]:
    data = json.loads(path.read_text())
    if change is not None:
        change(data["eval_case_results"][0])
    dataset = load_eval_history(str(path), data)
    return list(dataset.records), dataset.criteria


@pytest.fixture(scope="module")
def with_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return history(tmp_path_factory.mktemp("history") / "shop.evalset_result.json", with_session=True)


def test_a_case_is_a_recorded_run_with_its_references_and_adks_scores(with_session: Path) -> None:
    (record,), criteria = read(with_session)

    assert isinstance(record, Record) and record.trace is not None
    question, trace = record.question, record.trace
    assert (question.id, question.user_inputs, question.agents_evaluated) == ("refund_case", INPUTS, ["shop"])
    assert question.reference_data.reference_response == ANSWERS[-1]
    assert question.reference_data.turn_references == ANSWERS
    assert [call.tool_name for call in question.reference_data.reference_tool_interactions or []] == [
        "lookup_order", "transfer_to_agent", "refund"
    ]  # fmt: skip
    assert trace.recorded_metrics == {
        "score.tool_trajectory_avg_score": ADK_TRAJECTORY,
        "score.response_match_score": ADK_ROUGE,
        "score.safety_v1": 1.0,
    }
    assert trace.recorded_turn_scores == {"tool_trajectory_avg_score": ADK_TRAJECTORY_PER_TURN, "response_match_score": ADK_ROUGE_PER_TURN}
    # What the agent did: the refunds agent looks the order up again (the reference leaves that out).
    assert [call.tool_name for call in trace.tool_interactions or []] == ["lookup_order", "transfer_to_agent", "lookup_order", "refund"]
    # The shop app's scripted answers, one a turn (the references above are what was expected).
    assert [turn.response for turn in trace.turns] == ["shop: where is my order", "Refunded 10 on order A1."]
    assert trace.llm_calls and "llm_calls" not in trace.missing
    # The criteria ADK ran with, its Vertex-backed safety_v1 too (gated on ADK's recorded score).
    assert criteria == {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.5, "safety_v1": 0.8}


def test_without_a_session_the_invocations_make_the_run(tmp_path: Path) -> None:
    (record,), _ = read(history(tmp_path / "shop.evalset_result.json", with_session=False))

    assert isinstance(record, Record) and record.trace is not None
    assert [call.tool_name for call in record.trace.tool_interactions or []] == [
        "lookup_order",
        "transfer_to_agent",
        "lookup_order",
        "refund",
    ]
    assert record.trace.final_state is None
    assert record.trace.missing["state"] == "the eval history keeps no session state"


def test_older_adks_bare_tool_uses_say_model_calls_are_not_recorded(tmp_path: Path) -> None:
    (record,), _ = read(old_history(tmp_path / "old.evalset_result.json"))

    assert isinstance(record, Record) and record.trace is not None
    assert record.trace.llm_calls is None
    assert record.trace.missing["llm_calls"].startswith("the eval history keeps no session, and its invocations list tool calls only")
    assert record.question.user_inputs == INPUTS


def test_a_negative_duration_is_refused_at_its_place(with_session: Path) -> None:
    def backwards(case: dict[str, Any]) -> None:
        case["eval_metric_result_per_invocation"][1]["actual_invocation"]["duration"] = -2.0

    (error,), _ = read(with_session, backwards)
    assert isinstance(error, DatasetError)
    assert error.pointer == "$.eval_case_results[0].eval_metric_result_per_invocation[1].actual_invocation.duration"
    assert error.reason == "-2.0 is a negative duration: record the seconds the invocation took (0 or more)"


def test_an_invocation_without_the_users_text_is_refused(with_session: Path) -> None:
    def silent(case: dict[str, Any]) -> None:
        case["eval_metric_result_per_invocation"][0]["actual_invocation"]["user_content"]["parts"] = []

    (error,), _ = read(with_session, silent)
    assert isinstance(error, DatasetError) and error.question_id == "refund_case"
    assert error.pointer == "$.eval_case_results[0].eval_metric_result_per_invocation[0].actual_invocation.user_content"


def test_a_case_without_invocations_says_whether_adk_evaluated_it(with_session: Path) -> None:
    def empty(case: dict[str, Any]) -> None:
        case["eval_metric_result_per_invocation"] = []
        case["final_eval_status"] = 3  # NOT_EVALUATED

    (error,), _ = read(with_session, empty)
    assert isinstance(error, DatasetError)
    assert error.reason == "ADK did not evaluate this case: no invocations: a question needs the user's input"


def test_repeated_cases_of_one_id_are_runs(with_session: Path) -> None:
    data = json.loads(with_session.read_text())
    data["eval_case_results"] *= 2
    records = list(load_eval_history(str(with_session), data).records)
    assert [(r.question.id, r.run) for r in records if isinstance(r, Record)] == [("refund_case", 0), ("refund_case", 1)]
