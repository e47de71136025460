"""The terminal's metric table names the runs that missed a pass threshold, as the page judged them."""

from __future__ import annotations

from typing import Literal

from agent_eval_action.core.models import DatasetResult, MetricSummary, QuestionResult, Results, Score
from agent_eval_action.views.background import Background
from agent_eval_action.views.page import page_of
from agent_eval_action.views.terminal import dataset_table, render


def _results() -> Results:
    def run(qid: str, value: float | None, status: Literal["ok", "error"] = "ok") -> QuestionResult:
        return QuestionResult(id=qid, status=status, error="boom" if status == "error" else None, scores={"m": Score(value=value)})

    questions = [run("a", 0.9), run("b", 0.2), run("c", None), run("d", 0.1, "error"), run("e", 0.4)]
    summary = {"m": MetricSummary(mean=0.5, n=4, unscored=1, pass_threshold=0.5)}
    return Results(datasets=[DatasetResult(path="d.csv", name="d", format="csv", summary=summary, questions=questions)])


def test_the_failing_runs_are_judged_once_on_the_page_and_listed_in_the_datasets_order() -> None:
    results = _results()
    page = page_of(results, {"m": 0.5}, Background())
    (shown,) = page.datasets
    assert [(q.id, failed) for q, failed in shown.failed_runs] == [("b", ["m"]), ("e", ["m"])]
    # The terminal lists what the page judged, exactly as it judged the runs itself before.
    judged_here = dataset_table(results.datasets[0], {"m": 0.5})
    assert dataset_table(results.datasets[0], {"m": 0.5}, shown.failed_runs) == judged_here
    assert [line for line in judged_here if line.startswith("  failed")] == ["  failed b: m", "  failed e: m"]
    assert "  failed b: m" in render(results, {"m": 0.5}, Background()).splitlines()
