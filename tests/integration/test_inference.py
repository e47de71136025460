"""Inference apart from scoring (issue 25): each step callable alone with typed values, and no
module switch a command-line run leaves set for a library call after it."""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

import agent_eval_action as aea
from agent_eval_action.cli.main import main
from agent_eval_action.config import Config
from agent_eval_action.datasets import Record, load_dataset
from agent_eval_action.models.questions import Question
from agent_eval_action.models.traces import Trace
from agent_eval_action.run.inference import Inference, InferenceRequest, InferenceResult
from agent_eval_action.service.evaluation import Evaluation
from agent_eval_action.system.processes import RUNS_PER_WORKER
from tests.helpers.factories import csv_row, customer_service_runs, write_csv

ROOT = Path(__file__).resolve().parents[2]
APPS = ROOT / "tests" / "apps"
QUESTIONS = {
    "q_hello": ("Hi", "Hello! How can I help?"),
    "q_hours": ("When are you open?", "We are open from 9 to 5."),
}


def golden(path: Path) -> Path:
    cases = [
        {
            "id": qid,
            "user_inputs": [said],
            "agents_evaluated": ["desk"],
            "reference_data": {"reference_response": answer, "reference_tool_interactions": []},
        }
        for qid, (said, answer) in QUESTIONS.items()
    ]
    path.write_text(json.dumps({"golden_questions": cases}))
    return path


def test_a_recorded_inference_result_scores_without_running_anything(in_tmp: Path) -> None:
    evaluation = Evaluation(Config(progress="never"))  # no agent: anything that tried to run one would fail
    try:
        plan = evaluation.plan(load_dataset(str(golden(in_tmp / "golden.json"))))
        assert isinstance(plan.request, InferenceRequest)
        assert [r.question.id for r in plan.request.records] == list(QUESTIONS) and plan.request.question_runs == 2
        # The agent's answers, recorded elsewhere: the first right, the second wrong.
        answers = {"q_hello": QUESTIONS["q_hello"][1], "q_hours": "Sorry, I don't know."}
        recorded = InferenceResult(
            records=[
                Record(question=r.question, trace=Trace(final_response=answers[r.question.id], tool_interactions=[]), run=0)
                for r in plan.request.records
            ]
        )
        done = evaluation.score(plan, recorded)
        assert done.problems == [] and done.result is not None
        scores = {q.id: q.scores["response_match"].value for q in done.result.questions}
        assert scores["q_hello"] == 1.0 and scores["q_hours"] is not None and scores["q_hours"] < 0.5
        assert evaluation.stats() is None  # nothing ran
        # The same file through the whole evaluation needs the agent it was never given.
        whole = evaluation.evaluate(str(in_tmp / "golden.json"))
        assert whole.result is None and "has no recorded runs; pass --agent" in whole.problems[0].message
    finally:
        evaluation.close()


def test_inference_alone_returns_each_questions_runs_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(APPS)
    inference = Inference(Config(agent="shop", in_process=True, progress="never", capture_spans=False), progress=sys.stderr)
    try:
        questions = [Question(id=f"q{i}", user_inputs=["hello"], agents_evaluated=["shop"]) for i in range(3)]
        result = inference.perform(InferenceRequest("shop", [Record(question=q) for q in questions], runs=2))
    finally:
        inference.close()
    assert [(r.question.id, r.run) for r in result.records] == [(f"q{i}", n) for i in range(3) for n in range(2)]
    assert all(r.trace is not None and r.trace.error is None and r.trace.final_response == "shop: hello" for r in result.records)
    assert result.base is None and result.model_calls is None  # no base's agent beside it, no model-call cache


def test_the_agent_starts_only_the_workers_its_questions_need() -> None:
    auto = Config()
    assert auto.agent_worker_count(8) == 1  # a few questions: one start of ADK, not one per CPU
    assert auto.agent_worker_count(RUNS_PER_WORKER * 100) == auto.processes()
    assert auto.agent_worker_count(None) == auto.processes()
    assert Config(workers=3).agent_worker_count(8) == 3  # a number the user set is that number
    assert Config(workers=3).processes() == 3


def _switches() -> dict[str, object]:
    """Every module-level flag and number of ours: what a module switch would be."""
    ours = [m for name, m in sys.modules.items() if name.startswith("agent_eval_action") and isinstance(m, ModuleType)]
    return {
        f"{m.__name__}.{key}": value
        for m in ours
        for key, value in vars(m).items()
        if key.isupper() and isinstance(value, bool | int | float | str)
    }


def test_a_command_line_run_leaves_no_switch_for_a_library_call_after_it(in_tmp: Path) -> None:
    runs = write_csv(in_tmp / "runs.csv", [csv_row(run) for run in customer_service_runs()])
    assert aea.evaluate(str(runs)).datasets  # every module scoring needs is imported
    before = _switches()
    assert main(["evaluate", str(runs), "--output-dir", str(in_tmp / "out"), "--progress", "never"]) == 0
    after = _switches()
    # The command line said what its own process does through the service call, not by a global.
    assert {key: after[key] for key in before} == before
    frozen = gc.get_freeze_count()
    results = aea.evaluate(str(runs))
    assert results.datasets and not results.problems
    assert gc.isenabled() and gc.get_freeze_count() == frozen  # a library call leaves the caller's collector alone
