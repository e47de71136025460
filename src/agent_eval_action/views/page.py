"""The page every view of a run shows, in the order a reviewer reads it: the verdict and its
reason in words, what moved, then why (the questions that got worse, base run beside this one).

The comment, the step summary, the terminal and report.html are all built from this model, so
they tell the same story. Everything here is plain text: each view escapes it for its medium.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from agent_eval_action.core.markdown import plural
from agent_eval_action.core.models import (
    BaseRun,
    DatasetComparison,
    DatasetResult,
    GateFailure,
    GateResult,
    MetricComparison,
    MetricSummary,
    QuestionResult,
    Results,
)
from agent_eval_action.scoring.aggregate import missed_thresholds
from agent_eval_action.verdict.comparison import counted_drops
from agent_eval_action.verdict.outages import outage_cause
from agent_eval_action.views.background import Background
from agent_eval_action.views.headline import IDS_NAMED, Reason, headline, reasons
from agent_eval_action.views.metric_rows import MARK_ORDER, MetricRow, by_metric, metric_order, metric_row
from agent_eval_action.views.question_diffs import DiffGroup, QuestionDiff, group_diffs, question_diff, regressions, runs_by_id


@dataclass
class QuestionView:
    """A run that misses a pass threshold or ended in an error (whether or not it regressed)."""

    id: str
    run: int
    status: str
    error: str | None
    failed: list[str]
    tools: dict[str, Any] | None
    state: list[str]
    trajectory: dict[str, Any] | None


def judged_with(summary: dict[str, MetricSummary], thresholds: dict[str, float]) -> dict[str, float]:
    """Each thresholded metric's pass threshold, as its runs were judged: the summary's record, else
    (results written before summaries recorded it) the config's ``thresholds``; by name."""
    names = {*thresholds, *(name for name, s in summary.items() if s.pass_threshold is not None)}
    recorded = {name: s.pass_threshold for name, s in summary.items() if s.pass_threshold is not None}
    return {name: recorded.get(name, thresholds.get(name, 0.0)) for name in sorted(names)}


def run_failures(question: QuestionResult, summary: dict[str, MetricSummary], thresholds: dict[str, float]) -> list[str]:
    """The metrics whose pass threshold a run missed, as scoring judged it (``failed_thresholds``).
    The one place a view judges a run itself: one that scoring did not judge (read from a file,
    which leaves an empty judgement out, or written before runs were judged) is judged now, alike."""
    if "failed_thresholds" in question.model_fields_set:
        return question.failed_thresholds
    return missed_thresholds(question, summary, thresholds)


def _question_view(question: QuestionResult, failed: list[str]) -> QuestionView:
    tools = question.scores.get("tool_usage_accuracy")
    state = question.scores.get("state_management_fidelity")
    trajectory = question.scores.get("trajectory_accuracy")
    return QuestionView(
        id=question.id,
        run=question.run,
        status=question.status,
        error=question.error,
        failed=failed,
        tools=tools.details if tools and tools.value is not None and tools.value < 1 else None,
        state=list(state.details.get("mismatches", [])) if state and state.value is not None and state.value < 1 else [],
        trajectory=trajectory.details if trajectory and trajectory.value is not None and trajectory.value < 1 else None,
    )


# --- the page ----------------------------------------------------------------------------------


