"""Comparing a run with its baseline: per metric, the paired difference over shared questions,
its seeded bootstrap CI (two-level with several runs per question: questions, then runs within
them), and a direction-aware verdict; per question, the hard drops and the flaky questions."""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Literal

from agent_eval_action.models.results import DatasetResult
from agent_eval_action.models.verdicts import DatasetComparison, FlakyQuestion, MetricComparison, QuestionDrop
from agent_eval_action.scoring.aggregate import (
    bootstrap_mean_ci,
    difference,
    mean_of,
    paired_runs_ci,
    passes,
    poisson_tail,
    scale_of,
    scaled,
    seed_for,
    unscaled,
)
from agent_eval_action.verdict.noise import DEFAULTS, Settings
from agent_eval_action.verdict.outages import outage_cause
from agent_eval_action.verdict.pass_test import pass_test

EPSILON = 1e-9
# With several runs a side, hard drops count only when at least as many are less likely than
# this by chance, given how flaky the questions are (``chance_falls``).
CHANCE_LEVEL = 0.05


# Metric -> question id -> the scores of its scored runs (runs of an error or unscored are left out).
Runs = dict[str, dict[str, list[float]]]


def all_runs(dataset: DatasetResult, only: Collection[str] | None = None) -> Runs:
    """Every metric's runs of the dataset (:data:`Runs`), in one pass over them: a comparison reads
    every metric's runs on both sides, and a pass per metric read 10,000 runs 40 times a side.
    ``only``: those metrics' runs alone (each run's scores looked up by name, not all read)."""
    out: Runs = {}
    for question in dataset.questions:
        if question.status != "ok":
            continue
        qid = question.id
        scores = question.scores
        for metric, score in scores.items() if only is None else [(m, scores[m]) for m in only if m in scores]:
            value = score.value
            if value is None:
                continue
            # get, not setdefault: no empty dict and list made (and dropped) for each of 400,000 scores.
            by_question = out.get(metric)
            if by_question is None:
                by_question = out[metric] = {}
            runs = by_question.get(qid)
            if runs is None:
                by_question[qid] = [value]
            else:
                runs.append(value)
    return out


def per_question(runs: dict[str, list[float]]) -> dict[str, float]:
    """Question id -> the mean of its scored runs, from one metric's runs (:data:`Runs`)."""
    return {qid: mean_of(v) for qid, v in runs.items()}


def spread(runs: list[float]) -> float:
    """The range of a question's run scores: 0 when they agree (or there is one run)."""
    return difference(max(runs), min(runs))


def flaky_questions(current: DatasetResult, baseline: DatasetResult | None, runs: tuple[Runs, Runs] | None = None) -> list[FlakyQuestion]:
    """Per metric with a pass threshold, the questions whose runs on either side both pass and
    fail it, with their pass rate on each side; ``runs``: both sides' :func:`all_runs`."""
    if runs is None:
        runs = (all_runs(current), all_runs(baseline) if baseline is not None else {})
    out = []
    for name, summary in current.summary.items():
        before = baseline.summary.get(name) if baseline is not None else None
        threshold = summary.pass_threshold if summary.pass_threshold is not None else before.pass_threshold if before else None
        if threshold is None:
            continue
        sides = [runs[0].get(name, {}), runs[1].get(name, {})]
        outcomes = [{q: [passes(v, threshold, summary.direction) for v in runs] for q, runs in side.items()} for side in sides]
        for qid in sorted(outcomes[0].keys() | outcomes[1].keys()):
            now, base = outcomes[0].get(qid, []), outcomes[1].get(qid, [])
            if not any(0 < sum(runs) < len(runs) for runs in (now, base)):
                continue
            out.append(
                FlakyQuestion(
                    id=qid,
                    metric=name,
                    threshold=threshold,
                    baseline_pass_rate=sum(base) / len(base) if base else None,
                    baseline_runs=len(base),
                    current_pass_rate=sum(now) / len(now) if now else None,
                    current_runs=len(now),
                )
            )
    return out


def _errors(dataset: DatasetResult) -> int:
    """How many questions ended in an error of the agent's in some run (a question re-run or run
    several times counts once; a model/API outage is no error of the agent's)."""
    return len({q.id for q in dataset.questions if q.status == "error" and not outage_cause(q.error, q.error_origin)})


