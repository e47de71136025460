"""One run-table row mapped to a question and its trace: the status in each shape producers
write it, ``adk_score.*`` / ``score.*`` / ``metric.*`` figures, latency_data as a tree or as the
seed pipeline's list of invocations, turn_scores, the user's turns from the session, and the
cells that fail a row (with the row and column named) or only warn."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_eval_action.datasets.tabular.rows import row_to_run
from agent_eval_action.models.questions import Question
from agent_eval_action.models.traces import Trace
from agent_eval_action.system.errors import DatasetError
from tests.helpers import seed_pipeline as seed

PATH = "runs.csv"


def run(row: dict[str, Any], warnings: list[str] | None = None) -> tuple[Question, Trace]:
    question, trace, *_ = row_to_run(PATH, "row 1", {"question_id": "q1", "user_inputs": '["hi"]', **row}, warnings)
    return question, trace


@pytest.mark.parametrize(
    "status",
    [
        '{"boolean": "failed", "error_message": "quota exhausted"}',  # JSON text: the interactions step
        "{'boolean': 'failed', 'error_message': 'quota exhausted'}",  # Python's repr: a CSV written by pandas
        {"boolean": "failed", "error_message": "quota exhausted"},  # an object: JSONL
    ],
)
def test_a_failed_status_carries_its_message_in_every_shape(status: Any) -> None:
    assert run({"status": status})[1].error == "quota exhausted"


def test_status_words() -> None:
    assert run({"status": '{"boolean": "success"}'})[1].error is None
    assert run({"status": "Completed"})[1].error is None
    assert run({"status": "timeout"})[1].error == "recorded status 'timeout'"
    assert run({"status": "timeout", "error": "took 300 s"})[1].error == "took 300 s"
    skipped = run({"status": "skipped"})[1]
    assert (skipped.skipped, skipped.error) == ("recorded as skipped", None)


def test_recorded_figures_by_their_prefix() -> None:
    _, trace = run(
        {"adk_score.safety_v1": "1.0", "score.hallucinations_v1": 0.75, "metric.turn_count": "3", "metric.tool_calls": "NaN", "other": "5"}
    )
    # adk_score.NAME is kept as score.NAME; metric.NAME without its prefix; NaN is not measured.
    assert trace.recorded_metrics == {"score.safety_v1": 1.0, "score.hallucinations_v1": 0.75, "turn_count": 3.0}


def test_an_infinite_figure_fails_the_row_naming_its_column() -> None:
    with pytest.raises(DatasetError) as raised:
        run({"metric.turn_count": "Infinity"})
    assert raised.value.pointer == "row 1, column metric.turn_count"
    assert raised.value.question_id == "q1"


def test_text_in_a_figure_column_is_left_out_with_one_warning() -> None:
    warnings: list[str] = []
    run({"score.safety_v1": "n/a"}, warnings)
    run({"score.safety_v1": "unknown"}, warnings)
    assert warnings == [f"{PATH}: column 'score.safety_v1' holds values that are not numbers: they are left out"]


def test_latency_data_as_the_seed_pipeline_writes_it_times_each_turn() -> None:
    invocations = [
        {"name": "invocation", "duration_seconds": 2.5, "children": []},
        {"name": "invocation", "duration_seconds": 4.0, "children": []},
    ]
    _, trace = run({"user_inputs": '["a", "b"]', "latency_data": json.dumps(invocations)})
    assert (trace.latency_s, trace.latency_source) == (6.5, "latency_data")
    assert [turn.duration_s for turn in trace.turns] == [2.5, 4.0]
    assert [turn.user_input for turn in trace.turns] == ["a", "b"]


def test_latency_data_as_a_tree_with_turns() -> None:
    tree = {"duration_seconds": 5, "children": [{"name": "turn 1", "duration_seconds": 2}, {"name": "turn 2", "duration_seconds": 3}]}
    _, trace = run({"user_inputs": '["a", "b"]', "latency_data": json.dumps(tree)})
    assert trace.latency_s == 5.0
    assert [turn.duration_s for turn in trace.turns] == [2.0, 3.0]


def test_latency_that_is_nan_is_not_measured_and_infinite_latency_fails_the_row() -> None:
    assert run({"latency_data": '{"duration_seconds": NaN}'})[1].latency_s is None
    with pytest.raises(DatasetError) as raised:
        run({"latency_data": '{"duration_seconds": Infinity}'})
    assert raised.value.pointer == "row 1, column latency_data"


def test_turn_scores_kept_by_metric_or_left_out_with_a_warning() -> None:
    assert run({"turn_scores": '{"response_match_score": [0.5, null], "never": [null, null]}'})[1].recorded_turn_scores == {
        "response_match_score": [0.5, None]
    }
    warnings: list[str] = []
    assert run({"turn_scores": '{"response_match_score": "high"}'}, warnings)[1].recorded_turn_scores == {}
    assert warnings == [f"{PATH}: column 'turn_scores' holds values that are not {{metric: [score or null, ...]}}: they are left out"]


def test_a_row_without_an_id_fails() -> None:
    with pytest.raises(DatasetError) as raised:
        row_to_run(PATH, "row 7", {"user_inputs": '["hi"]'})
    assert (raised.value.pointer, raised.value.reason) == ("row 7", "no question_id or eval_id")


def test_a_broken_json_cell_names_its_column() -> None:
    with pytest.raises(DatasetError) as raised:
        run({"extracted_data": '{"tool_interactions": ['})
    assert raised.value.pointer == "row 1, column extracted_data"
    assert raised.value.reason.startswith("not valid JSON")


def test_the_users_turns_come_from_the_session_when_the_row_has_none() -> None:
    row = seed.sim_row()
    del row["user_inputs"]
    question, trace, session, _ = row_to_run(PATH, "line 1", row)
    assert question.user_inputs == ["Can I get a QR code for 15% off?", "Then 100, please."]
    assert session == row["session_id"]
    assert trace.final_response == "Done: 100 QR codes."


def test_a_row_without_user_inputs_or_a_session_warns_and_is_kept() -> None:
    warnings: list[str] = []
    question, *_ = row_to_run(PATH, "row 1", {"question_id": "q1", "final_response": "hello"}, warnings)
    assert question.user_inputs == []
    assert warnings == [f"{PATH}: a row without user_inputs (and no user message in its session) is scored without the user's turns"]


def test_extracted_calls_take_their_errors_and_turns_from_the_sessions_events() -> None:
    _, trace, *_ = row_to_run(PATH, "line 1", seed.sim_row())
    (call,) = trace.tool_interactions or []
    assert (call.tool_name, call.input_arguments, call.error, call.turn) == (
        "generate_qr_code",
        {"count": 500},
        "Over the limit of 100.",
        0,
    )


def test_a_transcript_names_the_agents_and_tools() -> None:
    transcript = "User: hi\ncustomer_service_agent: let me look\ntool_call: lookup_order(\ncustomer_service_agent: found it"
    _, trace = run({"trace_summary": transcript})
    assert [(step.kind, step.name) for step in trace.trajectory or []] == [("agent", "customer_service_agent"), ("tool", "lookup_order")]
    assert trace.root_agent == "customer_service_agent"