@dataclass
class DatasetView:
    result: DatasetResult
    comparison: DatasetComparison | None
    rows: list[MetricRow]
    moved: list[MetricRow]
    unchanged: list[MetricRow]
    errors: int
    unscored: dict[str, int]
    regressed: list[QuestionDiff]
    groups: list[DiffGroup]  # the regressed questions, those that differ alike together
    questions: list[QuestionView]  # failing runs that did not regress (or all, without a base run)
    failing: int
    base: DatasetResult | None
    question_count: int
    lines: list[str] = field(default_factory=list)  # dataset-level gate failures (errors)
    # Questions one run scored and the other did not, left out of Base, This PR and Change.
    unpaired: list[str] = field(default_factory=list)
    # The rows folded away as timings shown for information.
    info: list[MetricRow] = field(default_factory=list)
    # What this PR paid for: reused runs, skipped ones (and why), live and replayed model calls.
    notes: list[str] = field(default_factory=list)
    # Questions whose runs disagree, with their pass rate on each side ("q3 (tool_usage_accuracy): 2/3 on base, 1/3 here").
    flaky: list[str] = field(default_factory=list)
    # The runs that ended "ok" but missed a pass threshold, with the metrics they missed, in the dataset's order.
    failed_runs: list[tuple[QuestionResult, list[str]]] = field(default_factory=list)
    # Each run's missed pass thresholds (:func:`run_failures`), in the order of ``result.questions``.
    missed: list[list[str]] = field(default_factory=list)
    # Each thresholded metric's pass threshold (:func:`judged_with`), by name.
    thresholds: dict[str, float] = field(default_factory=dict)


def paired_notes(comparison: DatasetComparison | None) -> list[str]:
    """The questions compared with the baseline's under their old ids (their content unchanged)."""
    pairs = comparison.paired_by_content if comparison is not None else {}
    if not pairs:
        return []
    shown = ", ".join(f"{now} was {old}" for now, old in list(pairs.items())[:IDS_NAMED])
    more = f" (+{len(pairs) - IDS_NAMED} more)" if len(pairs) > IDS_NAMED else ""
    return [f"{plural(len(pairs), 'question')} renamed, compared with the baseline's by content: {shown}{more}"]


def cost_notes(dataset: DatasetResult) -> list[str]:
    """In words: how many runs were reused from the baseline or skipped (and why), and how many
    of the agent's model calls went to the model or were replayed from the cache."""
    notes = []
    if dataset.reused:
        ran = sum(1 for q in dataset.questions if not q.reused and q.status != "skipped")
        notes.append(f"{plural(dataset.reused, 'question run')} reused from the baseline, {ran} run")
    skipped: dict[str, int] = {}
    for q in dataset.questions:
        if q.status == "skipped":
            reason = q.skip_reason or "skipped"
            skipped[reason] = skipped.get(reason, 0) + 1
    for reason, count in skipped.items():
        notes.append(f"{plural(count, 'question run')} skipped ({reason})")
    if dataset.model_calls is not None:
        calls = dataset.model_calls
        notes.append(f"model calls: {calls.live} to the model, {calls.replayed} replayed from the cache")
    return notes


def run_line(results: Results) -> str | None:
    """How the agent ran: the concurrency reached and the budgets, in one line (None: it did not run)."""
    run = results.run
    if run is None:
        return None
    parts = []
    if results.base_run is not None:
        parts.append(base_run_line(results.base_run))
    if run.max_in_flight:
        if run.concurrency == "auto":
            # The limit can stand above what was ever in flight (16 for a run of 5 questions): say both.
            limit = f"the limit rose to {run.reached} (of at most {run.ceiling})"
            if run.decreases:
                limit += f", was halved {plural(run.decreases, 'time')} on 429 / deadline and ended at {run.final}"
            elif run.final != run.reached:
                limit += f" and ended at {run.final}"
            parts.append(f"concurrency auto: at most {plural(run.max_in_flight, 'question run')} in flight; {limit}")
        else:
            parts.append(f"concurrency {run.concurrency}")
    if run.paced or run.throttled:
        asked = f"{plural(run.throttled, 'model call')} throttled (429) and asked again" if run.throttled else ""
        parts.append(", ".join(p for p in (f"paced to {run.paced}" if run.paced else "", asked) if p))
    for label, use in (("agent budget", run.budget), ("judge budget", run.judge_budget)):
        if use is None:
            continue
        limits = [f"{use.calls} of {use.max_calls} calls" if use.max_calls is not None else f"{use.calls} calls"]
        if use.max_cost_usd is not None:
            limits.append(f"${use.cost_usd:.4f} of ${use.max_cost_usd:g}")
        stop = f", reached: {use.skipped} not run" if use.reached else ""
        parts.append(f"{label} {', '.join(limits)}{stop}")
    return "; ".join(parts) or None