def compare_dataset(
    current: DatasetResult,
    baseline: DatasetResult | None,
    *,
    baseline_path: str | None,
    seed: int = 0,
    max_question_drop: float = 0.5,
    settings: Settings | None = None,
) -> DatasetComparison:
    if baseline is None:
        return DatasetComparison(
            dataset=current.name,
            path=current.path,
            status="new",
            current_errors=_errors(current),
            metrics=[
                MetricComparison(metric=name, direction=s.direction, baseline=None, current=s.mean, delta=None, verdict="new")
                for name, s in current.summary.items()
            ],
            flaky=flaky_questions(current, None),
        )
    ids_now = {q.id for q in current.questions}
    ids_before = {q.id for q in baseline.questions}
    result = DatasetComparison(
        dataset=current.name,
        path=current.path,
        status="compared",
        baseline_path=baseline_path,
        added_questions=sorted(ids_now - ids_before),
        removed_questions=sorted(ids_before - ids_now),
        baseline_errors=_errors(baseline),
        current_errors=_errors(current),
    )
    runs = (all_runs(current), all_runs(baseline))
    for name in [*current.summary, *(m for m in baseline.summary if m not in current.summary)]:
        result.metrics.append(_compare_metric(name, current, baseline, runs, seed=seed, max_question_drop=max_question_drop))
    result.flaky = flaky_questions(current, baseline, runs)
    result.pass_test = pass_test(current, baseline, settings or DEFAULTS)
    return result


def _compare_metric(
    name: str, current: DatasetResult, baseline: DatasetResult, runs: tuple[Runs, Runs], *, seed: int, max_question_drop: float
) -> MetricComparison:
    now, before = current.summary.get(name), baseline.summary.get(name)
    direction = (now or before).direction  # type: ignore[union-attr]
    if now is None:
        return MetricComparison(
            metric=name, direction=direction, baseline=before.mean if before else None, current=None, delta=None, verdict="removed"
        )
    if before is None or before.mean is None:
        return MetricComparison(metric=name, direction=direction, baseline=None, current=now.mean, delta=None, verdict="new")
    if now.mean is None:
        return MetricComparison(metric=name, direction=direction, baseline=before.mean, current=None, delta=None, verdict="removed")
    runs_now, runs_before = runs[0].get(name, {}), runs[1].get(name, {})
    a, b = per_question(runs_now), per_question(runs_before)
    shared = sorted(a.keys() & b.keys())
    spreads = {q: max(spread(runs_now[q]), spread(runs_before[q])) for q in shared}
    if shared:
        # Base and this run averaged over the same questions as their difference: means over
        # different sets (a question that now errs, one added) would contradict the change.
        # Differences of values near the float limit would overflow: they are taken scaled down.
        k = scale_of([*(a[q] for q in shared), *(b[q] for q in shared)])
        diffs = [scaled(a[q], k) - scaled(b[q], k) for q in shared]
        delta = unscaled(math.fsum(diffs) / len(diffs), k)
        seed_of_delta = seed_for(current.name, name, "delta", base=seed)
        if any(spreads.values()):
            # Runs that disagree: their noise goes into the interval too (questions, then runs within them).
            k = scale_of([v for q in shared for v in (*runs_now[q], *runs_before[q])])
            ci = paired_runs_ci(
                [[scaled(v, k) for v in runs_now[q]] for q in shared],
                [[scaled(v, k) for v in runs_before[q]] for q in shared],
                seed_of_delta,
            )
        else:
            ci = bootstrap_mean_ci(diffs, seed_of_delta)
        ci = None if ci is None else (unscaled(ci[0], k), unscaled(ci[1], k))
        base_mean, mean = mean_of([b[q] for q in shared]), mean_of([a[q] for q in shared])
    else:
        delta, ci = difference(now.mean, before.mean), None
        base_mean, mean = before.mean, now.mean
    drops, falls = [], None
    if direction == "higher":
        threshold = now.pass_threshold if now.pass_threshold is not None else before.pass_threshold
        # Only with several runs on both sides: against one run a side (a stored baseline of one
        # run) a question that failed every run here fell as a deterministic agent's would.
        several = [q for q in shared if len(runs_now[q]) > 1 and len(runs_before[q]) > 1]
        if threshold is not None and several:
            falls = chance_falls({q: runs_before[q] for q in several}, {q: runs_now[q] for q in several}, threshold, direction)
        drops = [
            QuestionDrop(
                id=q,
                metric=name,
                baseline=b[q],
                current=a[q],
                spread=spreads[q] or None,
                runs=min(len(runs_now[q]), len(runs_before[q])),
            )
            for q in shared
            if b[q] - a[q] >= max_question_drop - EPSILON
        ]
    return MetricComparison(
        metric=name,
        direction=direction,
        baseline=base_mean,
        current=mean,
        delta=delta,
        ci95=ci,
        n_shared=len(shared),
        baseline_only=len(b.keys() - a.keys()),
        current_only=len(a.keys() - b.keys()),
        verdict=verdict(delta, ci, direction),
        drops=drops,
        chance_falls=falls,
    )


