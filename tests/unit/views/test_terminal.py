"""The terminal's metric table names the runs that missed a pass threshold, as the page judged them."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Literal
from xml.etree import ElementTree

from agent_eval_action.models.results import DatasetResult, QuestionResult, Results
from agent_eval_action.models.scores import MetricSummary, Score
from agent_eval_action.text.markdown import p_words
from agent_eval_action.views.background import Background
from agent_eval_action.views.junit import write_junit
from agent_eval_action.views.page import page_of
from agent_eval_action.views.report import context as report_context
from agent_eval_action.views.terminal import dataset_table, render


def _results() -> Results:
    def run(qid: str, value: float | None, status: Literal["ok", "error"] = "ok") -> QuestionResult:
        return QuestionResult(id=qid, status=status, error="boom" if status == "error" else None, scores={"m": Score(value=value)})

    questions = [run("a", 0.9), run("b", 0.2), run("c", None), run("d", 0.1, "error"), run("e", 0.4)]
    summary = {"m": MetricSummary(mean=0.5, n=4, unscored=1, pass_threshold=0.5)}
    return Results(datasets=[DatasetResult(path="d.csv", name="d", format="csv", summary=summary, questions=questions)])


def test_the_failing_runs_are_judged_once_on_the_page_and_listed_in_the_datasets_order() -> None:
    results = _results()  # made by hand, not by the scorer: the page judges its runs, once
    page = page_of(results, {"m": 0.5}, Background())
    (shown,) = page.datasets
    assert [(q.id, failed) for q, failed in shown.failed_runs] == [("b", ["m"]), ("e", ["m"])]
    assert shown.missed == [[], ["m"], [], ["m"], ["m"]]  # d ended in an error: not a failing run
    lines = dataset_table(shown, {"m": 0.5})
    assert [line for line in lines if line.startswith("  failed")] == ["  failed b: m", "  failed e: m"]
    assert "  failed b: m" in render(results, {"m": 0.5}, Background()).splitlines()


def test_every_view_lists_the_runs_as_scoring_judged_them(tmp_path: Path) -> None:
    """A run's missed thresholds are judged once, when its scores are summarized; the terminal,
    the comment's page, report.html and junit.xml read that judgement and never judge again."""
    results = _results()
    questions = results.datasets[0].questions
    questions[1].failed_thresholds = []  # b: judged as passing (a threshold since changed, say)
    questions[0].failed_thresholds = ["m"]  # a: judged as failing
    page = page_of(results, {"m": 0.5}, Background())
    (shown,) = page.datasets
    assert [(q.id, failed) for q, failed in shown.failed_runs] == [("a", ["m"]), ("e", ["m"])]
    failed_lines = [line for line in render(page).splitlines() if line.startswith("  failed")]
    assert failed_lines == ["  failed a: m", "  failed e: m"]
    suite = ElementTree.parse(write_junit(page, tmp_path / "junit.xml")).getroot()[0]
    failing = sorted(case.get("name") or "" for case in suite if case.find("failure") is not None)
    assert failing == ["a m", "e m"]
    (panel,) = report_context(page)["panels"]
    assert {q.question.id: q.failed for q in panel.questions} == {"a": ["m"], "b": [], "c": [], "d": ["m"], "e": ["m"]}


def test_a_run_s_judgement_is_written_only_when_it_missed_a_threshold() -> None:
    """results.json stays as it was for runs that missed nothing: an empty judgement is left out."""
    passed = QuestionResult(id="a", scores={"m": Score(value=0.9)}, failed_thresholds=[])
    failed = QuestionResult(id="b", scores={"m": Score(value=0.1)}, failed_thresholds=["m"])
    assert "failed_thresholds" not in passed.model_dump_json()
    assert json.loads(failed.model_dump_json())["failed_thresholds"] == ["m"]
    assert QuestionResult.model_validate_json(failed.model_dump_json()).failed_thresholds == ["m"]


