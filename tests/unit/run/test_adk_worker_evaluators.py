"""The ADK judge worker makes ADK's LLM-judged evaluators without ADK's registry, whose import
brings the Vertex AI SDK (4-6 s a process): the classes are the registry's, the rubrics are
copied as ADK's local eval service copies them, and a judged criterion's request is answered
without the SDK ever imported."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from agent_eval_action.datasets.adk.config import ADK_JUDGED
from agent_eval_action.run.judges.adk_worker import JUDGE_EVALUATORS, copy_rubrics, evaluator_for

# Looked for, not imported: importing ADK's registry imports the Vertex AI SDK (3 s of CPU), which
# every test process paid as it collected this module; only the test that reads it pays it now.
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("google.adk.evaluation") is None or importlib.util.find_spec("vertexai") is None,
    reason="ADK's evaluation modules (and the Vertex AI SDK)",
)


def _metric(name: str) -> Any:
    from google.adk.evaluation.eval_config import EvalConfig, get_eval_metrics_from_config

    config = EvalConfig.model_validate({"criteria": {name: {"threshold": 0.5}}})
    (metric,) = [m for m in get_eval_metrics_from_config(config) if m.metric_name == name]
    return metric


def test_every_judged_criterion_gets_the_evaluator_adks_registry_gives() -> None:
    from google.adk.evaluation.metric_evaluator_registry import DEFAULT_METRIC_EVALUATOR_REGISTRY

    assert set(JUDGE_EVALUATORS) == set(ADK_JUDGED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ADK_JUDGED:
            metric = _metric(name)
            ours, theirs = evaluator_for(metric), DEFAULT_METRIC_EVALUATOR_REGISTRY.get_evaluator(eval_metric=metric)
            assert type(ours) is type(theirs), name
        # An ADK that moved an evaluator's module is served by its registry.
        moved = dict(JUDGE_EVALUATORS)
        JUDGE_EVALUATORS["final_response_match_v2"] = ("google.adk.evaluation.moved_away", "FinalResponseMatchV2Evaluator")
        try:
            metric = _metric("final_response_match_v2")
            assert type(evaluator_for(metric)) is type(DEFAULT_METRIC_EVALUATOR_REGISTRY.get_evaluator(eval_metric=metric))
        finally:
            JUDGE_EVALUATORS.update(moved)
        # Any other metric (a Vertex-backed one) is the registry's own.
        safety = _metric("safety_v1")
        assert type(evaluator_for(safety)) is type(DEFAULT_METRIC_EVALUATOR_REGISTRY.get_evaluator(eval_metric=safety))


def _invocations(rubrics: list[list[str]]) -> list[object]:
    from google.adk.evaluation.eval_case import Invocation
    from google.adk.evaluation.eval_rubrics import Rubric

    return [
        Invocation.model_validate(
            {
                "invocation_id": f"t{i}",
                "user_content": {"role": "user", "parts": [{"text": "hi"}]},
                "rubrics": [Rubric.model_validate({"rubric_id": r, "rubric_content": {"text_property": r}}) for r in ids] or None,
            }
        )
        for i, ids in enumerate(rubrics)
    ]


def test_rubrics_are_copied_as_adks_local_eval_service_copies_them() -> None:
    from google.adk.evaluation.eval_rubrics import Rubric
    from google.adk.evaluation.local_eval_service import (
        _copy_eval_case_rubrics_to_actual_invocations,
        _copy_invocation_rubrics_to_actual_invocations,
    )

    case = [Rubric.model_validate({"rubric_id": "polite", "rubric_content": {"text_property": "polite"}})]
    cases: list[tuple[list[list[str]], list[list[str]] | None]] = [
        ([[], []], [["a"], ["b"]]),
        ([["own"], []], [["x"], ["y"]]),
        ([[]], None),
    ]
    for actual_ids, expected_ids in cases:
        ours, theirs = _invocations(actual_ids), _invocations(actual_ids)
        expected = _invocations(expected_ids) if expected_ids is not None else None

        class Case:
            rubrics = case

        copy_rubrics(case, expected, ours)
        _copy_eval_case_rubrics_to_actual_invocations(Case(), theirs)  # type: ignore[arg-type]
        _copy_invocation_rubrics_to_actual_invocations(expected, theirs)  # type: ignore[arg-type]
        assert [i.model_dump() for i in ours] == [i.model_dump() for i in theirs]  # type: ignore[attr-defined]
    # A rubric id given twice is refused by both, in the same words.
    twice = [Rubric.model_validate({"rubric_id": "a", "rubric_content": {"text_property": "a"}})]
    with pytest.raises(ValueError, match="'a' already exists") as mine:
        copy_rubrics(twice, None, _invocations([["a"]]))

    class Twice:
        rubrics = twice

    with pytest.raises(ValueError) as adks:
        _copy_eval_case_rubrics_to_actual_invocations(Twice(), _invocations([["a"]]))  # type: ignore[arg-type]
    assert str(mine.value) == str(adks.value)


SCRIPT = """
import asyncio, json, sys
from agent_eval_action.run.judges.adk_worker import evaluate
turn = {"invocation_id": "t0", "user_content": {"role": "user", "parts": [{"text": "what does a rake cost"}]},
        "final_response": {"role": "model", "parts": [{"text": "A rake costs $25."}]}}
answer = asyncio.run(evaluate({"metric": sys.argv[1], "criterion": {"threshold": 0.5}, "actual": [turn], "expected": [turn], "answers": {},
    "case_rubrics": [{"rubric_id": "price", "rubric_content": {"text_property": "The response says the price."}, "type": "FINAL_RESPONSE_QUALITY"}]}))
print(json.dumps({"needs": len(answer.get("needs", [])), "error": answer.get("error"), "vertexai": "vertexai" in sys.modules}))
"""


@pytest.mark.parametrize("metric", ["final_response_match_v2", "rubric_based_final_response_quality_v1"])
def test_a_judged_criterion_is_asked_without_the_vertex_sdk_imported(metric: str) -> None:
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", SCRIPT, metric], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout.strip().splitlines()[-1])
    assert said["error"] is None and not said["vertexai"], said
    assert said["needs"] >= 1, said  # its judge's requests, for the caller to ask


def test_the_worker_started_ahead_answers_its_first_request_and_a_start_that_failed_is_said_then(tmp_path: Path) -> None:
    """ADK's evaluator process starts while the agent runs (``start``): its first request finds it
    ready; a process that could not start is said by that request, not raised in the thread."""
    from agent_eval_action.run.judges.adk import AdkJudgeWorker

    worker = AdkJudgeWorker()
    try:
        worker.start()
        assert worker._process is not None and worker._process.poll() is None  # running before any request
        # A request of its own in error (its invocation is not one), of a criterion whose module
        # imports without the Vertex AI SDK: an unknown metric would import ADK's whole registry
        # (3 s of CPU) to say so.
        request = {"metric": "final_response_match_v2", "criterion": {"threshold": 0.5}, "actual": [1], "expected": None, "answers": {}}
        answer = worker.ask(request)
        assert "Invocation" in answer["error"] and worker.broken is None  # the request's own error: the process is fine
    finally:
        worker.close()
    missing = AdkJudgeWorker(python=str(tmp_path / "no-python"))
    missing.start()
    said = missing.ask({"metric": "final_response_match_v2"})
    assert "no-python" in said["error"] and missing.broken == said["error"]
