"""Comparison and gate on simulated data: CI coverage, noise, directions, thresholds."""

from __future__ import annotations

import random

import pytest

from agent_eval_action.config import GateConfig, MetricRule
from agent_eval_action.datasets import LoadedDataset
from agent_eval_action.metrics import MetricContext
from agent_eval_action.models.results import DatasetResult, QuestionResult, Results
from agent_eval_action.models.scores import Score
from agent_eval_action.scoring.scorer import Scorer
from agent_eval_action.verdict.comparison import compare_dataset
from agent_eval_action.verdict.gate import evaluate_gate
from agent_eval_action.views.terminal import render
from tests.helpers.scored import dataset


def test_paired_ci_covers_a_known_shift_at_the_expected_rate() -> None:
    rng = random.Random(5)
    covered = 0
    trials = 200
    shift = -0.1
    for t in range(trials):
        base = {f"q{i}": [rng.uniform(0.3, 0.9)] for i in range(40)}
        now = {q: [v[0] + shift + rng.gauss(0, 0.1)] for q, v in base.items()}
        metric = compare_dataset(dataset(now), dataset(base), baseline_path="b", seed=t).metrics[0]
        assert metric.ci95 is not None
        covered += metric.ci95[0] <= shift <= metric.ci95[1]
    assert 0.88 <= covered / trials <= 0.99


def test_judge_sized_noise_does_not_fail_the_default_gate() -> None:
    """Judge scores on a 1-5 scale (0..1 after normalising) re-drawn around the same truth."""
    rng = random.Random(11)
    failed = 0
    trials = 200
    levels = [0.0, 0.25, 0.5, 0.75, 1.0]

    def judged(truth: float) -> float:
        return min(levels, key=lambda level: abs(level - (truth + rng.gauss(0, 0.2))))

    for t in range(trials):
        truth = {f"q{i}": rng.uniform(0.2, 1.0) for i in range(30)}
        base = dataset({q: [judged(v)] for q, v in truth.items()}, metric="judge_quality")
        now = dataset({q: [judged(v)] for q, v in truth.items()}, metric="judge_quality")
        comparison = compare_dataset(now, base, baseline_path="b", seed=t)
        gate = evaluate_gate(
            [now], [comparison], GateConfig(metrics={"judge_quality": MetricRule(max_regression=0.05)}), {"judge_quality": "judge"}
        )
        failed += not gate.passed
    assert failed / trials <= 0.05


def test_a_real_drop_fails_and_verdicts_follow_direction() -> None:
    base = dataset({f"q{i}": [1.0] for i in range(20)})
    now = dataset({f"q{i}": [1.0 if i % 2 else 0.0] for i in range(20)})
    comparison = compare_dataset(now, base, baseline_path="b")
    metric = comparison.metrics[0]
    assert metric.verdict == "regressed" and metric.delta == -0.5 and len(metric.drops) == 10
    gate = evaluate_gate([now], [comparison], GateConfig(), {"tool_usage_accuracy": "reference"})
    assert not gate.passed and len(gate.failures) == 11  # the mean, and ten dropped questions
    better = compare_dataset(base, now, baseline_path="b").metrics[0]
    assert better.verdict == "improved"


def test_latency_direction_from_registry() -> None:
    scorer = Scorer.for_names(["latency"], MetricContext())

    def ds(values: list[float]) -> DatasetResult:
        questions = [QuestionResult(id=f"q{i}", scores={"latency": Score(value=v)}) for i, v in enumerate(values)]
        return scorer.summarize(LoadedDataset(path="d", name="d", format="csv", records=iter(())), questions)

    slower = compare_dataset(ds([2.0, 2.2, 2.1, 2.4]), ds([1.0, 1.1, 1.0, 1.2]), baseline_path="b").metrics[0]
    assert slower.direction == "lower" and slower.verdict == "regressed"
    gate = evaluate_gate(
        [ds([2.0, 2.2, 2.1, 2.4])],
        [compare_dataset(ds([2.0, 2.2, 2.1, 2.4]), ds([1.0, 1.1, 1.0, 1.2]), baseline_path="b")],
        GateConfig(metrics={"latency": MetricRule(max_regression="50%")}),
        {"latency": "trace"},
    )
    assert not gate.passed and "regressed beyond max_regression 50%" in gate.failures[0].message
    lenient = evaluate_gate(
        [ds([2.0, 2.2, 2.1, 2.4])],
        [compare_dataset(ds([2.0, 2.2, 2.1, 2.4]), ds([1.0, 1.1, 1.0, 1.2]), baseline_path="b")],
        GateConfig(metrics={"latency": MetricRule(max_regression="150%")}),
        {"latency": "trace"},
    )
    assert lenient.passed
    assert evaluate_gate([ds([2.0, 2.2])], [], GateConfig(), {"latency": "trace"}).passed  # no default gate on timings
    # Against a baseline timed elsewhere (a PR check with compare-with = "baseline"), the rule is a note.
    elsewhere = evaluate_gate(
        [ds([2.0, 2.2, 2.1, 2.4])],
        [compare_dataset(ds([2.0, 2.2, 2.1, 2.4]), ds([1.0, 1.1, 1.0, 1.2]), baseline_path="b")],
        GateConfig(metrics={"latency": MetricRule(max_regression="50%")}),
        {"latency": "trace"},
        timings=False,
    )
    assert elsewhere.passed and "latency 1.075 -> 2.175 is worse than max_regression 50%, not gated" in elsewhere.notes[0]


