"""One metric's row of a dataset's table: its figures, its mark (fails / worse / better / unchanged /
new / information) and why it has that mark, in words, from what the gate stored."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Literal

from agent_eval_action.models.scores import MetricSummary
from agent_eval_action.models.verdicts import GateFailure, MetricComparison
from agent_eval_action.repo.history import Point
from agent_eval_action.verdict.gate import RuleView
from agent_eval_action.views.figures import fmt, limit_words, signed, spark, unit

Mark = Literal["fail", "worse", "better", "same", "new", "info"]
# "info": a timing no rule gates, measured on another machine at another hour than its baseline.
MARKS: dict[str, str] = {"fail": "🔴", "worse": "⚠️", "better": "🟢", "same": "⚪", "new": "🆕", "info": "ℹ️"}
INFO_WORDS = (
    "a timing: it moves with the machine and its load, shown for information (compare-with = base and a rule on it would compare it)"
)
MARK_ORDER = {"fail": 0, "worse": 1, "better": 2, "new": 3, "same": 4, "info": 5}


@dataclass
class MetricRow:
    metric: str
    direction: str
    baseline: float | None
    current: float | None
    delta: float | None
    ci95: tuple[float, float] | None
    verdict: str
    mark: Mark
    words: str  # why the row has its mark, in words
    unscored: int
    rule: RuleView | None
    points: list[Point] = field(default_factory=list)  # the baseline history, oldest first
    moved: bool = False
    # Questions both runs scored: what Base, This PR and Change average (0: no pairs, or no base).
    n: int = 0
    # A count or a timing that moved within noise: folded with what held, said apart from it.
    folded: bool = False
    # Where the trend ends: this run's mean over all its scored questions, each question's runs
    # averaged first, as the history's points are (``verdict_facts.trend_ends``).
    overall: float | None = None

    @property
    def emoji(self) -> str:
        return MARKS[self.mark]

    @property
    def trend(self) -> str:
        """History then this run's value: ``▇▇▇▇→▄``; empty without history."""
        if not self.points:
            return ""
        line = spark([p.value for p in self.points] + [self.overall if self.overall is not None else self.current], self.metric)
        return line[:-1] + "→" + line[-1]


def by_metric(records: list[GateFailure], path: str) -> dict[str, list[GateFailure]]:
    out: dict[str, list[GateFailure]] = defaultdict(list)
    for failure in records:
        if failure.dataset == path and failure.metric:
            out[failure.metric].append(failure)
    return out


def _fail_words(failures: list[GateFailure], noise: GateFailure | None, metric: str, row: MetricComparison | None) -> str:
    """What the gate decided, in words: its stored limits and figures, never worked out again here."""
    parts = []
    drops = [f for f in failures if f.rule == "question_drop"]
    if drops:
        pairs = sorted({(fmt(f.baseline, metric), fmt(f.current, metric)) for f in drops})
        change = ", ".join(f"{a} → {b}" for a, b in pairs[:3])
        parts.append(f"{len(drops)} question{'s' if len(drops) != 1 else ''} dropped ({change})")
    falls = [f for f in failures if f.rule == "question_fall"]
    if falls:  # the questions, told once with their runs in the verdict's reason: named here, not told again
        ids = list(dict.fromkeys(f.question or "" for f in falls))
        named = ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
        parts.append(f"{named} {'passes' if len(ids) == 1 else 'pass'} less often than on the base")
    for failure in failures:
        if failure.rule == "max_regression" and row is not None and row.delta is not None:
            parts.append(f"regressed {signed(row.delta, metric)}, more than {limit_words(failure.limit, metric)}")
        elif failure.rule in ("min", "max") and isinstance(failure.limit, float | int):
            where = "under the minimum" if failure.rule == "min" else "over the maximum"
            parts.append(f"{where} {fmt(failure.limit, metric)}")
        elif failure.rule not in ("question_drop", "question_fall", "max_regression", "min", "max"):
            parts.append(failure.detail or failure.message)
    if row is not None and noise is not None:
        # What failed comes first; the mean's fall is said apart, as what fails nothing by itself.
        parts.append(
            f"the mean fell {signed(row.delta, metric)}, more than {limit_words(noise.limit, metric)}, "
            "which alone fails nothing as it is within noise"
        )
    return "fails the gate: " + "; ".join(p for p in parts if p)


