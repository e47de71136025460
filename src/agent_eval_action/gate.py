"""The gate: absolute thresholds, noise-aware regressions, hard per-question drops, new errors."""

from __future__ import annotations

from agent_eval_action.compare import ci_on_worse_side, worse_amount
from agent_eval_action.config import GateConfig, MetricRule, parse_regression
from agent_eval_action.models import DatasetComparison, DatasetResult, GateResult


def rule_for(metric: str, kind: str, direction: str, config: GateConfig) -> MetricRule:
    """The metric's own rule, with the default max_regression for reference metrics that set none."""
    rule = config.metrics.get(metric, MetricRule())
    if rule.max_regression is None and kind == "reference" and direction == "higher":
        rule = rule.model_copy(update={"max_regression": config.max_regression})
    return rule


def evaluate_gate(
    datasets: list[DatasetResult],
    comparisons: list[DatasetComparison],
    config: GateConfig,
    kinds: dict[str, str],
) -> GateResult:
    """``kinds``: metric name -> "reference" | "trace" | "judge" (unknown names count as "trace")."""
    failures: list[str] = []
    notes: list[str] = []
    by_name = {c.dataset: c for c in comparisons}
    for dataset in datasets:
        comparison = by_name.get(dataset.name)
        errors = sum(1 for q in dataset.questions if q.status == "error")
        if config.max_errors is not None and errors > config.max_errors:
            failures.append(f"{dataset.name}: {errors} questions ended in an error (max_errors = {config.max_errors})")
        if comparison is not None and comparison.status == "compared" and config.fail_on_new_errors and errors > comparison.baseline_errors:
            failures.append(f"{dataset.name}: {errors} questions ended in an error, {comparison.baseline_errors} on the base branch")
        for name, summary in dataset.summary.items():
            rule = rule_for(name, kinds.get(name, "trace"), summary.direction, config)
            if summary.mean is None:
                continue
            if rule.min is not None and summary.mean < rule.min:
                failures.append(f"{dataset.name}: {name} = {summary.mean:.4g} is below the minimum {rule.min:g}")
            if rule.max is not None and summary.mean > rule.max:
                failures.append(f"{dataset.name}: {name} = {summary.mean:.4g} is above the maximum {rule.max:g}")
        if comparison is None or comparison.status != "compared":
            if comparison is not None and comparison.status == "new":
                notes.append(
                    f"{dataset.name}: no baseline on the base branch; reported as new (run `baseline update` on the default branch)"
                )
            continue
        for metric in comparison.metrics:
            kind = kinds.get(metric.metric, "trace")
            rule = rule_for(metric.metric, kind, metric.direction, config)
            if metric.delta is not None and metric.baseline is not None and rule.max_regression is not None:
                amount, relative = parse_regression(rule.max_regression)
                limit = amount * abs(metric.baseline) if relative else amount
                worse = worse_amount(metric.delta, metric.direction)
                if worse > limit + 1e-12:
                    sure = ci_on_worse_side(metric.ci95, metric.direction)
                    shown = f"{metric.metric} {metric.baseline:.4g} -> {metric.current:.4g} (delta {metric.delta:+.4g}"
                    ci = f", 95% CI [{metric.ci95[0]:+.4g}, {metric.ci95[1]:+.4g}])" if metric.ci95 else ")"
                    allowed = f"max_regression {rule.max_regression}"
                    if sure or sure is None or not config.require_significance:
                        failures.append(f"{dataset.name}: {shown}{ci} regressed beyond {allowed}")
                    else:
                        notes.append(f"{dataset.name}: {shown}{ci} is worse than {allowed} but within noise (the CI includes no change)")
            for drop in metric.drops:
                line = f"{dataset.name}: question {drop.id} {drop.metric} fell {drop.baseline:.3g} -> {drop.current:.3g}"
                if config.fail_on_question_drop and kind != "judge":
                    failures.append(line)
                else:
                    notes.append(line)
    return GateResult(passed=not failures, failures=failures, notes=notes)
