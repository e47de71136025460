"""The page every view of a run shows, in the order a reviewer reads it: the verdict and its
reason in words, what moved, then why (the questions that got worse, base run beside this one).

The comment, the step summary, the terminal, report.html and junit.xml are all built from this
model, so they tell the same story. Everything here is plain text: each view escapes it for its
medium. This module assembles the page; its parts are worded in figures.py (units), metric_rows.py
(each metric's mark), question_diffs.py (why a question got worse), headline.py (the verdict's
words) and notes.py; what it reads of the verdict, in verdict_facts.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from agent_eval_action.models.results import DatasetResult, QuestionResult, Results
from agent_eval_action.models.scores import MetricSummary
from agent_eval_action.models.verdicts import DatasetComparison, GateResult, MetricComparison
from agent_eval_action.scoring.aggregate import missed_thresholds
from agent_eval_action.text.markdown import plural
from agent_eval_action.views.background import Background
from agent_eval_action.views.headline import Reason, headline, reasons, unchecked_after
from agent_eval_action.views.metric_rows import MARK_ORDER, MetricRow, by_metric, metric_order, metric_row
from agent_eval_action.views.notes import (
    cost_notes,
    dataset_line,
    flaky_lines,
    gate_notes,
    not_scored_line,
    paired_notes,
    run_line,
    unpaired_lines,
)
from agent_eval_action.views.question_diffs import DiffGroup, QuestionDiff, group_diffs, question_diff, reads_changed, runs_by_id
from agent_eval_action.views.verdict_facts import change_of, dropped_questions, outage_run, regressed_questions, trend_ends


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
    recorded = {name: s.pass_threshold for name, s in summary.items() if s.pass_threshold is not None}
    return {name: recorded[name] if name in recorded else thresholds[name] for name in sorted({*thresholds, *recorded})}


def run_failures(question: QuestionResult, summary: dict[str, MetricSummary], thresholds: dict[str, float]) -> list[str]:
    """The metrics whose pass threshold a run missed, as scoring judged it (``failed_thresholds``).
    The one place a view judges a run itself: one that scoring did not judge (read from a file,
    which leaves an empty judgement out, or written before runs were judged) is judged now, alike."""
    if "failed_thresholds" in question.model_fields_set:
        return question.failed_thresholds
    return missed_thresholds(question, summary, thresholds)


def expected_lines(view: QuestionView) -> list[str]:
    """What a failing run did against what its question expects, in plain words: the lines the
    comment shows under a run that needs a look, for the terminal (``evaluate`` has no base run to
    set beside it, so the question's references are the other side)."""
    lines: list[str] = []
    if view.tools:
        for m in view.tools.get("missing", []):
            expected = json.dumps(m.get("expected"), separators=(",", ":"), ensure_ascii=False, sort_keys=True, default=str)
            lines.append(f"missing call {m.get('tool_name')} with {expected}")
        lines += [f"{w.get('tool_name')}: {'; '.join(w.get('differences', []))}" for w in view.tools.get("wrong_arguments", [])]
        lines += [f"unexpected call {u.get('tool_name')}" for u in view.tools.get("unexpected", [])]
    lines += [f"state {line}" for line in view.state]
    if view.trajectory:
        expected, got = view.trajectory.get("reference", []), view.trajectory.get("actual", [])
        lines.append(f"trajectory: expected {' → '.join(map(str, expected))}, got {' → '.join(map(str, got))}")
    return lines


def _question_view(question: QuestionResult, failed: list[str]) -> QuestionView:
    tools = question.scores.get("tool_usage_accuracy")
    precision = question.scores.get("tool_call_precision")
    if (tools is None or tools.value is None or tools.value >= 1) and precision is not None and precision.value is not None:
        tools = precision  # all expected calls made, and some not expected: its details name them
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


@dataclass
class Look:
    """A question whose runs need a look, said once: how many of its runs failed, on what, and
    one run's details (a failing run that ended "ok" where there is one)."""

    id: str
    failing: int  # its runs that failed
    runs: int  # its runs
    failed: list[str]  # the metrics any of them missed, in the order first seen
    errors: int
    error: str | None  # the first error's text
    shown: QuestionView  # the run whose calls, state and trajectory are shown


def looks(views: list[QuestionView], runs: dict[str, int]) -> list[Look]:
    """``views`` (failing runs, in the page's order) by question, each question once."""
    out: dict[str, Look] = {}
    for v in views:
        look = out.get(v.id)
        if look is None:
            look = out[v.id] = Look(id=v.id, failing=0, runs=runs.get(v.id, 1), failed=[], errors=0, error=None, shown=v)
        look.failing += 1
        look.failed += [m for m in v.failed if m not in look.failed]
        if v.status == "error":
            look.errors += 1
            look.error = look.error or v.error
        elif look.shown.status == "error":
            look.shown = v
    return list(out.values())


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
    # The runs that ended in an error, but for those of an outage (said once, in the headline).
    errored_runs: list[QuestionResult] = field(default_factory=list)
    # Each run's missed pass thresholds (:func:`run_failures`), in the order of ``result.questions``.
    missed: list[list[str]] = field(default_factory=list)
    # Each thresholded metric's pass threshold (:func:`judged_with`), by name.
    thresholds: dict[str, float] = field(default_factory=dict)

    @property
    def held_words(self) -> str:
        """What the table of the metrics that held holds, counted (its timings apart): "23 metrics
        unchanged, 2 changed within noise"; without a base, "25 metrics without a baseline to
        compare with". A count that moved within noise shows two figures: it is not called unchanged."""
        held = [r for r in self.unchanged if r.mark != "info"]
        if self.comparison is None or self.comparison.status != "compared":
            return f"{plural(len(held), 'metric')} without a baseline to compare with"
        moved = sum(1 for r in held if r.folded)
        if moved and moved == len(held):
            return f"{plural(moved, 'metric')} changed within noise"
        return f"{plural(len(held) - moved, 'metric')} unchanged" + (f", {moved} changed within noise" if moved else "")

    @property
    def still(self) -> str:
        """What a dataset with no row in its table says: nothing moved, or that nothing was there
        to compare (no run scored: an interrupted check's; or none paired with a scored base
        run), which "nothing moved" claimed."""
        if not any(summary.n for summary in self.result.summary.values()):
            return "nothing compared: no run was scored"
        comparison = self.comparison
        if comparison is not None and comparison.status == "compared" and not any(m.n_shared for m in comparison.metrics):
            return "nothing compared: no question was scored on both sides"
        return "nothing moved"

    @property
    def added_failing(self) -> int:
        """The questions (of ``looks``) this change adds: no base to be no worse than."""
        added = set(self.comparison.added_questions) if self.comparison is not None else set()
        return sum(1 for look in self.looks if look.id in added)

    @cached_property
    def looks(self) -> list[Look]:
        """The failing runs of ``questions`` by question: each question once (:func:`looks`)."""
        runs: dict[str, int] = {}
        for q in self.result.questions:
            runs[q.id] = runs.get(q.id, 0) + 1
        return looks(self.questions, runs)


def dataset_view(
    dataset: DatasetResult,
    comparison: DatasetComparison | None,
    gate: GateResult | None,
    thresholds: dict[str, float],
    background: Background,
    same_job: bool = False,
) -> DatasetView:
    compared = comparison is not None and comparison.status == "compared"
    every_row = _metric_rows(dataset, comparison, gate, background, compared, same_job)
    # Metrics the base scored and this run did not (no API key: every run an outage) are one
    # line, not a row each of "not scored in this run".
    unscored_now = [r.metric for r in every_row if r.verdict == "removed" and r.mark == "same"]
    rows = [r for r in every_row if r.metric not in unscored_now]
    # Without a baseline nothing is unchanged: every figure is new and shown.
    moved = sorted((r for r in rows if r.moved or not compared), key=lambda r: MARK_ORDER[r.mark])
    _said_once(moved)
    base = background.base_runs.get(dataset.path) if compared else None
    regressed_ids, diffs = _regressed(dataset, comparison, gate, base, background.ignore_state)
    # Each run's missed thresholds, as scoring judged them: every view lists these. Only a run that needs a
    # look (it missed one, or errored outside an outage, said once in the headline) gets its view.
    missed: list[list[str]] = []
    failed_runs: list[tuple[QuestionResult, list[str]]] = []
    errored_runs: list[QuestionResult] = []
    failing: list[QuestionView] = []
    # Runs that errored; the questions, those with a run that errored, and those with one that did not.
    errors, ids, error_ids, run_ids = 0, set[str](), set[str](), set[str]()
    for q in dataset.questions:
        ids.add(q.id)
        (error_ids if q.status == "error" else run_ids).add(q.id)
        errors += q.status == "error"
        failed = run_failures(q, dataset.summary, thresholds)
        missed.append(failed)
        if q.status == "error" and not outage_run(q, gate):
            errored_runs.append(q)
        elif not failed:
            continue
        elif q.status == "ok":
            failed_runs.append((q, failed))
        failing.append(_question_view(q, failed))
    failing.sort(key=lambda v: (v.status != "error", -len(v.failed), v.id, v.run))
    lines = [dataset_line(f) for f in (gate.failures if gate else []) if f.dataset == dataset.path and not f.metric]
    # Questions the base has whose every run ended in an error now: scored on the base only, for every metric.
    added = set(comparison.added_questions) if comparison is not None else set()
    errored_ids = error_ids - run_ids - added
    return DatasetView(
        result=dataset,
        comparison=comparison,
        rows=every_row,
        moved=moved,
        unchanged=[r for r in rows if r not in moved],
        errors=errors,
        unscored={name: s.unscored for name, s in dataset.summary.items() if s.unscored},
        regressed=diffs,
        groups=group_diffs(diffs),
        questions=[v for v in failing if v.id not in regressed_ids],
        failing=len(failing),
        base=base,
        question_count=len(ids),
        lines=lines,
        notes=cost_notes(dataset) + paired_notes(comparison) + not_scored_line(unscored_now),
        unpaired=unpaired_lines(comparison, len(errored_ids), len(ids)),
        flaky=flaky_lines(comparison),
        info=[r for r in rows if r.mark == "info"],
        failed_runs=failed_runs,
        errored_runs=errored_runs,
        missed=missed,
        thresholds=judged_with(dataset.summary, thresholds),
    )


SAME_AS_ABOVE = "fails the gate: as the row above"


def _said_once(rows: list[MetricRow]) -> None:
    """One cause, said once: a dropped sub-agent fails six metrics of the same questions, and
    each row said "fails the gate: q1, q2, q3 pass less often"; the rows after the first say so."""
    previous = None
    for row in rows:
        if row.mark == "fail" and row.words == previous:
            row.words = SAME_AS_ABOVE
        else:
            previous = row.words if row.mark == "fail" else None


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
    ends = trend_ends(dataset, {m.metric for m in metrics if history.get(m.metric)})
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
            change_of(m),
            same_job,
            ends.get(m.metric),
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
    regressed_ids = regressed_questions(dataset, base, comparison)
    if gate is not None and gate.infrastructure is not None:
        # Runs the model/API kept from running are said once, in the headline: no diff of each.
        ran = {q.id for q in dataset.questions if not outage_run(q, gate)}
        regressed_ids = {qid: fell for qid, fell in regressed_ids.items() if qid in ran}
    dropped = dropped_questions(comparison)
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
    # The gate's notes, one cause said once (:func:`notes.gate_notes`).
    notes: list[str] = field(default_factory=list)

    @property
    def gate(self) -> GateResult | None:
        return self.results.gate

    def shows(self, results: Results) -> bool:
        return self.results is results

    @property
    def unchecked(self) -> list[str]:
        """What kept the check from being made, past what the headline says already: an
        interrupted run's reason was the headline and then, word for word, its first item."""
        return unchecked_after(self.headline, self.results.gate.unchecked if self.results.gate is not None else [])

    def context(self) -> dict[str, Any]:
        """The names the templates read: the page's parts, and what they show straight from the results."""
        results = self.results
        return {
            "headline": self.headline,
            "reasons": self.reasons,
            "gate": results.gate,
            "unchecked": self.unchecked,
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
            "notes": self.notes,
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
    # Questions whose every fall is on a metric that reads a part of the reference that changed:
    # their fall is told as that, not as something the agent did.
    edited = {
        (d.result.path, diff.id)
        for d in datasets
        for diff in d.regressed
        if diff.metrics and all(reads_changed(metric, diff.reference_changed) for metric in diff.metrics)
    }
    found = reasons(results, edited)
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
        notes=gate_notes(results.gate.notes) if results.gate is not None else [],
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