def _worse_words(row: MetricComparison, rule: RuleView | None, noise: GateFailure | None, significant: bool) -> str:
    """A worse row that does not fail the gate, in words: never "unchanged". ``noise``: the gate's
    record of a change beyond max_regression that it did not count; without it, the change was within."""
    if row.ci95 is None:
        words = "too few shared questions to tell noise"
    else:
        words = "beyond noise" if significant else "within noise"
    if noise is not None:
        return f"worse by more than {limit_words(noise.limit, row.metric)}, but {words}"
    if rule is None or rule.max_regression is None or row.delta is None or row.baseline is None:
        return f"worse, {words}; no rule gates it" if significant else f"worse, {words}"
    return f"worse, {words}; within {limit_words(rule.max_regression, row.metric)}"


@dataclass(frozen=True)
class Change:
    """What the verdict knows of a metric's change and does not yet hand over in structured form,
    read in one place (``verdict_facts.change_of``): nil, the worse way, surely worse, a timing."""

    unchanged: bool  # within the comparison's epsilon
    worse: bool  # the worse way for the metric's direction
    sure: bool | None  # (worse only) its 95% CI wholly on the worse side; None: no CI
    timing: bool  # measured in wall-clock time


def metric_row(
    comparison: MetricComparison,
    summary: MetricSummary | None,
    failures: list[GateFailure],
    noise: GateFailure | None,
    rule: RuleView | None,
    points: list[Point],
    compared: bool,
    change: Change,
    same_job: bool = False,
    end: float | None = None,
) -> MetricRow:
    """``end``: where the trend ends (``verdict_facts.trend_ends``); this run's mean over its
    runs where not given."""
    metric = comparison.metric
    mark, words, folded = row_mark(comparison, failures, noise, rule, compared, change, same_job)
    unscored = summary.unscored if summary else 0
    threshold = rule is not None and (rule.min is not None or rule.max is not None)
    shown_apart = fmt(comparison.baseline, metric) != fmt(comparison.current, metric) and comparison.baseline is not None
    # A timing no rule gates is folded with what held: a PR that changes only the machine moves nothing.
    visible = shown_apart and mark != "info" and not folded
    return MetricRow(
        metric=metric,
        direction=comparison.direction,
        baseline=comparison.baseline,
        current=comparison.current,
        delta=comparison.delta,
        ci95=comparison.ci95,
        verdict=comparison.verdict,
        mark=mark,
        words=words,
        unscored=unscored,
        rule=rule,
        points=points if rule is not None and rule.gated else [],
        moved=bool(failures) or threshold or visible,
        n=comparison.n_shared if compared else 0,
        overall=end if end is not None else summary.mean if summary is not None else comparison.current,
        folded=folded and shown_apart,  # shown as two figures: not called unchanged
    )


def row_mark(
    comparison: MetricComparison,
    failures: list[GateFailure],
    noise: GateFailure | None,
    rule: RuleView | None,
    compared: bool,
    change: Change,
    same_job: bool,
) -> tuple[Mark, str, bool]:
    """The row's mark, why in words, and whether it is folded with what held (a count that moved
    within noise)."""
    metric = comparison.metric
    mark: Mark
    folded = False
    if failures:
        mark, words = "fail", _fail_words(failures, noise, metric, comparison)
    elif comparison.verdict == "removed":
        mark, words = "same", "not scored in this run"
    elif not compared or comparison.baseline is None or comparison.delta is None:
        mark, words = "new", "no baseline to compare with"
    elif change.unchanged:
        mark, words = "same", "unchanged"
    elif comparison.direction == "neutral":
        mark, words = "same", "changed (neither better nor worse)"
    else:
        worse, sure = change.worse, change.sure
        significant = comparison.verdict in ("regressed", "improved")
        if not (bool(sure) or significant) and noise is None and unit(metric) in ("count", "usd", "seconds"):
            # A few tokens or calls more or fewer, within noise (+0.9 output tokens): a count moves
            # with every run of a model, so it is no warning (nor a gain) unless it is beyond noise or
            # a rule counts it. So does a timing: an A/A pair timed side by side reads neither better
            # nor worse, whichever side happened to be faster.
            mark, words, folded = "same", "changed, within noise", True
        elif worse:
            mark = "worse"
            words = _worse_words(comparison, rule, noise, bool(sure) or significant)
        else:
            mark = "better" if significant or comparison.ci95 is None else "same"
            words = "better" if mark == "better" else "better, within noise"
        # Timed on another machine at another hour: information. Timed beside the base in this job
        # (compare-with = base): compared like any metric.
        if change.timing and (rule is None or not rule.gated) and not same_job:
            mark, words = "info", INFO_WORDS
    return mark, words, folded


def metric_order() -> dict[str, int]:
    from agent_eval_action.metrics import REGISTRY

    return {name: i for i, name in enumerate(REGISTRY)}