def base_run_line(base: BaseRun) -> str:
    """What compare-with = "base" cost: "base re-run: 12 questions x 3 runs, 72 model calls"."""
    return f"base re-run: {plural(base.questions, 'question')} × {plural(base.runs, 'run')}, {plural(base.model_calls, 'model call')}"


def unpaired_lines(comparison: DatasetComparison | None, errored: int = 0) -> list[str]:
    """Per group of metrics, the questions scored on one side only: "1 question scored only on
    the base for llm_calls, tool_calls (removed, or an error or unscored now)". ``errored``: the
    questions whose every run ended in an error now, said once (no metric scored them) instead
    of in every metric's count."""
    if comparison is None or comparison.status != "compared":
        return []
    groups: dict[tuple[int, int], list[str]] = defaultdict(list)
    for m in comparison.metrics:
        base_only = max(0, m.baseline_only - errored)
        if m.verdict not in ("new", "removed") and (base_only or m.current_only):
            groups[(base_only, m.current_only)].append(m.metric)
    lines = []
    if errored:
        lines.append(
            f"{plural(errored, 'question')} ended in an error in this run, so no metric scored "
            f"{'it' if errored == 1 else 'them'}: the rows compare the other questions"
        )
    for (base_only, head_only), metrics in groups.items():
        parts = []
        if base_only:
            parts.append(f"{plural(base_only, 'question')} scored only on the base (removed, or an error or unscored now)")
        if head_only:
            parts.append(f"{plural(head_only, 'question')} scored only on this PR (added, or unscored on the base)")
        lines.append(f"{', '.join(metrics)}: {'; '.join(parts)}")
    return lines


def flaky_lines(comparison: DatasetComparison | None) -> list[str]:
    """Each flaky question and metric with how many of its runs passed on each side."""

    def side(rate: float | None, runs: int, where: str) -> str:
        return f"{round(rate * runs)}/{runs} {where}" if rate is not None else f"not scored {where}"

    return [
        f"{f.id} ({f.metric}): {side(f.baseline_pass_rate, f.baseline_runs, 'on base')}, {side(f.current_pass_rate, f.current_runs, 'here')}"
        for f in (comparison.flaky if comparison is not None else [])
    ]


def _dataset_line(failure: GateFailure) -> str:
    """A dataset-level failure (errors, nothing scored) in words."""
    if failure.rule == "new_errors":
        count, before = int(failure.current or 0), int(failure.baseline or 0)
        return f"fails the gate: {count} question{'s' if count != 1 else ''} ended in an error, {before} on the base branch"
    return "fails the gate: " + (failure.detail or failure.message)