def test_failing_runs_are_told_by_question_and_known_failures_once() -> None:
    """40 questions that miss tool_call_precision on the base too, 5 runs each, and one added
    question that fails: the terminal listed every run ("q0 (tool_call_precision), q0 run 1 (...),
    ... and 185 more") and called the added one "no worse than on the base"."""
    from agent_eval_action import compare
    from agent_eval_action.datasets import LoadedDataset
    from agent_eval_action.metrics import MetricContext
    from agent_eval_action.metrics.registry import default_pass_thresholds
    from agent_eval_action.scoring.scorer import Scorer

    scorer = Scorer.for_names(["tool_usage_accuracy", "tool_call_precision"], MetricContext(), pass_thresholds=default_pass_thresholds({}))

    def side(added: bool) -> Results:
        scores = {"tool_usage_accuracy": Score(value=1.0), "tool_call_precision": Score(value=0.5)}
        runs = [QuestionResult(id=f"q{i}", run=k, scores=scores) for i in range(40) for k in range(5)]
        lost = {"tool_usage_accuracy": Score(value=0.0), "tool_call_precision": Score(value=1.0)}
        runs += [QuestionResult(id="q_new_fails_01", run=k, scores=lost) for k in range(5)] if added else []
        loaded = LoadedDataset(path="d.json", name="d", format="golden", records=iter(()))
        return Results(datasets=[scorer.summarize(loaded, runs)])

    base = side(added=False)
    results = compare(side(added=True), base)
    lines = render(results, background=Background(base_runs={"d.json": base.datasets[0]})).splitlines()
    # The comment too names each question once, with how many of its runs failed.
    from agent_eval_action.views.page import build
    from agent_eval_action.views.render import Renderer, view

    comment = Renderer().render("comment.md.j2", view(build(results, background=Background(base_runs={"d.json": base.datasets[0]}))))
    assert "41 questions need a look in d (no worse than on the base branch; 1 of them added by this change)" in comment
    assert "**q0** (5 of 5 runs): below threshold on tool\\_call\\_precision" in comment
    assert "(run 1)" not in comment
    assert "  not paired: every metric: 1 question this change adds (q_new_fails_01)" in lines
    assert "  tool_call_precision below its threshold on the base too: 40 questions (q0, q1, q10 and 37 more)" in lines
    assert "  failing, added by this change (no base to compare with): q_new_fails_01 (5 of 5 runs: tool_usage_accuracy)" in lines
    assert not [line for line in lines if "run 1" in line or "no worse than on the base" in line]


def test_a_long_label_wraps_its_items_whole_under_it() -> None:
    """The timings line wrapped inside an item ("time_to_first_response 1.00 s ->" / "0.10 s, ...")
    at 33 characters a line beside its 77-character label: now each item stays whole, under the
    label when they do not fit beside it, and a short list stays beside it."""
    from agent_eval_action.views.terminal import _wrapped

    label = "  timings, for information (they move with the machine; no rule gates them): "
    items = [
        f"{name} 1.00 s -> 0.10 s"
        for name in ("latency", "turn_latency", "llm_time", "tool_time", "time_to_first_response", "invocation_duration_v1")
    ]
    lines = _wrapped(label, items)
    assert lines[0] == label.rstrip() and all(line.startswith("    ") and len(line) <= 110 for line in lines[1:])
    assert ", ".join(line.strip().rstrip(",") for line in lines[1:]) == ", ".join(items)
    assert _wrapped(label, items[:1]) == [label + items[0]]


def test_the_concurrency_line_says_when_the_limit_held_nothing_back() -> None:
    """ "at most 5 question runs in flight; the limit rose to 16" read as a contradiction: five
    questions were all the run had, so it says so."""
    from agent_eval_action.models.results import RunStats
    from agent_eval_action.views.notes import run_line

    few = Results(run=RunStats(concurrency="auto", max_in_flight=5, reached=16, final=16, ceiling=64))
    assert run_line(few) == "concurrency auto: at most 5 question runs in flight, all it had ready; the limit rose to 16 (of at most 64)"
    held = Results(run=RunStats(concurrency="auto", max_in_flight=16, reached=16, final=16, ceiling=64))
    assert run_line(held) == "concurrency auto: at most 16 question runs in flight; the limit rose to 16 (of at most 64)"


