"""The gate: absolute thresholds, noise-aware regressions, hard per-question drops, new errors,
and no pass for a dataset of which nothing could be checked."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from agent_eval_action.config import Config, GateConfig, MetricRule, parse_regression
from agent_eval_action.models.plan import timings_gated
from agent_eval_action.models.results import DatasetResult, Results
from agent_eval_action.models.verdicts import DatasetComparison, GateFailure, GateResult, GateRule, MetricComparison, PassTest
from agent_eval_action.text.markdown import p_words, plural
from agent_eval_action.verdict.comparison import chance_of_hard_drops, ci_on_worse_side, counted_drops, within_spread, worse_amount
from agent_eval_action.verdict.noise import spread_level
from agent_eval_action.verdict.outages import main_cause, outage_cause


def is_timing(metric: str) -> bool:
    """Whether the metric is measured in wall-clock time: its unit (declared where it is registered,
    or a custom metric's) is seconds."""
    from agent_eval_action.metrics.registry import unit_of

    return unit_of(metric) == "seconds"


def metric_kinds(config: Config | None = None, results: Results | None = None) -> dict[str, str]:
    """Metric name -> "reference" | "trace" | "judge", which picks its default rule: as the results
    recorded it, else as the registry and the config's custom metrics say (results written
    before kinds were stored)."""
    from agent_eval_action.metrics import REGISTRY  # the metric modules: only when a verdict is made

    kinds: dict[str, str] = {name: metric.kind for name, metric in REGISTRY.items()}
    if config is not None:
        kinds.update({name: spec.kind for name, spec in config.custom_metrics.items()})
    for dataset in results.datasets if results is not None else []:
        kinds.update({name: s.kind for name, s in dataset.summary.items() if s.kind is not None})
    return kinds


def rule_for(metric: str, kind: str, direction: str, config: GateConfig, criteria: dict[str, float] | None = None) -> MetricRule:
    """The metric's own rule, with the default max_regression for reference metrics that set none.

    ``criteria``: the dataset's own thresholds (ADK test_config.json): a minimum for a
    higher-is-better metric whose rule sets none.
    """
    rule = config.metrics.get(metric, MetricRule())
    if rule.max_regression is None and kind == "reference" and direction == "higher":
        rule = rule.model_copy(update={"max_regression": config.max_regression})
    if criteria and metric in criteria and rule.min is None and direction == "higher":
        rule = rule.model_copy(update={"min": criteria[metric]})
    return rule


def gated_metrics(dataset: DatasetResult, config: GateConfig, kinds: dict[str, str]) -> list[str]:
    """The dataset's metrics that some rule (min, max or max_regression) applies to."""
    out = []
    for name, summary in dataset.summary.items():
        rule = rule_for(name, kinds.get(name, "trace"), summary.direction, config, dataset.criteria)
        if rule.min is not None or rule.max is not None or rule.max_regression is not None:
            out.append(name)
    return out


def _nothing_scored(dataset: DatasetResult, config: GateConfig, kinds: dict[str, str]) -> bool:
    return not any(dataset.summary[name].n for name in gated_metrics(dataset, config, kinds))


def unchecked_datasets(datasets: list[DatasetResult], config: GateConfig, kinds: dict[str, str]) -> list[DatasetResult]:
    """Datasets that ran without an error and still have no score on any gated metric (no
    reference data, no rule for what they have): a check of nothing, which is not a pass."""
    return [d for d in datasets if _nothing_scored(d, config, kinds) and not any(q.status == "error" for q in d.questions)]


@dataclass
class _Found:
    """What the gate finds, dataset by dataset, in the order it finds it."""

    failures: list[GateFailure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    within_noise: list[GateFailure] = field(default_factory=list)
    inconclusive: list[str] = field(default_factory=list)
    # Questions that failed every run here, against a base that passed every run, whose re-runs a
    # budget or the lack of an agent stopped before they could be decided: never a pass.
    stopped: list[str] = field(default_factory=list)
    # (cause, runs not run, runs) of datasets the model/API kept from running.
    outages: list[tuple[str, int, int]] = field(default_factory=list)


def _failure(
    dataset: DatasetResult,
    rule: GateRule,
    detail: str,
    *,
    metric: str | None = None,
    question: str | None = None,
    baseline: float | None = None,
    current: float | None = None,
    limit: float | str | None = None,
    significant: bool | None = None,
) -> GateFailure:
    return GateFailure(
        dataset=dataset.path,
        metric=metric,
        question=question,
        rule=rule,
        message=f"{dataset.name}: {detail}",
        subject=dataset.name,
        detail=detail,
        baseline=baseline,
        current=current,
        limit=limit,
        significant=significant,
    )


def evaluate_gate(
    datasets: list[DatasetResult],
    comparisons: list[DatasetComparison],
    config: GateConfig,
    kinds: dict[str, str],
    *,
    timings: bool = True,
) -> GateResult:
    """``kinds``: metric name -> "reference" | "trace" | "judge" (unknown names count as "trace").
    Comparisons are matched to datasets by path (two datasets may share a name). ``timings``:
    False when the baseline was not run in this job (a PR check with compare-with = "baseline"):
    timings were measured on another machine at another hour, and a rule's
    max_regression on one is a note, never a failure."""
    found = _Found()
    by_path = {c.path: c for c in comparisons}
    for dataset in datasets:
        _gate_dataset(dataset, by_path.get(dataset.path), config, kinds, timings, found)
    result = GateResult(
        outcome="failed" if found.failures else "inconclusive" if found.inconclusive else "passed",
        failures=found.failures,
        notes=found.notes,
        within_noise=found.within_noise,
        inconclusive=found.inconclusive,
        on_inconclusive=config.on_inconclusive,
    )
    if found.stopped and not found.failures:
        # Not a pass because the money ran out: the check could not be checked (exit 3).
        result.outcome = "unchecked"
        result.infrastructure = (
            f"the re-runs stopped before {plural(len(found.stopped), 'question')} that fail every run "
            "(and passed every base run) could be decided"
        )
        result.unchecked = [*found.stopped]
    if found.outages:
        # The cause once, however many runs and datasets it stopped: no list of the same error.
        cause = max(found.outages, key=lambda o: o[1])[0]
        runs = sum(o[1] for o in found.outages)
        total = sum(o[2] for o in found.outages)
        result.outcome, result.infrastructure = "unchecked", cause
        result.unchecked = [f"{cause} ({runs} of {total} question runs could not reach the model: not the PR's doing)"]
    return result


def _gate_dataset(
    dataset: DatasetResult, comparison: DatasetComparison | None, config: GateConfig, kinds: dict[str, str], timings: bool, found: _Found
) -> None:
    """Every rule on one dataset, in order: outages, errors, thresholds, then what the comparison says."""
    name = dataset.name
    outage = main_cause((q.error, q.error_origin) for q in dataset.questions if q.status == "error")
    not_run = outage[1] if outage else 0
    # A model/API error ran nothing of the PR's: it is no error of the agent's. Counted by
    # question: the re-runs of one question that errs are one question that errs.
    errored = {q.id for q in dataset.questions if q.status == "error" and not outage_cause(q.error, q.error_origin)}
    if outage is not None:
        total = len(dataset.questions)
        if not_run > config.max_not_run * total or not_run == sum(1 for q in dataset.questions if q.status != "skipped"):
            found.outages.append((outage[0], not_run, total))
            return
        found.notes.append(f"{name}: {plural(not_run, 'question run')} not run ({outage[0]}): not counted")
    _error_rules(dataset, comparison, errored, not_run, config, kinds, found)
    _threshold_rules(dataset, config, kinds, found)
    if comparison is None or comparison.status != "compared":
        if comparison is not None and comparison.status == "new":
            found.notes.append(f"{name}: no baseline on the base branch; reported as new (run `baseline update` on the default branch)")
        return
    test = comparison.pass_test
    if test is not None:
        _pass_test_rules(dataset, test, config, found)
    tested = set(test.metrics) if test is not None else set()
    for metric in comparison.metrics:
        kind = kinds.get(metric.metric, "trace")
        rule = rule_for(metric.metric, kind, metric.direction, config, dataset.criteria)
        informational = not timings and is_timing(metric.metric)
        _regression_rule(dataset, metric, rule, config, tested=metric.metric in tested, informational=informational, found=found)
        # A metric in the per-question test: its questions' falls are decided there, from their runs.
        if not informational and metric.metric not in tested:
            _drop_rules(dataset, metric, rule, kind, config, found)


def _error_rules(
    dataset: DatasetResult,
    comparison: DatasetComparison | None,
    errored: set[str],
    not_run: int,
    config: GateConfig,
    kinds: dict[str, str],
    found: _Found,
) -> None:
    """``errored``: the questions that ended in the agent's own error (a model/API error is none)."""
    errors = len(errored)
    if errors and _nothing_scored(dataset, config, kinds) and not not_run:
        found.failures.append(
            _failure(
                dataset,
                "nothing_scored",
                f"all {plural(len(dataset.questions), 'run')} ended without a score on a gated metric ({plural(errors, 'error')})",
            )
        )
    if config.max_errors is not None and errors > config.max_errors:
        detail = f"{plural(errors, 'question')} ended in an error (max_errors = {config.max_errors})"
        found.failures.append(_failure(dataset, "max_errors", detail, current=errors))
    if comparison is not None and comparison.pass_test is not None and config.fail_on_new_failing:
        # A question the PR adds whose runs end in an error is told once, as a new failing question.
        errors = len(errored - {q.id for q in comparison.pass_test.new_failing})
    if comparison is not None and comparison.status == "compared" and config.fail_on_new_errors and errors > comparison.baseline_errors:
        detail = f"{plural(errors, 'question')} ended in an error, {comparison.baseline_errors} on the base branch"
        found.failures.append(_failure(dataset, "new_errors", detail, baseline=comparison.baseline_errors, current=errors))


def _threshold_rules(dataset: DatasetResult, config: GateConfig, kinds: dict[str, str], found: _Found) -> None:
    for metric_name, summary in dataset.summary.items():
        rule = rule_for(metric_name, kinds.get(metric_name, "trace"), summary.direction, config, dataset.criteria)
        if summary.mean is None:
            continue
        if rule.min is not None and summary.mean < rule.min:
            source = " (the dataset's ADK criterion)" if config.metrics.get(metric_name, MetricRule()).min is None else ""
            detail = f"{metric_name} = {summary.mean:.4g} is below the minimum {rule.min:g}{source}"
            found.failures.append(_failure(dataset, "min", detail, metric=metric_name, current=summary.mean, limit=rule.min))
        if rule.max is not None and summary.mean > rule.max:
            detail = f"{metric_name} = {summary.mean:.4g} is above the maximum {rule.max:g}"
            found.failures.append(_failure(dataset, "max", detail, metric=metric_name, current=summary.mean, limit=rule.max))


def _pass_test_rules(dataset: DatasetResult, test: PassTest, config: GateConfig, found: _Found) -> None:
    """The per-question pass test's decisions: questions that fell, those in doubt, a fall spread thin."""
    for question in test.tested:
        if question.decision == "failed":
            how = (
                f"every run fails where every base run passed; the baseline holds too few runs to test by: `{REFRESH_RUNS}` "
                "on the base branch records baseline-runs (10 by default) a question"
                if question.short
                else f"Holm over {plural(test.m, 'question')} that could fall, alpha {test.alpha:g}"
            )
            # One failure a metric it fell on (as the per-question guard made them), each
            # with the question's pass rates: the views group them by question.
            for metric_name in question.fell_on or [None]:  # type: ignore[list-item]
                found.failures.append(
                    _failure(
                        dataset,
                        "question_fall",
                        f"question {question.said} ({how})",
                        metric=metric_name,
                        question=question.id,
                        baseline=question.baseline_passes / question.baseline_runs,
                        current=question.passes / question.runs,
                        significant=True,
                    )
                )
        elif question.decision == "inconclusive":
            line = f"{dataset.name}: question {question.said}; {_would_decide(question.runs, test.cap)}"
            if question.passes == 0 and question.baseline_passes == question.baseline_runs:
                # Every run fails where every base run passed: a cap or a budget never passes it.
                found.stopped.append(line)
            else:
                found.inconclusive.append(line)
    _new_question_rules(dataset, test, config, found)
    fell = [q for q in test.tested if q.decision == "failed"]
    if test.spread_p <= spread_level(test.alpha) and not fell:
        detail = (
            f"the pass rate fell over the whole dataset: {test.passes} of {test.runs} runs pass, "
            f"{test.baseline_passes} of {test.baseline_runs} on the base, question by question {p_words(test.spread_p)} "
            "(no one question fell enough to say alone)"
        )
        baseline = test.baseline_passes / test.baseline_runs if test.baseline_runs else None
        current = test.passes / test.runs if test.runs else None
        found.failures.append(_failure(dataset, "pass_rate", detail, baseline=baseline, current=current, significant=True))


def _new_question_rules(dataset: DatasetResult, test: PassTest, config: GateConfig, found: _Found) -> None:
    """Questions the PR adds that no run of passes: a new failing test fails the gate
    (``[gate] fail-on-new-failing = false`` makes it a note)."""
    for question in test.new_failing:
        detail = f"question {question.said}"
        if not config.fail_on_new_failing:
            found.notes.append(f"{dataset.name}: {detail}")
            continue
        found.failures.append(
            _failure(
                dataset,
                "new_question",
                detail,
                question=question.id,
                current=0.0,
                significant=True,
            )
        )


def _regression_rule(
    dataset: DatasetResult,
    metric: MetricComparison,
    rule: MetricRule,
    config: GateConfig,
    *,
    tested: bool,
    informational: bool,
    found: _Found,
) -> None:
    """A metric's max_regression: decided by the pass test (``tested``), a note for a timing not
    timed in this job (``informational``), else a failure unless within noise."""
    if metric.delta is None or metric.baseline is None or rule.max_regression is None:
        return
    name = dataset.name
    amount, relative = parse_regression(rule.max_regression)
    limit = amount * abs(metric.baseline) if relative else amount
    if worse_amount(metric.delta, metric.direction) <= limit + 1e-12:
        return
    moved = f"{metric.metric} {metric.baseline:.4g} -> {metric.current:.4g}"
    if tested:
        # Its runs pass or fail question by question: the per-question test and the
        # dataset-wide pass-rate test decide, from the runs' passes, not the mean, and say so
        # once for the question (no note a metric).
        return
    if informational:
        found.notes.append(
            f"{name}: {moved} is worse than max_regression {rule.max_regression}, not gated: its baseline was timed on another machine "
            'at another hour (compare-with = "base" times both sides in the same job)'
        )
        return
    sure = ci_on_worse_side(metric.ci95, metric.direction)
    shown = f"{moved} (delta {metric.delta:+.4g}"
    ci = f", 95% CI [{metric.ci95[0]:+.4g}, {metric.ci95[1]:+.4g}])" if metric.ci95 else ")"
    allowed = f"max_regression {rule.max_regression}"
    counts = bool(sure or sure is None or not config.require_significance)
    decided = _failure(
        dataset,
        "max_regression",
        f"{shown}{ci} regressed beyond {allowed}" if counts else f"{shown}{ci} is worse than {allowed} but within noise",
        metric=metric.metric,
        baseline=metric.baseline,
        current=metric.current,
        limit=rule.max_regression,
        significant=sure,
    )
    if counts:
        found.failures.append(decided)
    else:
        found.within_noise.append(decided)
        found.notes.append(f"{name}: {shown}{ci} is worse than {allowed} but within noise (the CI includes no change)")


def _drop_rules(dataset: DatasetResult, metric: MetricComparison, rule: MetricRule, kind: str, config: GateConfig, found: _Found) -> None:
    """A metric's hard per-question drops: a failure, or a note saying why not."""
    name = dataset.name
    # By identity: `in` on a list of models compares field by field, drop by drop (quadratic).
    counted = {id(d) for d in counted_drops(metric)}
    for drop in metric.drops:
        line = f"question {drop.id} {drop.metric} fell {drop.baseline:.3g} -> {drop.current:.3g}"
        if within_spread(drop):
            # Its runs disagree: a fall no larger than its own spread is what re-asking it does.
            found.notes.append(f"{name}: {line}, within the spread of its own runs ({drop.spread:.3g}): not a hard drop")
        elif id(drop) not in counted:
            # A coin-toss question can pass its K base runs and fail its K runs here.
            found.notes.append(
                f"{name}: {line}, no more complete falls than the flakiness of the questions explains "
                f"({metric.chance_falls or 0:.2g} expected by chance, {p_words(chance_of_hard_drops(metric) or 1)}): not a hard drop"
            )
        elif config.fail_on_question_drop and kind != "judge" and (kind != "trace" or _has_bounds(rule)):
            # A trace metric (how the run went, not what it got right) is gated only by its own rules.
            found.failures.append(
                _failure(dataset, "question_drop", line, metric=drop.metric, question=drop.id, baseline=drop.baseline, current=drop.current)
            )
        else:
            found.notes.append(f"{name}: {line}")


REFRESH_RUNS = "baseline update"


def _would_decide(runs: int, cap: int) -> str:
    """What would decide an inconclusive question, in words."""
    if runs < cap:
        return f"re-runs stopped at {runs} (a budget, or no agent to re-run it here): up to {cap} runs would decide it"
    return f"its {cap} runs could not decide it: raise [gate] max-reruns, or run `baseline update` for more base runs"


def _has_bounds(rule: MetricRule) -> bool:
    return rule.min is not None or rule.max is not None or rule.max_regression is not None


@dataclass(frozen=True)
class RuleView:
    """The gate's rule for a metric, as the views state it."""

    min: float | None = None
    max: float | None = None
    max_regression: float | str | None = None

    @property
    def gated(self) -> bool:
        return self.min is not None or self.max is not None or self.max_regression is not None


def rules_of(results: Results, gate: GateConfig, kinds: Mapping[str, str]) -> dict[str, RuleView]:
    """Metric -> its rule under the gate config ``gate`` (a ``GateConfig``), for the metrics in ``results``."""
    out: dict[str, RuleView] = {}
    # A PR check against stored baselines compares no timings: their rules' max_regression is not applied.
    untimed = not timings_gated(results.plan)
    for dataset in results.datasets:
        for metric, summary in dataset.summary.items():
            rule = rule_for(metric, kinds.get(metric, "trace"), summary.direction, gate)
            regression = None if untimed and is_timing(metric) else rule.max_regression
            view = RuleView(min=rule.min, max=rule.max, max_regression=regression)
            if view.gated:
                out[metric] = view
    return out