def dataset_view(
    dataset: DatasetResult,
    comparison: DatasetComparison | None,
    gate: GateResult | None,
    thresholds: dict[str, float],
    background: Background,
    same_job: bool = False,
) -> DatasetView:
    compared = comparison is not None and comparison.status == "compared"
    rows = _metric_rows(dataset, comparison, gate, background, compared, same_job)
    # Without a baseline nothing is unchanged: every figure is new and shown.
    moved = sorted((r for r in rows if r.moved or not compared), key=lambda r: MARK_ORDER[r.mark])
    base = background.base_runs.get(dataset.path) if compared else None
    regressed_ids, diffs = _regressed(dataset, comparison, gate, base, background.ignore_state)
    # Each run's missed thresholds, as scoring judged them: every view lists these.
    missed = [run_failures(q, dataset.summary, thresholds) for q in dataset.questions]
    views = [_question_view(q, failed) for q, failed in zip(dataset.questions, missed, strict=True)]
    failed_runs = [(q, v.failed) for q, v in zip(dataset.questions, views, strict=True) if q.status == "ok" and v.failed]
    # An outage's runs are said once, in the headline: not one "needs a look" per question.
    outage = gate is not None and gate.infrastructure is not None
    failing = [v for v in views if (v.status == "error" and not (outage and outage_cause(v.error))) or v.failed]
    failing.sort(key=lambda v: (v.status != "error", -len(v.failed), v.id, v.run))
    lines = [_dataset_line(f) for f in (gate.failures if gate else []) if f.dataset == dataset.path and not f.metric]
    # Questions the base has whose every run ended in an error now: scored on the base only, for every metric.
    added = set(comparison.added_questions) if comparison is not None else set()
    errored_ids = (
        {q.id for q in dataset.questions if q.status == "error"} - {q.id for q in dataset.questions if q.status != "error"} - added
    )
    return DatasetView(
        result=dataset,
        comparison=comparison,
        rows=rows,
        moved=moved,
        unchanged=[r for r in rows if r not in moved],
        errors=sum(1 for q in dataset.questions if q.status == "error"),
        unscored={name: s.unscored for name, s in dataset.summary.items() if s.unscored},
        regressed=diffs,
        groups=group_diffs(diffs),
        questions=[v for v in failing if v.id not in regressed_ids],
        failing=len(failing),
        base=base,
        question_count=len({q.id for q in dataset.questions}),
        lines=lines,
        notes=cost_notes(dataset) + paired_notes(comparison),
        unpaired=unpaired_lines(comparison, len(errored_ids)),
        flaky=flaky_lines(comparison),
        info=[r for r in rows if r.mark == "info"],
        failed_runs=failed_runs,
        missed=missed,
        thresholds=judged_with(dataset.summary, thresholds),
    )


def _metric_rows(
    dataset: DatasetResult,
    comparison: DatasetComparison | None,
    gate: GateResult | None,
    background: Background,
    compared: bool,
    same_job: bool,
) -> list[MetricRow]:
    """The dataset's metric rows in the registry's order, each with its mark and the gate's records of it."""
    if comparison is not None:
        metrics = [m for m in comparison.metrics if m.current is not None or m.baseline is not None]
    else:
        metrics = [
            MetricComparison(metric=name, direction=s.direction, baseline=None, current=s.mean, delta=None, verdict="new")
            for name, s in dataset.summary.items()
            if s.mean is not None
        ]
    failures = by_metric(gate.failures if gate else [], dataset.path)
    # One record per metric at most: the gate judges a metric's change once per dataset.
    noise = {metric: records[0] for metric, records in by_metric(gate.within_noise if gate else [], dataset.path).items()}
    history = background.history.get(dataset.path, {})
    order = metric_order()
    rows = [
        metric_row(
            m,
            dataset.summary.get(m.metric),
            failures.get(m.metric, []),
            noise.get(m.metric),
            background.rules.get(m.metric),
            history.get(m.metric, []),
            compared,
            same_job,
        )
        for m in metrics
    ]
    rows.sort(key=lambda r: (order.get(r.metric, len(order)), r.metric))
    return rows


def _regressed(
    dataset: DatasetResult,
    comparison: DatasetComparison | None,
    gate: GateResult | None,
    base: DatasetResult | None,
    ignore_state: frozenset[str],
) -> tuple[dict[str, list[str]], list[QuestionDiff]]:
    """The questions that got worse than on the base (id -> the metrics that fell), and each one's
    run beside the base's; none of those an outage kept from running."""
    regressed_ids = regressions(dataset, base, comparison)
    if gate is not None and gate.infrastructure is not None:
        # Runs the model/API kept from running are said once, in the headline: no diff of each.
        ran = {q.id for q in dataset.questions if not (q.status == "error" and outage_cause(q.error))}
        regressed_ids = {qid: fell for qid, fell in regressed_ids.items() if qid in ran}
    dropped = {d.id for m in (comparison.metrics if comparison else []) for d in counted_drops(m)}
    diffs = []
    if base is not None:
        head_runs, base_runs = runs_by_id(dataset), runs_by_id(base)
        diffs = [
            question_diff(qid, fell, head_runs[qid], base_runs.get(qid, []), dropped, ignore_state) for qid, fell in regressed_ids.items()
        ]
    return regressed_ids, diffs


