"""A short plain-text view of results for the terminal."""

from __future__ import annotations

from agent_eval_action.models import DatasetComparison, DatasetResult, GateResult, MetricSummary, Results


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if value != 0 and abs(value) < 0.001:
        return f"{value:.2e}"
    return f"{value:.3f}"


def _ci(summary: MetricSummary) -> str:
    return f"[{_num(summary.ci95[0])}, {_num(summary.ci95[1])}]" if summary.ci95 else "-"


# Failing runs named under a dataset's table; the rest are counted (results.json has them all).
FAILING_SHOWN = 10


def dataset_table(dataset: DatasetResult, thresholds: dict[str, float] | None = None) -> list[str]:
    errors = sum(1 for q in dataset.questions if q.status == "error")
    lines = [f"{dataset.name} ({dataset.format}, {len(dataset.questions)} runs, {errors} errors) - {dataset.path}"]
    scored = {name: s for name, s in dataset.summary.items() if s.n}
    if scored:
        width = max(len(name) for name in scored)
        lines.append(f"  {'metric':<{width}}  {'mean':>9}  {'95% CI':>20}  {'n':>5}  {'unscored':>8}")
        for name, s in scored.items():
            lines.append(f"  {name:<{width}}  {_num(s.mean):>9}  {_ci(s):>20}  {s.n:>5}  {s.unscored:>8}")
    passes = [f"{name} {s.pass_hat_k:.3f}" for name, s in dataset.summary.items() if s.pass_hat_k is not None]
    if passes:
        k = max(s.runs for s in dataset.summary.values())
        lines.append(f"  pass^{k} (every run of a question passes): " + ", ".join(passes))
    for name, s in dataset.summary.items():
        if not s.n:
            reason = next(iter(s.unscored_reasons), "unscored")
            lines.append(f"  {name}: unscored ({reason})")
    for question in dataset.questions:
        if question.status == "error":
            lines.append(f"  error in {question.id}: {question.error}")
    if thresholds:
        from agent_eval_action.render import failed_metrics

        failing = [
            (q, failed) for q in dataset.questions if q.status == "ok" and (failed := failed_metrics(q, thresholds, dataset.summary))
        ]
        for question, failed in failing[:FAILING_SHOWN]:
            run = f" (run {question.run})" if question.run else ""
            lines.append(f"  failed {question.id}{run}: {', '.join(failed)}")
        if len(failing) > FAILING_SHOWN:
            lines.append(f"  ... and {len(failing) - FAILING_SHOWN} more failing runs (see results.json)")
    return lines


VERDICT_MARK = {"improved": "+", "regressed": "!", "unchanged": " ", "new": "*", "removed": "-"}


def _delta(value: float | None) -> str:
    return "-" if value is None else f"{value:+.3f}" if abs(value) < 1000 else f"{value:+,.0f}"


def comparison_table(comparison: DatasetComparison) -> list[str]:
    if comparison.status == "removed":
        return [f"{comparison.dataset}: dataset deleted in this change ({comparison.path})"]
    head = f"{comparison.dataset} vs baseline" if comparison.status == "compared" else f"{comparison.dataset}: no baseline yet (new)"
    lines = [head]
    if comparison.added_questions or comparison.removed_questions:
        lines.append(f"  questions added: {len(comparison.added_questions)}, removed: {len(comparison.removed_questions)}")
    shown = [m for m in comparison.metrics if m.current is not None or m.baseline is not None]
    if comparison.status == "compared" and shown:
        width = max(len(m.metric) for m in shown)
        lines.append(f"    {'metric':<{width}}  {'baseline':>9}  {'current':>9}  {'delta':>9}  {'95% CI of delta':>20}  verdict")
        for m in shown:
            ci = f"[{_delta(m.ci95[0])}, {_delta(m.ci95[1])}]" if m.ci95 else "-"
            lines.append(
                f"  {VERDICT_MARK[m.verdict]} {m.metric:<{width}}  {_num(m.baseline):>9}  {_num(m.current):>9}  {_delta(m.delta):>9}  {ci:>20}  {m.verdict}"
            )
    return lines


GATE_HEADLINE = {"passed": "gate: passed", "failed": "gate: FAILED", "unchecked": "gate: COULD NOT BE CHECKED"}


def gate_lines(gate: GateResult) -> list[str]:
    lines = [GATE_HEADLINE[gate.outcome]]
    lines.extend(f"  ? {reason}" for reason in gate.unchecked)
    lines.extend(f"  x {failure.message}" for failure in gate.failures)
    lines.extend(f"  - {note}" for note in gate.notes)
    if gate.config_changes:
        lines.append(f"  this PR changes the gate (applies after merge; rules from {gate.rules_from}):")
        lines.extend(f"    {change}" for change in gate.config_changes)
    return lines


def render(results: Results, thresholds: dict[str, float] | None = None) -> str:
    """The terminal view; with pass thresholds (``Config.pass_thresholds()``) failing runs are named."""
    lines: list[str] = []
    if results.selection is not None and results.selection.mode == "changed":
        sel = results.selection
        lines.append(f"selected {len(sel.selected)} dataset(s) against {sel.base_ref} (merge-base {str(sel.merge_base)[:12]})")
        lines.extend(f"  {s.path}: {s.reason}" for s in sel.selected)
        lines.extend(f"  {d}: deleted" for d in sel.deleted)
        lines.append("")
    for dataset in results.datasets:
        lines.extend(dataset_table(dataset, thresholds))
        lines.append("")
    for comparison in results.comparison or []:
        lines.extend(comparison_table(comparison))
        lines.append("")
    if results.gate is not None:
        lines.extend(gate_lines(results.gate))
    return "\n".join(lines)
