"""Comparing a run with its baseline: per metric, the paired difference over shared questions,
its seeded bootstrap CI, and a direction-aware verdict; per question, the hard drops."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Literal

from agent_eval_action.aggregate import bootstrap_mean_ci, difference, mean_of, scale_of, scaled, seed_for, unscaled
from agent_eval_action.models import DatasetComparison, DatasetResult, MetricComparison, QuestionDrop

EPSILON = 1e-9


def per_question(dataset: DatasetResult, metric: str) -> dict[str, float]:
    """Question id -> mean of its scored runs (runs of an error or unscored are left out)."""
    values: dict[str, list[float]] = defaultdict(list)
    for question in dataset.questions:
        score = question.scores.get(metric)
        if question.status == "ok" and score is not None and score.value is not None:
            values[question.id].append(score.value)
    return {qid: mean_of(v) for qid, v in values.items()}


def _errors(dataset: DatasetResult) -> int:
    return sum(1 for q in dataset.questions if q.status == "error")


def compare_dataset(
    current: DatasetResult, baseline: DatasetResult | None, *, baseline_path: str | None, seed: int = 0, max_question_drop: float = 0.5
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
    for name in [*current.summary, *(m for m in baseline.summary if m not in current.summary)]:
        result.metrics.append(_compare_metric(name, current, baseline, seed=seed, max_question_drop=max_question_drop))
    return result


def _compare_metric(name: str, current: DatasetResult, baseline: DatasetResult, *, seed: int, max_question_drop: float) -> MetricComparison:
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
    a, b = per_question(current, name), per_question(baseline, name)
    shared = sorted(a.keys() & b.keys())
    if shared:
        # Base and this run averaged over the same questions as their difference: means over
        # different sets (a question that now errs, one added) would contradict the change.
        # Differences of values near the float limit would overflow: they are taken scaled down.
        k = scale_of([*(a[q] for q in shared), *(b[q] for q in shared)])
        diffs = [scaled(a[q], k) - scaled(b[q], k) for q in shared]
        delta = unscaled(math.fsum(diffs) / len(diffs), k)
        ci = bootstrap_mean_ci(diffs, seed_for(current.name, name, "delta", base=seed))
        ci = None if ci is None else (unscaled(ci[0], k), unscaled(ci[1], k))
        base_mean, mean = mean_of([b[q] for q in shared]), mean_of([a[q] for q in shared])
    else:
        delta, ci = difference(now.mean, before.mean), None
        base_mean, mean = before.mean, now.mean
    drops = []
    if direction == "higher":
        drops = [QuestionDrop(id=q, metric=name, baseline=b[q], current=a[q]) for q in shared if b[q] - a[q] >= max_question_drop - EPSILON]
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
    )


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
