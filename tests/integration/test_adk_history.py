"""ADK eval history in every real shape: written with ADK's own models from a real run of the shop
test app (a ``Runner`` with scripted models), as ADK 2.x writes it with and without the session, as
older ADK wrote it (bare tool uses, every null Part field spelt out), and a look-alike from
another framework that ADK's schema refuses."""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import pytest

from agent_eval_action.datasets import Record, load_dataset
from agent_eval_action.metrics import REGISTRY, MetricContext
from agent_eval_action.system.errors import DatasetError
from tests.helpers.adk_files import (
    ADK_ROUGE,
    ADK_ROUGE_PER_TURN,
    ADK_TRAJECTORY,
    ADK_TRAJECTORY_PER_TURN,
    ANSWERS,
    INPUTS,
    expected_invocations,
    history,
    old_history,
    run_shop,
)
from tests.helpers.commands import run_cli

# Inputs must lie inside the working directory's repository: work in tmp_path, as a user would.
pytestmark = pytest.mark.usefixtures("in_tmp")


ROOT = Path(__file__).resolve().parents[2]


def load(path: Path) -> tuple[list[Record], list[DatasetError], list[str]]:
    dataset = load_dataset(str(path))
    items = list(dataset.records)
    return [i for i in items if isinstance(i, Record)], [i for i in items if isinstance(i, DatasetError)], dataset.warnings


def score(name: str, record: Record, criteria: dict[str, Any] | None = None) -> Any:
    assert record.trace is not None
    return REGISTRY[name].score(record.question, record.trace, MetricContext(criteria=criteria or {}))


def test_adk_values_recorded_here_are_adks() -> None:
    try:
        from google.adk.evaluation.final_response_match_v1 import RougeEvaluator
        from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator
    except ImportError as error:
        pytest.skip(f"ADK's evaluator classes do not import here ({error}); ADK_TRAJECTORY and ADK_ROUGE were recorded from them")
    from google.adk.evaluation.eval_metrics import EvalMetric
    from google.adk.evaluation.evaluation_generator import EvaluationGenerator

    actual = EvaluationGenerator.convert_events_to_eval_invocations(run_shop()[0])
    trajectory = TrajectoryEvaluator(threshold=1.0).evaluate_invocations(actual, expected_invocations())
    rouge = RougeEvaluator(EvalMetric(metric_name="response_match_score", threshold=0.5)).evaluate_invocations(
        actual, expected_invocations()
    )
    assert trajectory.overall_score == ADK_TRAJECTORY and round(rouge.overall_score or 0, 6) == ADK_ROUGE
    assert [r.score for r in trajectory.per_invocation_results] == ADK_TRAJECTORY_PER_TURN
    assert [round(r.score or 0, 9) for r in rouge.per_invocation_results] == [round(v, 9) for v in ADK_ROUGE_PER_TURN]


def test_adk_2x_history_without_session_takes_model_calls_from_invocation_events(tmp_path: Path) -> None:
    (record,), bad, warnings = load(history(tmp_path / "shop.evalset_result.json", with_session=False))
    assert not bad
    assert warnings == []  # its Vertex-backed safety_v1 is gated on with the score ADK recorded
    trace = record.trace
    assert trace is not None and trace.error is None
    assert record.question.user_inputs == INPUTS
    assert record.question.reference_data.turn_references == ANSWERS
    # Six model calls (one per tool call and per answer) with their usage, from the invocation events.
    assert trace.llm_calls is not None and len(trace.llm_calls) == 6
    assert [c.input_tokens for c in trace.llm_calls] == [40] * 6 and all(c.usage_recorded for c in trace.llm_calls)
    assert score("llm_calls", record).value == 6.0 and score("input_tokens", record).value == 240.0
    assert [(c.tool_name, c.turn) for c in trace.tool_interactions or []] == [
        ("lookup_order", 0), ("transfer_to_agent", 1), ("lookup_order", 1), ("refund", 1)
    ]  # fmt: skip
    assert [(s.kind, s.name) for s in trace.trajectory or []] == [
        ("agent", "shop"), ("tool", "lookup_order"), ("tool", "transfer_to_agent"), ("agent", "refunds"), ("tool", "lookup_order"), ("tool", "refund"),
    ]  # fmt: skip
    assert [t.response for t in trace.turns] == ["shop: where is my order", "Refunded 10 on order A1."]
    # No session: the final state and the timing are unknown, and say so.
    assert score("state_management_fidelity", record).value is None
    assert score("latency", record).explanation == "the eval history records no duration for its invocations"
    # ADK's metrics as ADK computed them, and the scores ADK recorded beside them.
    assert score("tool_trajectory_avg_score", record).value == ADK_TRAJECTORY
    assert score("response_match_score", record).value == ADK_ROUGE
    agreement = score("adk_agreement", record)
    assert agreement.value == 1.0 and agreement.explanation == "2 of 2 recorded ADK score(s) reproduced"
    assert trace.recorded_metrics == {
        "score.tool_trajectory_avg_score": 0.5,
        "score.response_match_score": 0.463636,
        "score.safety_v1": 1.0,
    }