def test_an_error_that_many_runs_ended_in_is_said_once_with_the_runs() -> None:
    """An outage ended every run with the same words: the table said them once a question (eight
    times the same line); each error now comes once, naming its first runs and counting the rest."""
    down = "not run: the model API failed 8 attempts in a row (last: ConnectError: Name or service not known)"
    errored = [QuestionResult(id=f"q{i}", status="error", error=down) for i in range(8)]
    errored.insert(3, QuestionResult(id="q_own", run=2, status="error", error="ValueError: bad item"))
    results = Results(datasets=[DatasetResult(path="d.json", name="d", format="golden", questions=errored)])
    (shown,) = page_of(results, {}, Background()).datasets
    lines = [line for line in dataset_table(shown) if "error in" in line]
    assert lines == [
        f"  error in 8 runs (q0, q1, q2, q3, q4 and 3 more), each: {down}",
        "  error in q_own (run 2): ValueError: bad item",
    ]
    # Past the errors shown, the rest are counted, errors and runs.
    many = [QuestionResult(id=f"q{i}", status="error", error=f"E{i % 12}") for i in range(24)]
    (shown,) = page_of(
        Results(datasets=[DatasetResult(path="d.json", name="d", format="golden", questions=many)]), {}, Background()
    ).datasets
    lines = [line for line in dataset_table(shown) if "error" in line][1:]  # after the title
    assert lines[0] == "  error in 2 runs (q0, q12), each: E0"
    assert lines[-1] == "  ... and 2 more errors in 4 runs (see results.json)"
    assert len(lines) == 11


def test_a_dataset_with_no_run_scored_says_nothing_was_compared_not_that_nothing_moved() -> None:
    """An interrupted check whose every run was skipped said "nothing moved" of a table it could
    not fill; a dataset whose runs were scored and held says that still."""
    from agent_eval_action.models.verdicts import DatasetComparison

    skipped = [QuestionResult(id=f"q{i}", status="skipped", skip_reason="interrupted") for i in range(3)]
    summary = {"m": MetricSummary(mean=None, n=0, unscored=3)}
    comparison = DatasetComparison(dataset="d", path="d.json", status="compared")
    results = Results(
        datasets=[DatasetResult(path="d.json", name="d", format="golden", summary=summary, questions=skipped)], comparison=[comparison]
    )
    (shown,) = page_of(results, {}, Background()).datasets
    assert shown.still == "nothing compared: no run was scored"
    assert "  nothing compared: no run was scored" in render(results, {}, Background()).splitlines()
    held = _results()
    (shown,) = page_of(held, {"m": 0.5}, Background()).datasets
    assert shown.still == "nothing moved"


def test_a_p_value_is_worded_alike_in_the_headline_and_in_the_gates_line() -> None:
    """0 of 30 runs against 10 of 10: the gate's line said "p < 0.000001" and the headline, of
    the same test, "p < 0.001" (each view had its own formatter)."""
    from agent_eval_action.models.verdicts import GateFailure, QuestionTest
    from agent_eval_action.views.headline import _fall_rates

    p = 1 / math.comb(40, 10)
    test = QuestionTest(id="q", runs=30, passes=0, baseline_runs=10, baseline_passes=10, p=p, level=0.000625, decision="failed")
    failure = GateFailure(rule="question_fall", message="", metric="m", question="q")
    assert _fall_rates(test, failure) == "0 of 30 runs, 10 of 10 on the base (p < 0.000001)"
    assert p_words(p) == "p < 0.000001" and p_words(1 / 3003) == "p < 0.001" and p_words(0.0035) == "p = 0.0035"