@dataclass(frozen=True)
class Page:
    """The page of one run, built once (:func:`build`) and handed to every view of it: the
    terminal, the comment and step summary, report.html. At 10,000 questions a build takes
    seconds, so no view builds it again. ``results``: what it was built from."""

    results: Results
    thresholds: dict[str, float]
    headline: str
    reasons: list[Reason]
    datasets: list[DatasetView]
    # The datasets this change deleted.
    removed: list[DatasetComparison]
    run_line: str | None
    # What the base runs beside this one are: "the base's agent run now (1a2b3c4)", "merge-base 1a2b3c4".
    base_label: str
    # The most baseline commits any metric's trend shows.
    history_depth: int

    @property
    def gate(self) -> GateResult | None:
        return self.results.gate

    def shows(self, results: Results) -> bool:
        return self.results is results

    def context(self) -> dict[str, Any]:
        """The names the templates read: the page's parts, and what they show straight from the results."""
        results = self.results
        return {
            "headline": self.headline,
            "reasons": self.reasons,
            "gate": results.gate,
            "selection": results.selection,
            "datasets": self.datasets,
            "removed": self.removed,
            "problems": results.problems,
            "run_line": self.run_line,
            "drift": results.drift_notes,
            "version": results.tool_version,
            "base_label": self.base_label,
            # Compared with the base's agent run now: the label names it (and its commit) already.
            "base_is_run": self.base_is_run,
            "history_depth": self.history_depth,
        }

    @property
    def base_is_run(self) -> bool:
        return self.results.base_run is not None


def build(results: Results, *, thresholds: dict[str, float] | None = None, background: Background | None = None) -> Page:
    """The page of ``results``: headline, reasons, datasets with what moved and why. ``background``:
    what the base branch knows (base runs, history, the gate's rules for the table); without it,
    the rules a config-less run uses."""
    if background is None:
        from agent_eval_action.config import GateConfig
        from agent_eval_action.metrics import REGISTRY
        from agent_eval_action.verdict.gate import rules_of

        background = Background(rules=rules_of(results, GateConfig(), {name: m.kind for name, m in REGISTRY.items()}))
    _learn_units(results)
    comparisons = {c.path: c for c in results.comparison or []}
    same_job = results.plan is not None and results.plan.base_beside  # both sides timed in this job
    thresholds = thresholds or {}
    datasets = [dataset_view(d, comparisons.get(d.path), results.gate, thresholds, background, same_job) for d in results.datasets]
    found = reasons(results)
    return Page(
        results=results,
        thresholds=thresholds,
        headline=headline(results, datasets, found),
        reasons=found,
        datasets=datasets,
        removed=[c for c in results.comparison or [] if c.status == "removed"],
        run_line=run_line(results),
        base_label=f"the base's agent run now ({results.base_run.commit[:7]})"
        if results.base_run is not None and results.base_run.commit
        else background.base_label or "the baseline",
        history_depth=max((len(p) for h in background.history.values() for p in h.values()), default=0),
    )


def _learn_units(results: Results) -> None:
    """The units the results recorded for metrics the registry does not hold (a custom metric of
    the run that wrote them), so that a report made later from the file shows them alike."""
    from agent_eval_action.metrics.registry import declare_unit

    for dataset in results.datasets:
        for name, summary in dataset.summary.items():
            if summary.unit is not None:
                declare_unit(name, summary.unit)


def page_of(shown: Page | Results, thresholds: dict[str, float] | None = None, background: Background | None = None) -> Page:
    """A view's page: the one given, else (a caller with results only) the page built once now."""
    return shown if isinstance(shown, Page) else build(shown, thresholds=thresholds, background=background)