def test_adk_2x_history_with_session(tmp_path: Path) -> None:
    path = history(tmp_path / "shop.evalset_result.json", with_session=True)
    dataset = load_dataset(str(path))
    assert dataset.criteria == {"tool_trajectory_avg_score": 1.0, "response_match_score": 0.5, "safety_v1": 0.8}
    (record,) = [r for r in dataset.records if isinstance(r, Record)]
    trace = record.trace
    assert trace is not None and trace.final_state == {"last_order": "A1", "lookups": 2, "refund": {"order_id": "A1", "amount": 10}}
    assert record.question.agents_evaluated == ["shop"] and trace.llm_calls is not None and len(trace.llm_calls) == 6
    assert score("adk_agreement", record).value == 1.0


def test_older_history_with_bare_tool_uses(tmp_path: Path) -> None:
    (record,), bad, _ = load(old_history(tmp_path / "shop_1.evalset_result.json"))
    assert not bad
    trace = record.trace
    assert trace is not None
    # What the file does not hold is unscored with the reason, never 0.
    why = "the eval history keeps no session, and its invocations list tool calls only: model calls and tokens are not recorded"
    for name in ("llm_calls", "input_tokens", "output_tokens", "total_tokens", "cost_usd"):
        result = score(name, record)
        assert (result.value, result.explanation) == (None, why), name
    assert score("state_management_fidelity", record).value is None
    # No author is made up for steps the file does not attribute.
    assert [(s.kind, s.name) for s in trace.trajectory or []] == [
        ("tool", "lookup_order"), ("tool", "transfer_to_agent"), ("tool", "lookup_order"), ("tool", "refund")
    ]  # fmt: skip
    assert trace.sub_agent_trace == [] and trace.final_response == "Refunded 10 on order A1."
    assert all(call.agent is None for call in trace.tool_interactions or [])
    from agent_eval_action.datasets.convert import run_row

    assert run_row(record)["trace_summary"] == ["tool:lookup_order", "tool:transfer_to_agent", "tool:lookup_order", "tool:refund"]
    assert score("tool_trajectory_avg_score", record, {"tool_trajectory_avg_score": {"threshold": 0.8}}).value == ADK_TRAJECTORY
    assert score("adk_agreement", record).value == 1.0
    assert score("tool_calls", record).value == 4.0  # the reference names the transfer: it counts
    # ADK's efficiency reports on bare tool uses, as ADK's own evaluators read the file's invocations:
    # the tool calls a turn; model calls and tokens not available (None, never 0).
    from google.adk.evaluation import _efficiency_evaluators as adk
    from google.adk.evaluation.eval_case import Invocation

    path = tmp_path / "shop_1.evalset_result.json"
    (case,) = json.loads(path.read_text())["eval_case_results"]
    invocations = [Invocation.model_validate(item["actual_invocation"]) for item in case["eval_metric_result_per_invocation"]]
    tools = adk._ToolCallCountV1Evaluator().evaluate_invocations(invocations)
    assert not isinstance(tools, Awaitable)
    assert score("tool_call_count_v1", record).value == tools.overall_score == 2.0
    for name, evaluator in (
        ("inference_call_count_v1", adk._InferenceCallCountV1Evaluator()),
        ("token_usage_v1", adk._TokenUsageV1Evaluator()),
    ):
        theirs = evaluator.evaluate_invocations(invocations)
        assert not isinstance(theirs, Awaitable)
        assert score(name, record).value is None and theirs.overall_score is None, name


