"""The plain-text view of results for the terminal, in the comment's order: verdict, what moved, why."""

from __future__ import annotations

from agent_eval_action.models.results import QuestionResult, Results
from agent_eval_action.models.scores import MetricSummary
from agent_eval_action.text.figures import figure
from agent_eval_action.text.markdown import plural, show_controls
from agent_eval_action.views.background import Background
from agent_eval_action.views.figures import ci, fmt, signed, unit
from agent_eval_action.views.page import DatasetView, Page, expected_lines, page_of, run_failures


def _figure(value: float | None, summary: MetricSummary, metric: str) -> str:
    """A figure of the summary's metric in the unit the results store for it, else the registry's."""
    return figure(value, summary.unit or unit(metric)) if value is not None else "-"


def _ci(summary: MetricSummary, metric: str) -> str:
    """A mean's interval in the metric's unit, as figures (not changes)."""
    return f"[{_figure(summary.ci95[0], summary, metric)}, {_figure(summary.ci95[1], summary, metric)}]" if summary.ci95 else "-"


def unscored_words(summary: MetricSummary) -> str:
    """Every reason a metric went unscored, with its count: the first reason alone ("no reference
    response") hid that the questions with a reference were unscored for another."""
    reasons = sorted(summary.unscored_reasons.items(), key=lambda item: -item[1])
    if len(reasons) <= 1:
        return reasons[0][0] if reasons else "unscored"
    return "; ".join(f"{reason}: {plural(count, 'run')}" for reason, count in reasons)


# Failing runs named under a dataset's table; the rest are counted (results.json has them all).
FAILING_SHOWN = 10


# The runs named beside an error that several ended in; the rest are counted.
RUNS_NAMED = 5


def error_lines(errored: list[QuestionResult]) -> list[str]:
    """What the runs that ended in an error said, each error once with the runs that ended in it
    (an outage's cause was a line per question, eight times the same); the first
    :data:`FAILING_SHOWN` errors, the rest counted (results.json has them all)."""
    by_error: dict[str, list[str]] = {}
    for q in errored:
        by_error.setdefault(q.error or "(no message)", []).append(f"{q.id} (run {q.run})" if q.run else q.id)
    lines = []
    for error, runs in list(by_error.items())[:FAILING_SHOWN]:
        if len(runs) == 1:
            lines.append(f"  error in {runs[0]}: {error}")
            continue
        more = f" and {len(runs) - RUNS_NAMED} more" if len(runs) > RUNS_NAMED else ""
        lines.append(f"  error in {len(runs)} runs ({', '.join(runs[:RUNS_NAMED])}{more}), each: {error}")
    if len(by_error) > FAILING_SHOWN:
        rest = list(by_error.values())[FAILING_SHOWN:]
        lines.append(f"  ... and {plural(len(rest), 'more error')} in {plural(sum(map(len, rest)), 'run')} (see results.json)")
    return lines


def dataset_table(view: DatasetView, thresholds: dict[str, float] | None = None) -> list[str]:
    """The dataset's full metric table; with ``thresholds``, the ok runs that missed one, with the
    metrics missed, as the page lists them (:attr:`DatasetView.failed_runs`)."""
    dataset = view.result
    errors, questions = view.errors, view.question_count  # counted once, by the page
    counted = f"{plural(questions, 'question')}, {plural(len(dataset.questions), 'run')}"
    lines = [f"{dataset.name} ({dataset.format}, {counted}, {plural(errors, 'error')}) - {dataset.path}"]
    scored = {name: s for name, s in dataset.summary.items() if s.n}
    if scored:
        width = max(len(name) for name in scored)
        lines.append(f"  {'metric':<{width}}  {'mean':>9}  {'95% CI':>22}  {'n':>5}  {'unscored':>8}")
        for name, s in scored.items():
            lines.append(f"  {name:<{width}}  {_figure(s.mean, s, name):>9}  {_ci(s, name):>22}  {s.n:>5}  {s.unscored:>8}")
    passes = [f"{name} {s.pass_hat_k:.3f}" for name, s in dataset.summary.items() if s.pass_hat_k is not None]
    if passes:
        k = max(s.runs for s in dataset.summary.values())
        lines.append(f"  pass^{k} (every run of a question passes): " + ", ".join(passes))
    for name, s in dataset.summary.items():
        if not s.n:
            lines.append(f"  {name}: unscored ({unscored_words(s)})")
    lines.extend(error_lines([question for question in dataset.questions if question.status == "error"]))
    if thresholds:
        failing = view.failed_runs
        shown = {(v.id, v.run): v for v in view.questions}
        for question, failed in failing[:FAILING_SHOWN]:
            run = f" (run {question.run})" if question.run else ""
            lines.append(f"  failed {question.id}{run}: {', '.join(failed)}")
            # What it did against what the question expects, as the comment shows a run that needs a look.
            seen = shown.get((question.id, question.run))
            lines.extend(f"    {line}" for line in (expected_lines(seen) if seen is not None else [])[:DIFF_ROWS_SHOWN])
        if len(failing) > FAILING_SHOWN:
            lines.append(f"  ... and {len(failing) - FAILING_SHOWN} more failing runs (see results.json)")
    return lines


