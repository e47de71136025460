"""Drift: the base's fresh run against its stored baseline (the same code at another time, so
what moved is the model or the world, not the PR), in words; the failures ``[gate]
fail-on-drift`` makes of it; and the hint that drift is the likely cause when a check against
stored baselines moved with no agent code changed."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agent_eval_action.models.results import DatasetResult, QuestionResult, Results
from agent_eval_action.models.verdicts import DatasetComparison, GateFailure, MetricComparison
from agent_eval_action.system.errors import DatasetError
from agent_eval_action.text.figures import figure
from agent_eval_action.text.markdown import plural
from agent_eval_action.verdict.gate import is_timing
from agent_eval_action.verdict.noise import Settings, spread_level
from agent_eval_action.verdict.pass_test import pass_test

REFRESH = "python -m agent_eval_action baseline update"

# A dataset's stored baseline run (None: it has none); raises DatasetError when unreadable.
StoredRun = Callable[[DatasetResult], "DatasetResult | None"]


def _fmt(value: float | None, metric: str) -> str:
    from agent_eval_action.metrics.registry import unit_of  # the metric modules: only when a figure is said

    return figure(value, unit_of(metric))


def finished(dataset: DatasetResult) -> DatasetResult | None:
    """``dataset`` with only the runs that ran to their end; None when none did. Only those say
    anything of the model's answers (not one an interrupt or budget stopped, or that erred)."""
    done = [q for q in dataset.questions if q.status == "ok"]
    if not done:
        return None
    return dataset if len(done) == len(dataset.questions) else dataset.model_copy(update={"questions": done})


def drift_lines(
    base_datasets: Sequence[DatasetResult], comparisons: Sequence[DatasetComparison], stored: StoredRun, settings: Settings
) -> list[str]:
    """A line for each dataset of the base's fresh (finished) runs that moved from its stored
    baseline, ``comparisons`` being theirs ("the model moved: 5 of 40 questions answer differently ...").
    Each comparison records the metrics that moved as drift (``drift_metrics``: none where no
    line is said), so that fail-on-drift fails on what the line says and nothing else."""
    lines = []
    for dataset, comparison in zip(base_datasets, comparisons, strict=False):
        if comparison.status != "compared":
            continue
        try:
            found = stored(dataset)
        except DatasetError:
            continue
        if found is None:
            continue
        # Answers that differ (an id, a timestamp in them), timings or counts alone are no drift.
        # Counts (tokens, calls, cost) move with how often each path was taken: skewed by a few
        # flaky questions run once each, and by the runs the re-runs add to some questions. They
        # were said when some answer differed too, and a model that had not moved read as moved
        # in 1 of 20, then 7 of 60, of the bench's base-mode checks (a flaky question's answer the
        # record never gave, "total_tokens 99.2 -> 100"). A drift that matters moves what runs are
        # scored on: a reference or judged metric, or a pass rate beyond chance.
        moved = _moved(dataset, comparison, found, settings)
        comparison.drift_metrics = [m.metric for m in moved]
        if not moved:
            continue
        differ, total = answered_differently(dataset, found)
        shown = max(moved, key=lambda m: abs(m.delta or 0.0))
        figures = ""
        if shown.baseline is not None and shown.current is not None:
            figures = f" ({shown.metric} {_fmt(shown.baseline, shown.metric)} → {_fmt(shown.current, shown.metric)})"
        lines.append(
            f"{dataset.name}: the model moved: {differ} of {plural(total, 'question')} answer differently than the stored baseline "
            f"with the same code{figures}; this does not fail the PR unless [gate] fail-on-drift = true. "
            f"Refresh the baseline on the base branch with `{REFRESH}`"
        )
    return lines


def _moved(dataset: DatasetResult, comparison: DatasetComparison, found: DatasetResult, settings: Settings) -> list[MetricComparison]:
    """The metrics that moved as drift: timings and counts aside (:func:`_counts_only`); those of
    the pass test only beyond the questions' own pass rates."""
    moved = [m for m in comparison.metrics if m.verdict in ("regressed", "improved") and not is_timing(m.metric)]
    if comparison.pass_test is not None:
        # Questions pass at their own rates: for the metrics of the pass test, drift is only a
        # move beyond them, either way (the fresh base against the stored runs, and back).
        tested = set(comparison.pass_test.metrics)
        rose = pass_test(found, dataset, settings)
        beyond = any(
            t.spread_p <= spread_level(t.alpha) or any(q.decision == "failed" for q in t.tested)
            for t in (comparison.pass_test, rose)
            if t is not None
        )
        moved = [m for m in moved if m.metric not in tested] + ([m for m in comparison.metrics if m.metric in tested] if beyond else [])
    return [m for m in moved if not _counts_only(dataset, m.metric)]


def _counts_only(dataset: DatasetResult, metric: str) -> bool:
    """Whether ``metric`` counts how a run went (a trace metric counted or priced: tokens, calls,
    cost) rather than whether its answer was right. A trace metric's rate (``tool_error_rate``)
    is not a count: a model that starts failing its tool calls moved."""
    summary = dataset.summary.get(metric)
    if summary is None or summary.kind != "trace":
        return False
    from agent_eval_action.metrics.registry import unit_of  # the metric modules: only when drift is read

    return (summary.unit or unit_of(metric)) in ("count", "usd")


