"""What the views read of the verdict: a metric's change, the questions whose drop the gate
counts, those that got worse than on the base, the runs an outage kept from running. The facts
are the verdict's, but it does not hand them over in structured form yet: the views read them
here and nowhere else (views/metric_rows.py and views/question_diffs.py take them as arguments)."""

from __future__ import annotations

from collections import defaultdict

from agent_eval_action.models.results import DatasetResult, QuestionResult
from agent_eval_action.models.verdicts import DatasetComparison, GateResult, MetricComparison
from agent_eval_action.scoring.aggregate import mean_of
from agent_eval_action.verdict.comparison import EPSILON, all_runs, ci_on_worse_side, counted_drops, per_question, worse_amount
from agent_eval_action.verdict.gate import is_timing
from agent_eval_action.verdict.outages import outage_cause
from agent_eval_action.views.metric_rows import Change


def change_of(comparison: MetricComparison) -> Change:
    """A metric's change as the comparison judges it: nil, the worse way, surely worse, a timing."""
    delta, direction = comparison.delta, comparison.direction
    worse = delta is not None and worse_amount(delta, direction) > 0
    return Change(
        unchanged=delta is not None and abs(delta) <= EPSILON,
        worse=worse,
        sure=ci_on_worse_side(comparison.ci95, direction) if worse else None,
        timing=is_timing(comparison.metric),
    )


def trend_ends(current: DatasetResult, metrics: set[str]) -> dict[str, float]:
    """Where each named metric's trend ends: this run's mean over its questions, each question's
    runs averaged first, as a baseline's history point is (a baseline runs every question as often).
    The mean over runs would weigh a question by its runs: the questions in doubt, run again
    until the test decides, and those reused with the baseline's runs, would outweigh the rest
    (a metric shown 60% beside a trend ending at 23%)."""
    runs = all_runs(current, metrics) if metrics else {}
    return {metric: mean_of(list(per_question(by_question).values())) for metric, by_question in runs.items()}


def dropped_questions(comparison: DatasetComparison | None) -> set[str]:
    """The questions whose drop the gate counts (max_question_drop)."""
    return {d.id for m in (comparison.metrics if comparison else []) for d in counted_drops(m)}


def regressed_questions(current: DatasetResult, base: DatasetResult | None, comparison: DatasetComparison | None) -> dict[str, list[str]]:
    """Question id -> the higher-is-better metrics on which it scored lower than on the base
    (per-question means over runs), plus ``"error"`` for a question that now ends in an error.
    Drops the gate counts come first."""
    if base is None or comparison is None or comparison.status != "compared":
        return {}
    out: dict[str, list[str]] = defaultdict(list)
    dropped = {(d.id, d.metric) for m in comparison.metrics for d in counted_drops(m)}
    for qid, name in sorted(dropped):
        out[qid].append(name)
    errors_now = {q.id for q in current.questions if q.status == "error"}
    errors_before = {q.id for q in base.questions if q.status == "error"}
    shared = {q.id for q in current.questions} & {q.id for q in base.questions}
    for qid in sorted((errors_now - errors_before) & shared):
        out[qid].insert(0, "error")
    runs = all_runs(current), all_runs(base)
    for metric in comparison.metrics:
        if metric.direction != "higher" or metric.baseline is None or metric.current is None:
            continue
        now, before = per_question(runs[0].get(metric.metric, {})), per_question(runs[1].get(metric.metric, {}))
        for qid in sorted(now.keys() & before.keys()):
            if before[qid] - now[qid] > EPSILON and metric.metric not in out[qid]:
                out[qid].append(metric.metric)
    order = sorted(out, key=lambda q: (not any((q, m) in dropped for m in out[q]), "error" not in out[q], q))
    return {q: out[q] for q in order}


def outage_run(question: QuestionResult, gate: GateResult | None) -> bool:
    """A run that ended in an error the model/API caused, in a check the gate could not make for
    that reason: said once, in the headline, not run by run."""
    return (
        gate is not None
        and gate.infrastructure is not None
        and question.status == "error"
        and bool(outage_cause(question.error, question.error_origin))
    )