MARK = {"fail": "x", "worse": "!", "better": "+", "same": " ", "new": "*", "info": "i"}
GATE_HEADLINE = {
    "passed": "gate: passed",
    "failed": "gate: FAILED",
    "inconclusive": "gate: INCONCLUSIVE",
    "unchecked": "gate: COULD NOT BE CHECKED",
}
# Regressed questions shown under a dataset, and rows of each one's base-vs-this-run comparison.
REGRESSED_SHOWN = 10
DIFF_ROWS_SHOWN = 8


def verdict_lines(shown: Page) -> list[str]:
    """The verdict and its reasons in words, the unchecked parts, and what the PR changes in the gate."""
    gate = shown.gate
    if gate is None:
        return []
    headline = shown.headline.split(": ", 1)
    lines = [GATE_HEADLINE[gate.outcome] + (f" - {headline[1]}" if len(headline) > 1 else "")]
    lines.extend(f"  ? {reason}" for reason in shown.unchecked)
    lines.extend(f"  ~ {reason}" for reason in gate.inconclusive)
    found = shown.reasons
    if len(found) == 1 and gate.outcome == "failed":
        lines.append(f"  {found[0].detail}" if found[0].detail else "")
    else:
        lines.extend(f"  x {r.short}" + (f": {r.detail}" if r.detail else "") for r in found)
    if gate.config_changes:
        lines.append(f"  this PR changes the gate (applies after merge; rules from {gate.rules_from}):")
        lines.extend(f"    {change}" for change in gate.config_changes)
    return [line for line in lines if line]


def _wrapped(prefix: str, items: list[str], width: int = 110) -> list[str]:
    """``items`` after ``prefix``, wrapped at ``width`` between items, never inside one ("1.00 s ->
    0.10 s" stays on a line); a prefix longer than half the width goes on a line of its own, the
    items indented under it, when they do not fit beside it."""
    import textwrap

    if not items:
        return []
    text = ", ".join(item.replace(" ", "\0") for item in items)
    if len(prefix) > width // 2 and len(prefix) + len(text) > width:
        indent = " " * (len(prefix) - len(prefix.lstrip()) + 2)
        lines = [prefix.rstrip(), *textwrap.wrap(text, width=width, initial_indent=indent, subsequent_indent=indent)]
    else:
        lines = textwrap.wrap(text, width=width, initial_indent=prefix, subsequent_indent=" " * len(prefix))
    return [line.replace("\0", " ") for line in lines]