def drift_failures(drift: Sequence[DatasetComparison], fail_on_drift: bool) -> list[GateFailure]:
    """``[gate] fail-on-drift = true``: a metric of the base's fresh run that regressed from the
    stored baseline and moved as drift (``drift_metrics``, what the drift note says) is a
    failure of the check too."""
    if not fail_on_drift:
        return []
    failures = []
    for comparison in drift:
        drifted = comparison.drift_metrics
        test = comparison.pass_test
        # Files written before drift_metrics was: a metric of the pass test drifted only beyond
        # the questions' own pass rates.
        within = test is not None and test.spread_p > spread_level(test.alpha) and not any(q.decision == "failed" for q in test.tested)
        for metric in comparison.metrics:
            if drifted is not None and metric.metric not in drifted:
                continue
            if drifted is None and within and test is not None and metric.metric in test.metrics:
                continue
            if metric.verdict == "regressed" and not is_timing(metric.metric):
                detail = (
                    f"the model drifted: the base's own agent scores {metric.metric} {_fmt(metric.baseline, metric.metric)} → "
                    f"{_fmt(metric.current, metric.metric)} against its stored baseline (fail-on-drift = true)"
                )
                failures.append(
                    GateFailure(
                        dataset=comparison.path,
                        metric=metric.metric,
                        rule="drift",
                        baseline=metric.baseline,
                        current=metric.current,
                        message=f"{comparison.dataset}: {detail}",
                        subject=comparison.dataset,
                        detail=detail,
                    )
                )
    return failures


def drift_hint(results: Results, stored: StoredRun, settings: Callable[[DatasetResult], Settings]) -> str | None:
    """compare-with = "baseline" and the PR changed no agent code (nor did the base since the
    baseline: the agent's code hashes as the baseline's did), yet questions it did not change
    answer differently than the stored baseline: the likely cause is drift, and the hint says so.
    What moved must be what drift moves (:func:`drift_lines`): counts alone, or pass rates within
    the questions' own, are no drift; ``settings``: a dataset's noise settings for the pass test."""
    selection = results.selection
    if selection is None or selection.agent_changes or not results.comparison:
        return None
    comparisons = {c.path: c for c in results.comparison if c.status == "compared"}
    unchanged = 0
    for dataset in results.datasets:
        comparison = comparisons.get(dataset.path)
        if comparison is None:
            continue
        try:
            found = stored(dataset)
        except DatasetError:
            continue
        if found is None or found.agent_fingerprint is None or found.agent_fingerprint != dataset.agent_fingerprint:
            continue  # other agent code than the baseline's (this PR's, or the base's since): not drift alone
        if not _moved(dataset, comparison, found, settings(dataset)):
            continue
        hashes = {q.id: q.content_hash for q in found.questions if q.content_hash}
        same = [q for q in dataset.questions if not q.reused and q.content_hash and hashes.get(q.id) == q.content_hash]
        scores = {(q.id, q.run): q for q in found.questions}
        unchanged += sum(1 for q in same if (q.id, q.run) in scores and _differ([q], [scores[(q.id, q.run)]]))
    if not unchanged:
        return None
    return (
        f"scores moved although this PR changed no agent code: {unchanged} question runs the PR did not change answer "
        "differently than the stored baseline, so model drift is the likely cause, not this PR. "
        'Set compare-with = "base" to run the base\'s agent beside this one in the same job, '
        f"or refresh the baseline with `{REFRESH}`"
    )


def answered_differently(now: DatasetResult, stored: DatasetResult) -> tuple[int, int]:
    """How many questions of ``now`` (ran, not reused) answer differently than in ``stored``
    (their final response, else a score of a non-timing metric), of how many both have."""
    before = _by_id(stored)
    differ = total = 0
    for qid, runs in _by_id(now).items():
        if qid not in before or all(q.reused for q in runs):
            continue
        total += 1
        if _differ(runs, before[qid]):
            differ += 1
    return differ, total


def _by_id(dataset: DatasetResult) -> dict[str, list[QuestionResult]]:
    out: dict[str, list[QuestionResult]] = {}
    for q in dataset.questions:
        out.setdefault(q.id, []).append(q)
    return out


def _differ(ours: list[QuestionResult], theirs: list[QuestionResult]) -> bool:
    """Whether a question answered differently: one of our runs gave an answer none of theirs
    gave (their counts of runs may differ). An answer is the final response when both sides
    recorded one, else the scores of the metrics that do not measure time."""
    responses = all(q.transcript is not None for q in [*ours, *theirs])
    before = [_answer(q, responses) for q in theirs]
    return any(_answer(q, responses) not in before for q in ours)


def _answer(question: QuestionResult, response: bool) -> object:
    if response and question.transcript is not None:
        return question.transcript.final_response
    return sorted((name, s.value or 0.0, s.value is None) for name, s in question.scores.items() if not is_timing(name))
