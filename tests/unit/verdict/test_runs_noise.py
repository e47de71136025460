"""Several runs a side: the two-level bootstrap of the paired delta, flaky questions, and the
per-question guard that counts a flaky question's drop only beyond its own spread."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

import pytest

from agent_eval_action.config import GateConfig
from agent_eval_action.datasets import LoadedDataset
from agent_eval_action.metrics import MetricContext, default_pass_thresholds
from agent_eval_action.models.results import DatasetResult, QuestionResult, Results
from agent_eval_action.models.scores import Score
from agent_eval_action.models.verdicts import GateResult
from agent_eval_action.scoring.aggregate import bootstrap_mean_ci, paired_runs_ci, seed_for
from agent_eval_action.scoring.scorer import Scorer
from agent_eval_action.verdict.comparison import compare_dataset
from agent_eval_action.verdict.gate import evaluate_gate
from agent_eval_action.views.render import Renderer, view
from agent_eval_action.views.report import render_report
from agent_eval_action.views.terminal import render

METRIC = "tool_usage_accuracy"
KINDS = {METRIC: "reference"}
SCORER = Scorer.for_names([METRIC], MetricContext(), pass_thresholds=default_pass_thresholds({}))


def runs(values: Mapping[str, Sequence[float]]) -> DatasetResult:
    """A dataset whose question ``q`` has one run per value in ``values[q]`` (run 0, 1, ...)."""
    questions = [QuestionResult(id=qid, run=k, scores={METRIC: Score(value=v)}) for qid, vs in values.items() for k, v in enumerate(vs)]
    return SCORER.summarize(LoadedDataset(path="d.json", name="d", format="golden", records=iter(())), questions)


def gate_of(now: DatasetResult, base: DatasetResult, config: GateConfig | None = None) -> GateResult:
    return evaluate_gate([now], [compare_dataset(now, base, baseline_path="b")], config or GateConfig(), KINDS)


def test_one_run_a_side_gives_exactly_the_question_level_interval() -> None:
    rng = random.Random(3)
    before = {f"q{i}": [rng.choice([0.0, 0.5, 1.0])] for i in range(30)}
    now = {q: [rng.choice([0.0, 0.5, 1.0])] for q in before}
    metric = compare_dataset(runs(now), runs(before), baseline_path="b", seed=7).metrics[0]
    diffs = [now[q][0] - before[q][0] for q in sorted(before)]
    today = bootstrap_mean_ci(diffs, seed_for("d", METRIC, "delta", base=7))
    assert today is not None and metric.ci95 == (round(today[0], 6), round(today[1], 6))
    # The statistic itself, given one run a side, is the question-level bootstrap, draw for draw.
    assert paired_runs_ci([now[q] for q in before], [before[q] for q in before], 11) == bootstrap_mean_ci(diffs, 11)
    # Runs that agree within each question add no noise: the same interval as one run each.
    thrice = compare_dataset(
        runs({q: v * 3 for q, v in now.items()}), runs({q: v * 3 for q, v in before.items()}), baseline_path="b", seed=7
    )
    assert thrice.metrics[0].ci95 == metric.ci95 and thrice.metrics[0].delta == metric.delta


def test_a_question_flipping_between_runs_widens_the_interval() -> None:
    rng = random.Random(5)
    before = {f"q{i}": [1.0, 1.0, 1.0] for i in range(20)}
    now = {q: [1.0, 1.0, 1.0] for q in before}
    for q in list(before)[:6]:  # six questions that pass about half the time on both sides
        before[q] = [float(rng.random() < 0.5) for _ in range(3)]
        now[q] = [float(rng.random() < 0.5) for _ in range(3)]
    two_level = paired_runs_ci(list(now.values()), list(before.values()), 1)
    means = [sum(now[q]) / 3 - sum(before[q]) / 3 for q in before]
    one_level = bootstrap_mean_ci(means, 1)
    assert two_level is not None and one_level is not None
    assert two_level[1] - two_level[0] > (one_level[1] - one_level[0]) * 1.2


def test_a_lone_question_that_flips_does_not_fail_the_pr() -> None:
    """One question, passing every run on the base and 2 of 3 runs now: before, one shared
    question had no interval and any regression beyond max_regression failed."""
    now, base = runs({"q": [1.0, 0.0, 1.0]}), runs({"q": [1.0, 1.0, 1.0]})
    metric = compare_dataset(now, base, baseline_path="b").metrics[0]
    assert metric.delta == pytest.approx(-1 / 3, abs=1e-6)
    assert metric.ci95 is not None and metric.ci95[1] == 0.0 and metric.verdict == "unchanged"
    gate = gate_of(now, base)
    # A metric with a pass threshold: 2 of 3 against 3 of 3 is p = 0.5, cleared by the pass test,
    # which alone speaks of it (no note on its mean besides).
    assert gate.outcome == "passed" and not any("max_regression" in note for note in gate.notes)
    # The same fall in every run: p = 1/20, in doubt until re-runs decide it; stopped there (no
    # agent re-ran it), every run failing where every base run passed is never a pass: exit 3.
    stopped = gate_of(runs({"q": [0.0, 0.0, 0.0]}), base)
    assert stopped.outcome == "unchecked" and stopped.infrastructure and "re-runs stopped" in stopped.infrastructure
    assert any("q: 0 of 3 runs pass, 3 of 3 on the base" in line for line in stopped.unchecked)
    # Flaky on the base (2 of 3), failing every run here: in doubt, inconclusive as before.
    assert gate_of(runs({"q": [0.0, 0.0, 0.0]}), runs({"q": [1.0, 1.0, 0.0]})).outcome in ("inconclusive", "passed")
    assert gate_of(runs({"q": [0.0] * 9}), base).outcome == "failed"


def test_the_interval_is_seeded_and_does_not_depend_on_the_order_of_questions_or_runs() -> None:
    rng = random.Random(9)
    before = [[float(rng.random() < 0.7) for _ in range(3)] for _ in range(40)]
    now = [[float(rng.random() < 0.6) for _ in range(3)] for _ in range(40)]
    first = paired_runs_ci(now, before, 42)
    assert first == paired_runs_ci(now, before, 42)
    assert first != paired_runs_ci(now, before, 43)
    order = list(range(40))
    random.Random(1).shuffle(order)
    shuffled = paired_runs_ci([now[i][::-1] for i in order], [before[i][::-1] for i in order], 42)
    assert shuffled == first


def test_runs_of_different_counts_and_values_at_the_float_limit() -> None:
    """A base of one run beside three now (a stored baseline, K runs here), and scores near the
    largest float: the interval is finite and brackets the delta."""
    big = 1.5e308
    base = runs({"a": [big], "b": [-big], "c": [0.0]})
    now = runs({"a": [big, -big, big], "b": [-big, -big, big], "c": [0.0, big, 0.0]})
    metric = compare_dataset(now, base, baseline_path="b").metrics[0]
    assert metric.ci95 is not None and metric.delta is not None
    assert all(abs(v) < float("inf") for v in metric.ci95)
    assert metric.ci95[0] <= metric.delta <= metric.ci95[1]


def test_thousands_of_questions_with_flaky_runs() -> None:
    """The block path: 5,000 questions, three runs each, a tenth of them flaky."""
    rng = random.Random(2)
    before = [[1.0] * 3 if i % 10 else [float(rng.random() < 0.5) for _ in range(3)] for i in range(5000)]
    now = [[1.0] * 3 if i % 10 else [float(rng.random() < 0.5) for _ in range(3)] for i in range(5000)]
    ci = paired_runs_ci(now, before, 0)
    delta = sum(sum(a) / 3 - sum(b) / 3 for a, b in zip(now, before, strict=True)) / 5000
    assert ci is not None and ci[0] < delta < ci[1] and ci[1] - ci[0] < 0.05


def test_flaky_questions_are_recorded_with_their_pass_rate_on_each_side() -> None:
    base = runs({"steady": [1.0, 1.0, 1.0], "coin": [1.0, 1.0, 0.0], "new_coin": [1.0, 1.0, 1.0], "gone": [0.0, 1.0, 1.0]})
    now = runs({"steady": [1.0, 1.0, 1.0], "coin": [0.0, 1.0, 0.0], "new_coin": [1.0, 0.0, 1.0], "added": [0.0, 1.0]})
    comparison = compare_dataset(now, base, baseline_path="b")
    flaky = {(f.id, f.metric): f for f in comparison.flaky}
    assert sorted(flaky) == [("added", METRIC), ("coin", METRIC), ("gone", METRIC), ("new_coin", METRIC)]
    coin = flaky[("coin", METRIC)]
    assert coin.baseline_pass_rate == pytest.approx(2 / 3) and (coin.baseline_runs, coin.current_runs, coin.threshold) == (3, 3, 1.0)
    assert coin.current_pass_rate == pytest.approx(1 / 3)
    assert flaky[("added", METRIC)].baseline_pass_rate is None and flaky[("added", METRIC)].baseline_runs == 0
    assert flaky[("gone", METRIC)].current_pass_rate is None
    # Stored in results.json, read back the same.
    results = Results(datasets=[now], comparison=[comparison])
    assert Results.model_validate_json(results.model_dump_json()).comparison == [comparison]
    # A dataset without a baseline still says which of its questions are flaky here.
    assert [f.id for f in compare_dataset(now, None, baseline_path=None).flaky] == ["added", "coin", "new_coin"]
    # One run a side: nothing can disagree.
    single = compare_dataset(runs({"a": [1.0], "b": [0.0]}), runs({"a": [0.0], "b": [1.0]}), baseline_path="b")
    assert single.flaky == []


def test_the_flaky_mark_in_the_comment_the_summary_the_report_and_the_terminal() -> None:
    base = runs({f"q{i}": [1.0, 1.0, 1.0] for i in range(5)} | {"coin": [1.0, 1.0, 0.0]})
    now = runs({f"q{i}": [1.0, 1.0, 1.0] for i in range(5)} | {"coin": [0.0, 1.0, 0.0]})
    comparison = compare_dataset(now, base, baseline_path="b")
    gate = evaluate_gate([now], [comparison], GateConfig(), KINDS)
    results = Results(datasets=[now], comparison=[comparison], gate=gate)
    context = view(results)
    line = "coin (tool_usage_accuracy): 2/3 on base, 1/3 here"
    for name in ("comment.md.j2", "summary.md.j2"):
        text = Renderer().render(name, context)
        assert "🎲 **Flaky**" in text and line.replace("_", "\\_") in text, name
    assert "<li>🎲 coin (tool_usage_accuracy): 2/3 on base, 1/3 here</li>" in render_report(results)
    assert f"flaky: {line}" in render(results, {})


def test_a_thresholded_metrics_falls_go_through_the_per_question_test_not_the_drop_guard() -> None:
    """A metric with a pass threshold is decided question by question from the runs' passes
    (verdict/noise.py): a fall the runs cannot confirm is inconclusive, never a hard drop."""
    steady = {f"q{i}": [1.0, 1.0, 1.0] for i in range(9)}
    # Passing every run on the base, 1 of 3 now: p = 0.2, in doubt (a re-run would decide it).
    base, now = runs(steady | {"coin": [1.0, 1.0, 1.0]}), runs(steady | {"coin": [0.0, 1.0, 0.0]})
    drop = compare_dataset(now, base, baseline_path="b").metrics[0].drops[0]
    assert (drop.id, drop.spread) == ("coin", 1.0)
    gate = gate_of(now, base)
    assert gate.outcome == "inconclusive" and gate.passed and not gate.failures
    assert gate.inconclusive[0].startswith("d: question coin: 1 of 3 runs pass, 3 of 3 on the base: p = 0.2;")
    # Every run failing now, every run passing before, 3 a side: p = 1/20, not enough alone, and
    # never a pass for want of re-runs: could not be checked.
    assert gate_of(runs(steady | {"coin": [0.0, 0.0, 0.0]}), base).outcome == "unchecked"
    # Twenty-one failing runs against three passing ones: p = 1/2024, under the questions' half of
    # alpha shared by the ten questions that could fall: failed, in plain words.
    broken = gate_of(runs(steady | {"coin": [0.0] * 21}), base)
    assert [(f.rule, f.question) for f in broken.failures] == [("question_fall", "coin")]
    assert "coin: 0 of 21 runs pass, 3 of 3 on the base: p < 0.001" in broken.failures[0].message
    # The base failing as often as the PR: cleared.
    assert gate_of(runs(steady | {"coin": [0.0, 0.0, 0.0]}), runs(steady | {"coin": [1.0, 0.0, 0.0]})).outcome == "passed"


def test_the_chance_of_complete_falls_is_still_measured_beside_the_test() -> None:
    """Eight coin-toss questions beside twenty steady ones: the old guard's expected count of
    complete falls by chance is still reported; the per-question test decides."""
    steady = {f"s{i}": [1.0, 1.0, 1.0] for i in range(20)}
    coins_before = {f"c{i}": [1.0, 0.0, 1.0] for i in range(8)}
    coins_now = {f"c{i}": [0.0, 1.0, 0.0] if i % 2 else [1.0, 0.0, 1.0] for i in range(8)}
    base = runs(steady | coins_before | {"fell": [1.0, 1.0, 1.0]})
    now = runs(steady | coins_now | {"fell": [0.0, 0.0, 0.0]})
    metric = compare_dataset(now, base, baseline_path="b").metrics[0]
    assert metric.chance_falls == pytest.approx(5 / 64 + 4 * (2 / 3) ** 3 * (1 / 3) ** 3, abs=1e-6)
    gate = gate_of(now, base)
    assert gate.outcome == "unchecked" and any("question fell: 0 of 3 runs pass" in n for n in gate.unchecked)
    # Four questions falling at once: each alone is in doubt, together the dataset-wide test decides.
    four = {f"fell{i}": [1.0, 1.0, 1.0] for i in range(4)}
    broken = gate_of(runs(steady | coins_now | {key: [0.0, 0.0, 0.0] for key in four}), runs(steady | coins_before | four))
    assert [f.rule for f in broken.failures] == ["pass_rate"]
    # The mean fell beyond max_regression too: the pass test decides a thresholded metric, and no
    # note repeats it metric by metric.
    assert not any("max_regression" in n for n in broken.notes)
    # One run a side (a stored baseline, the default runs): the drop is still recorded.
    single = compare_dataset(runs({"a": [0.0], "b": [1.0]}), runs({"a": [1.0], "b": [1.0]}), baseline_path="b").metrics[0]
    assert single.chance_falls is None and [d.id for d in single.drops] == ["a"]


def _slow_two_level(now: list[list[float]], before: list[list[float]], seed: int, resamples: int = 4000) -> tuple[float, float]:
    """The two-level bootstrap written out loop by loop, as the definition reads."""
    rng = random.Random(seed)
    n = len(now)
    means = []
    for _ in range(resamples):
        total = 0.0
        for _ in range(n):
            i = rng.randrange(n)
            a = [rng.choice(now[i]) for _ in now[i]]
            b = [rng.choice(before[i]) for _ in before[i]]
            total += sum(a) / len(a) - sum(b) / len(b)
        means.append(total / n)
    means.sort()
    return means[int(0.025 * resamples)], means[int(0.975 * resamples) - 1]


@pytest.mark.parametrize("ragged", [False, True])
def test_the_vectorized_draws_match_the_definition(ragged: bool) -> None:
    """Same runs a question everywhere (the fast path), and ragged runs (a run that errs leaves a
    question with fewer): the interval agrees with a loop-by-loop bootstrap within resampling noise."""
    rng = random.Random(4)
    now = [[float(rng.random() < 0.6) for _ in range(3)] for _ in range(25)]
    before = [[float(rng.random() < 0.7) for _ in range(3)] for _ in range(25)]
    if ragged:
        now = [runs[: 1 + i % 3] for i, runs in enumerate(now)]
    fast = paired_runs_ci(now, before, 3)
    slow = _slow_two_level(now, before, 3)
    assert fast is not None
    # A question-level interval of the per-question means is off by 0.026 to 0.053 at some end here.
    assert fast[0] == pytest.approx(slow[0], abs=0.02) and fast[1] == pytest.approx(slow[1], abs=0.02)
