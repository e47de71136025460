"""A short plain-text view of results for the terminal."""

from __future__ import annotations

from agent_eval_action.models import DatasetResult, MetricSummary, Results


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


def dataset_table(dataset: DatasetResult) -> list[str]:
    errors = sum(1 for q in dataset.questions if q.status == "error")
    lines = [f"{dataset.name} ({dataset.format}, {len(dataset.questions)} runs, {errors} errors) - {dataset.path}"]
    scored = {name: s for name, s in dataset.summary.items() if s.n}
    if scored:
        width = max(len(name) for name in scored)
        lines.append(f"  {'metric':<{width}}  {'mean':>9}  {'95% CI':>20}  {'n':>5}  {'unscored':>8}")
        for name, s in scored.items():
            lines.append(f"  {name:<{width}}  {_num(s.mean):>9}  {_ci(s):>20}  {s.n:>5}  {s.unscored:>8}")
    for name, s in dataset.summary.items():
        if not s.n:
            reason = next(iter(s.unscored_reasons), "unscored")
            lines.append(f"  {name}: unscored ({reason})")
    for question in dataset.questions:
        if question.status == "error":
            lines.append(f"  error in {question.id}: {question.error}")
    return lines


def render(results: Results) -> str:
    lines: list[str] = []
    for dataset in results.datasets:
        lines.extend(dataset_table(dataset))
        lines.append("")
    return "\n".join(lines)