def test_adk_1x_invocation_events_without_usage(tmp_path: Path) -> None:
    """Older ADK's InvocationEvent held author and content only, and left the final response out."""
    path = history(tmp_path / "h.evalset_result.json", with_session=False)
    data = json.loads(path.read_text())
    for item in data["eval_case_results"][0]["eval_metric_result_per_invocation"]:
        events = item["actual_invocation"]["intermediate_data"]["invocation_events"]
        item["actual_invocation"]["intermediate_data"]["invocation_events"] = [
            {"author": e["author"], "content": e["content"]} for e in events if e.get("content")
        ]
    path.write_text(json.dumps(data))
    (record,), _, _ = load(path)
    trace = record.trace
    assert trace is not None and trace.llm_calls is not None
    assert len(trace.llm_calls) == 6  # four tool-calling model turns and two answers, counted from the events
    assert score("input_tokens", record).explanation == "token usage not recorded for 6 of 6 model call(s)"
    assert [(s.kind, s.name) for s in trace.trajectory or []][:2] == [("agent", "shop"), ("tool", "lookup_order")]


LOOK_ALIKE = {
    "eval_set_result_id": "calc_run",
    "eval_set_id": "calc",
    "eval_case_results": [
        {
            "eval_id": "add",
            "final_eval_status": "passed",
            "overall_eval_metric_results": [{"metric_name": "tool_trajectory_avg_score", "score": 1.0, "eval_status": "passed"}],
            "eval_metric_result_per_invocation": [
                {
                    "actual_invocation": {
                        "userContent": {"role": "user", "content": "calc add 2 3"},
                        "intermediate_data": {"tool_uses": [{"name": "add", "args": {"a": 2, "b": 3}}]},
                    },
                    "expected_invocation": {
                        "userContent": {"role": "user", "content": "calc add 2 3"},
                        "intermediate_data": {"tool_uses": [{"name": "add", "args": {"a": 2, "b": 3}}]},
                    },
                }
            ],
            "session_id": "s1",
        },
        {
            "eval_id": "sub",
            "final_eval_status": 1,
            "overall_eval_metric_results": [],
            "eval_metric_result_per_invocation": [
                {
                    "actual_invocation": {"userContent": {"role": "user", "content": "calc sub 5 3"}},
                    "expected_invocation": {"userContent": {"role": "user", "parts": [{"text": "calc sub 5 3"}]}},
                }
            ],
            "session_id": "s2",
        },
        {
            "eval_id": "empty",
            "final_eval_status": 1,
            "overall_eval_metric_results": [],
            "eval_metric_result_per_invocation": [{"actual_invocation": {"userContent": {"role": "user", "parts": []}}}],
            "session_id": "s3",
        },
    ],
}


def test_a_look_alike_is_refused_case_by_case_with_the_path(tmp_path: Path) -> None:
    path = tmp_path / "calc.evalset_result.json"
    path.write_text(json.dumps(LOOK_ALIKE))
    good, bad, _ = load(path)
    assert good == []
    assert [e.message() for e in bad] == [
        f"{path}, question 'add', at $.eval_case_results[0].final_eval_status: input should be 1, 2, 3 or 4 (an eval case result: ADK's schema refuses it)",
        f"{path}, question 'sub', at $.eval_case_results[1].eval_metric_result_per_invocation[0].actual_invocation.userContent.content: "
        "not a field of ADK's schema (an eval case result: ADK's schema refuses it)",
        f"{path}, question 'empty', at $.eval_case_results[2].eval_metric_result_per_invocation[0].actual_invocation.user_content: "
        "no text: a question needs the user's input",
    ]
    broken = tmp_path / "top.evalset_result.json"
    broken.write_text(json.dumps({"eval_set_id": "calc", "eval_case_results": []}))
    with pytest.raises(DatasetError, match=r"at \$\.eval_set_result_id: required field is missing \(an eval set result"):
        load_dataset(str(broken))


def test_convert_refuses_the_look_alike_and_writes_no_empty_question(tmp_path: Path) -> None:
    path = tmp_path / "calc.evalset_result.json"
    path.write_text(json.dumps(LOOK_ALIKE))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    target = tmp_path / "out.jsonl"
    done = run_cli(["convert", str(path), "--to", "jsonl", "-o", str(target)], cwd=tmp_path, env=env)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "question 'add', at $.eval_case_results[0].final_eval_status" in done.stderr and "Traceback" not in done.stderr
    assert '"user_inputs": [""]' not in (target.read_text() if target.exists() else "")


def test_a_copy_keeps_its_history_run_numbers(tmp_path: Path) -> None:
    path = history(tmp_path / "h.evalset_result.json", with_session=False)
    data = json.loads(path.read_text())
    data["eval_case_results"].append(copy.deepcopy(data["eval_case_results"][0]))
    path.write_text(json.dumps(data))
    good, _, _ = load(path)
    assert [(r.question.id, r.run) for r in good] == [("refund_case", 0), ("refund_case", 1)]