def test_within_noise_is_a_note_unless_significance_is_off() -> None:
    base = dataset({"a": [1.0], "b": [0.0], "c": [1.0], "d": [0.0]})
    now = dataset({"a": [0.7], "b": [0.1], "c": [1.0], "d": [0.0]})  # paired diffs -0.3, +0.1, 0, 0: delta -0.05
    comparison = compare_dataset(now, base, baseline_path="b")
    metric = comparison.metrics[0]
    assert metric.delta == pytest.approx(-0.05) and metric.ci95 is not None and metric.ci95[1] > 0
    rule = GateConfig(max_regression=0.01, fail_on_question_drop=False)
    gate = evaluate_gate([now], [comparison], rule, {"tool_usage_accuracy": "reference"})
    assert gate.passed and "within noise" in gate.notes[0]
    strict = evaluate_gate(
        [now], [comparison], rule.model_copy(update={"require_significance": False}), {"tool_usage_accuracy": "reference"}
    )
    assert not strict.passed


def test_min_max_errors_and_new_or_removed() -> None:
    now = dataset({"a": [0.5], "b": [0.7]}, errors=2)
    base = dataset({"a": [0.5], "c": [0.9]})
    comparison = compare_dataset(now, base, baseline_path="b")
    assert comparison.added_questions == ["b", "err0", "err1"] and comparison.removed_questions == ["c"]
    assert comparison.metrics[0].n_shared == 1 and comparison.metrics[0].ci95 is None
    gate = evaluate_gate(
        [now],
        [comparison],
        GateConfig(max_errors=1, metrics={"tool_usage_accuracy": MetricRule(min=0.8)}),
        {"tool_usage_accuracy": "reference"},
    )
    assert not gate.passed
    text = "\n".join(f.message for f in gate.failures)
    assert "2 questions ended in an error (max_errors = 1)" in text
    assert "2 questions ended in an error, 0 on the base branch" in text
    assert "tool_usage_accuracy = 0.6 is below the minimum 0.8" in text
    new = compare_dataset(now, None, baseline_path=None)
    assert new.status == "new" and {m.verdict for m in new.metrics} == {"new"}


def test_runs_compare_per_question_means() -> None:
    base = dataset({"a": [1.0, 1.0, 1.0], "b": [1.0, 0.0, 1.0]})
    now = dataset({"a": [1.0, 0.0, 1.0], "b": [1.0, 0.0, 1.0]})
    metric = compare_dataset(now, base, baseline_path="b").metrics[0]
    assert metric.n_shared == 2 and metric.delta == pytest.approx(-1 / 6, abs=1e-6)


def test_runs_named_failing_are_the_runs_the_pass_rate_counts_failing() -> None:
    """One pass check for both: a lower-is-better metric passes at or under its threshold."""
    scorer = Scorer.for_names(["latency"], MetricContext(), pass_thresholds={"latency": 2.0})
    questions = [QuestionResult(id=qid, scores={"latency": Score(value=v)}) for qid, v in {"fast": 1.0, "edge": 2.0, "slow": 3.0}.items()]
    result = scorer.summarize(LoadedDataset(path="d.json", name="d", format="golden", records=iter(())), questions)
    assert result.summary["latency"].direction == "lower" and result.summary["latency"].pass_rate == pytest.approx(2 / 3)
    named = {q.id for q in result.questions if q.failed_thresholds}
    assert named == {"slow"}
    lines = [line.strip() for line in render(Results(datasets=[result]), {"latency": 2.0}).splitlines() if "failed " in line]
    assert lines == ["failed slow: latency"]


def test_the_gate_reads_each_metrics_kind_from_the_results() -> None:
    """A judged metric's question drop is a note, known from the results alone (no config, no prompt files)."""
    from agent_eval_action.verdict.gate import metric_kinds

    judged = Scorer.for_names(["tool_calls"], MetricContext(), extra={(f"q{i}", 0): {"tone": Score(value=1.0)} for i in range(4)})
    base = judged.summarize(_loaded(), [QuestionResult(id=f"q{i}", scores={"tone": Score(value=1.0)}) for i in range(4)])
    judged = Scorer.for_names(
        ["tool_calls"], MetricContext(), extra={(f"q{i}", 0): {"tone": Score(value=v)} for i, v in enumerate([0.0, 1.0, 1.0, 1.0])}
    )
    now = judged.summarize(
        _loaded(), [QuestionResult(id=f"q{i}", scores={"tone": Score(value=v)}) for i, v in enumerate([0.0, 1.0, 1.0, 1.0])]
    )
    assert now.summary["tone"].kind == "judge"
    kinds = metric_kinds(None, Results(datasets=[now]))
    gate = evaluate_gate([now], [compare_dataset(now, base, baseline_path="b")], GateConfig(), kinds)
    assert gate.passed and any("question q0 tone fell 1 -> 0" in note for note in gate.notes)
    assert not evaluate_gate([now], [compare_dataset(now, base, baseline_path="b")], GateConfig(), {"tone": "reference"}).passed


def _loaded() -> LoadedDataset:
    return LoadedDataset(path="d.json", name="d", format="golden", records=iter(()))