def moved_lines(d: DatasetView, label: str | None, *, base_is_run: bool = False) -> list[str]:
    """What moved (marked), then the unchanged metrics in one wrapped line. ``base_is_run``: the
    label names the base's run now, which has no baseline file to name beside it."""
    lines = []
    where = ""
    if d.comparison is not None and d.comparison.status == "compared":
        where = f"compared with {label}" if label else "compared with its baseline"
        if d.comparison.baseline_path and not base_is_run:
            where += f" ({d.comparison.baseline_path})"
    elif d.comparison is not None and d.comparison.status == "new":
        where = "no baseline yet: run `baseline update` on the default branch"
    if where:
        lines.append(f"  {where}")
    lines.extend(f"  x {line}" for line in d.lines)
    if d.moved:
        width = max(len(r.metric) for r in d.moved)
        trends = max((len(r.trend) for r in d.moved), default=0)
        title = "what moved" if d.comparison is not None and d.comparison.status == "compared" else "metric"
        compared = d.comparison is not None and d.comparison.status == "compared"
        head = f"    {title:<{width}}  {'base':>9}  {'this run':>9}  " + (f"{'n':>4}  " if compared else "")
        head += f"{'change':>10}  {'95% CI of change':>22}"
        lines.append(head + (f"  {'trend':<{trends}}" if trends else ""))
        for r in d.moved:
            interval = ci(r.ci95, r.metric)
            trend = f"  {r.trend:<{max(trends, 5)}}" if trends else ""
            n = f"{r.n or '-':>4}  " if compared else ""
            lines.append(
                f"  {MARK[r.mark]} {r.metric:<{width}}  {fmt(r.baseline, r.metric):>9}  {fmt(r.current, r.metric):>9}  {n}"
                f"{signed(r.delta, r.metric):>10}  {interval:>22}{trend}  {r.words}"
            )
    else:
        lines.append(f"  {d.still}")
    held = [r for r in d.unchanged if r.mark != "info" and not r.folded]
    lines.extend(_wrapped(f"  unchanged ({len(held)}): ", [f"{r.metric} {fmt(r.current, r.metric)}" for r in held]))
    moved = [f"{r.metric} {fmt(r.baseline, r.metric)} -> {fmt(r.current, r.metric)}" for r in d.unchanged if r.mark != "info" and r.folded]
    lines.extend(_wrapped(f"  changed within noise ({len(moved)}): ", moved))
    info = [f"{r.metric} {fmt(r.baseline, r.metric)} -> {fmt(r.current, r.metric)}" for r in d.info]
    lines.extend(_wrapped("  timings, for information (they move with the machine; no rule gates them): ", info))
    lines.extend(f"  not paired: {line}" for line in d.unpaired)
    lines.extend(f"  flaky: {line}" for line in d.flaky)
    return lines


def why_lines(d: DatasetView) -> list[str]:
    """The questions that got worse, each with what its run did differently from the base run."""
    lines: list[str] = []
    if d.regressed:
        lines.append(f"  why: {len(d.regressed)} question{'s' if len(d.regressed) != 1 else ''} got worse than on the base")
        for group in d.groups[:REGRESSED_SHOWN]:
            lines.append(f"    {group.label}: {', '.join(group.questions[0].fell)}")
            rows = [r for r in group.rows if r.kind != "score"]
            width = max((len(r.label) for r in rows[:DIFF_ROWS_SHOWN]), default=0)
            for r in rows[:DIFF_ROWS_SHOWN]:
                lines.append(f"      {r.label:<{width}}  base: {r.base}")
                lines.append(f"      {'':<{width}}  now:  {r.head}")
            if len(rows) > DIFF_ROWS_SHOWN:
                lines.append(f"      ... and {len(rows) - DIFF_ROWS_SHOWN} more differences (report.html)")
        if len(d.groups) > REGRESSED_SHOWN:
            lines.append(f"    ... and {sum(g.count for g in d.groups[REGRESSED_SHOWN:])} more (report.html)")
    lines.extend(failing_lines(d))
    return lines


def _named(items: list[str]) -> list[str]:
    return items[:FAILING_SHOWN] + ([f"... and {len(items) - FAILING_SHOWN} more"] if len(items) > FAILING_SHOWN else [])