def chance_falls(before: dict[str, list[float]], now: dict[str, list[float]], threshold: float, direction: str) -> float:
    """The number of questions (of those given: the ones with several runs on both sides)
    expected to pass every base run and fail every run here by chance alone: per question, with ``p`` the share of all its runs (both sides) that pass,
    ``p ** base_runs * (1 - p) ** runs_here``, summed. A question whose runs all pass (or all
    fail) adds nothing; a coin toss run three times a side adds 1/64."""
    total = 0.0
    for qid, runs in now.items():
        base = before[qid]
        p = sum(passes(v, threshold, direction) for v in (*base, *runs)) / (len(base) + len(runs))
        total += p ** len(base) * (1 - p) ** len(runs)
    return total


def _by_chance(drop: QuestionDrop, metric: MetricComparison) -> bool:
    return drop.runs > 1 and metric.chance_falls is not None and not within_spread(drop)


def chance_of_hard_drops(metric: MetricComparison) -> float | None:
    """How likely as many complete falls (hard drops of questions with several runs on both sides)
    as ``metric`` has are by chance: a Poisson tail at ``chance_falls``; None without any."""
    if metric.chance_falls is None:
        return None
    return poisson_tail(sum(1 for d in metric.drops if _by_chance(d, metric)), metric.chance_falls)


def counted_drops(metric: MetricComparison) -> list[QuestionDrop]:
    """The drops the per-question guard counts: beyond their own spread, and of questions with
    several runs on both sides only when more fell than the flakiness of the questions explains."""
    chance = chance_of_hard_drops(metric)
    explained = chance is not None and chance > CHANCE_LEVEL
    return [d for d in metric.drops if not within_spread(d) and not (explained and _by_chance(d, metric))]


def within_spread(drop: QuestionDrop) -> bool:
    """Whether a question's drop is no larger than the spread of its own runs (the larger of the
    ranges of its run scores on the two sides). A question whose runs agree on each side (one run
    a side, as a stored baseline holds) has no spread: every drop counts, as it always did."""
    return drop.spread is not None and drop.baseline - drop.current <= drop.spread + EPSILON


def worse_amount(delta: float, direction: str) -> float:
    """How much worse (positive) or better (negative) a delta is, by the metric's direction."""
    return -delta if direction == "higher" else delta if direction == "lower" else 0.0


def ci_on_worse_side(ci: tuple[float, float] | None, direction: str) -> bool | None:
    """Whether the whole CI says "worse"; None when there is no CI (fewer than two shared questions)."""
    if ci is None:
        return None
    return ci[1] < -EPSILON if direction == "higher" else ci[0] > EPSILON if direction == "lower" else False


def verdict(delta: float, ci: tuple[float, float] | None, direction: str) -> Literal["improved", "unchanged", "regressed"]:
    if direction == "neutral" or abs(delta) <= EPSILON:
        return "unchanged"
    worse = worse_amount(delta, direction) > 0
    significant = ci is None or ci[0] > EPSILON or ci[1] < -EPSILON
    if not significant:
        return "unchanged"
    return "regressed" if worse else "improved"