def failing_lines(d: DatasetView) -> list[str]:
    """The failing runs that did not get worse, by question: each question once with how many of
    its runs failed and on what; a metric its questions fail on the base too said once, as a
    known failure; a question this PR adds apart (it has no base to be no worse than)."""
    if not d.questions:
        return []
    runs: dict[str, int] = {}
    for run in d.result.questions:
        runs[run.id] = runs.get(run.id, 0) + 1
    known = _failing_on_base(d)
    added = set(d.comparison.added_questions) if d.comparison is not None else set()
    failed: dict[str, dict[str, None]] = {}
    count: dict[str, int] = {}
    errors: dict[str, int] = {}
    also: dict[str, dict[str, None]] = {}  # metric -> the questions that fail it on the base too
    for v in d.questions:
        metrics = failed.setdefault(v.id, {})
        count[v.id] = count.get(v.id, 0) + 1
        if v.status == "error":
            errors[v.id] = errors.get(v.id, 0) + 1
        metrics.update(dict.fromkeys(m for m in v.failed if (v.id, m) not in known))
        for m in v.failed:
            if (v.id, m) in known:
                also.setdefault(m, {})[v.id] = None
    lines: list[str] = []
    # Metrics failed on the base too by the same questions: one line for them all.
    alike: dict[tuple[str, ...], list[str]] = {}
    for metric, known_ids in also.items():
        alike.setdefault(tuple(known_ids), []).append(metric)
    for ids, known_metrics in alike.items():
        more = f" and {len(ids) - 3} more" if len(ids) > 3 else ""
        whose = "its threshold" if len(known_metrics) == 1 else "their thresholds"
        named = f"{plural(len(ids), 'question')} ({', '.join(ids[:3])}{more})"
        lines.append(f"  {', '.join(known_metrics)} below {whose} on the base too: {named}")
    said: dict[bool, list[str]] = {True: [], False: []}
    for qid, metrics in failed.items():
        what = ", ".join(metrics)
        if errors.get(qid):
            what = ", ".join(p for p in (f"{plural(errors[qid], 'error')}", what) if p)
        if not what:
            continue  # its only failures are known ones, said above
        of = f"{count[qid]} of {runs[qid]} runs: " if runs[qid] > 1 else ""
        said[qid in added].append(f"{qid} ({of}{what})")
    where = " (no worse than on the base)" if d.base is not None else ""
    lines.extend(_wrapped(f"  failing{where}: ", _named(said[False])))
    lines.extend(_wrapped("  failing, added by this change (no base to compare with): ", _named(said[True])))
    return lines


def _failing_on_base(d: DatasetView) -> set[tuple[str, str]]:
    """(question, metric) pairs that some base run of the question misses too."""
    if d.base is None:
        return set()
    return {(q.id, m) for q in d.base.questions if q.status == "ok" for m in run_failures(q, d.base.summary, d.thresholds)}


def render(page: Page | Results, thresholds: dict[str, float] | None = None, background: Background | None = None) -> str:
    """The terminal view, in the comment's order: the verdict and why in words, then per dataset
    what moved and the questions that got worse. Datasets without a comparison (``evaluate``)
    get their full metric table; with pass thresholds (``Config.pass_thresholds()``) failing runs are named.
    ``page``: the page the other views show (given results, one is built from them and the
    ``thresholds`` and ``background``)."""
    shown = page_of(page, thresholds, background)
    results, thresholds = shown.results, shown.thresholds
    lines = verdict_lines(shown)
    if lines:
        lines.append("")
    if results.selection is not None and results.selection.mode == "changed":
        sel = results.selection
        lines.append(f"selected {plural(len(sel.selected), 'dataset')} against {sel.base_ref} (merge-base {str(sel.merge_base)[:12]})")
        lines.extend(f"  {s.path}: {s.reason}" for s in sel.selected)
        lines.extend(f"  {d}: deleted" for d in sel.deleted)
        lines.append("")
    for dataset, d in zip(results.datasets, shown.datasets, strict=True):
        if d.comparison is None:
            lines.extend(dataset_table(d, thresholds))
            lines.extend(f"  {note}" for note in d.notes)
        else:
            lines.append(
                f"{dataset.name} ({dataset.format}, {plural(d.question_count, 'question')}, {plural(len(dataset.questions), 'run')}, {plural(d.errors, 'error')}) - {dataset.path}"
            )
            lines.extend(f"  {note}" for note in d.notes)
            lines.extend(moved_lines(d, shown.base_label, base_is_run=shown.base_is_run))
            lines.extend(why_lines(d))
            # What an errored run said: the reason a reviewer needs first (results.json has them all).
            lines.extend(error_lines(d.errored_runs))
        lines.append("")
    for comparison in shown.removed:
        lines.append(f"{comparison.dataset}: dataset deleted in this change ({comparison.path})")
        lines.append("")
    if shown.run_line:
        lines.append(f"run: {shown.run_line}")
    lines.extend(f"model drift: {line}" for line in results.drift_notes)
    if shown.notes:
        lines.append("notes:")
        lines.extend(f"  - {note}" for note in shown.notes)
    return show_controls("\n".join(lines).rstrip("\n"))  # bidi controls in agent text shown as escapes
