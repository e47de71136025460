"""The page every view of a run shows, in the order a reviewer reads it: the verdict and its
reason in words, what moved, then why (the questions that got worse, base run beside this one).

The comment, the step summary, the terminal and report.html are all built from this model, so
they tell the same story. Everything here is plain text: each view escapes it for its medium.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Literal

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
    Score,
    ToolInteraction,
    Unit,
)
from agent_eval_action.repo.history import Point
from agent_eval_action.scoring.aggregate import passes
from agent_eval_action.verdict.comparison import EPSILON, ci_on_worse_side, counted_drops, per_question, worse_amount
from agent_eval_action.verdict.gate import RuleView, is_timing
from agent_eval_action.verdict.outages import outage_cause
from agent_eval_action.views.background import Background

Mark = Literal["fail", "worse", "better", "same", "new", "info"]
# "info": a timing no rule gates, measured on another machine at another hour than its baseline.
MARKS: dict[str, str] = {"fail": "🔴", "worse": "⚠️", "better": "🟢", "same": "⚪", "new": "🆕", "info": "ℹ️"}
INFO_WORDS = (
    "a timing: it moves with the machine and its load, shown for information (compare-with = base and a rule on it would compare it)"
)
SPARK = "▁▂▃▄▅▆▇█"
# Between a figure and its unit, so a narrow table cell never breaks "0.20 s" in two.
NBSP = "\u00a0"
# Ids named in one sentence of the headline; the rest are counted.
IDS_NAMED = 5
# Characters of a value (tool arguments, a state variable, an answer) in a side-by-side row.
VALUE_CHARS = 160


# Figures from this size on are shown with an exponent.
HUGE = 1e15


def unit(metric: str) -> Unit:
    """The metric's unit, as the registry (or a custom metric's ``unit``) declares it."""
    from agent_eval_action.metrics.registry import unit_of  # the metric modules: only when a figure is shown

    return unit_of(metric)


def fmt(value: float | None, metric: str = "") -> str:
    """A figure in the metric's unit: seconds, counts, dollars, plain numbers, else a percentage of 0..1."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if abs(value) >= HUGE:  # 300 digits of a recorded 1e308 say nothing more than its exponent
        return f"{value:.3g}"
    kind = unit(metric) if metric else "ratio"
    if kind == "seconds":
        return f"{value:.2f}{NBSP}s"
    if kind in ("count", "number"):
        return f"{value:,.1f}" if value != int(value) else f"{value:,.0f}"
    if kind == "usd":
        return f"${value:.4f}" if abs(value) < 1 else f"${value:,.2f}"
    return _percent(value * 100) + "%"


def _percent(number: float) -> str:
    text = f"{number:.1f}"
    return text[:-2] if text.endswith(".0") else text


def is_share(metric: str) -> bool:
    return not metric or unit(metric) == "ratio"


def signed(value: float | None, metric: str = "") -> str:
    """A change in the metric's unit: shares in points (``-40 pts``, with a minus sign), others as figures."""
    if value is None:
        return "–"
    if abs(value) < 1e-9:
        return "±0"
    text = fmt(abs(value), metric)
    if not any(digit in text for digit in "123456789"):
        text = _small(abs(value), metric)  # a rounded "-0.00 s" would read as no change
    if is_share(metric):
        text = text.replace("%", f"{NBSP}pts")
    return ("+" if value > 0 else "−") + text


def _small(value: float, metric: str) -> str:
    """A change too small for the metric's usual precision, with two significant digits."""
    kind = unit(metric) if metric else "ratio"
    if kind == "seconds":
        return f"{value:.2g}{NBSP}s"
    if kind == "usd":
        return f"${value:.2g}"
    if kind in ("count", "number"):
        return f"{value:.2g}"
    return f"{value * 100:.2g}%"


def ci(interval: tuple[float, float] | list[float] | None, metric: str = "") -> str:
    if not interval:
        return "–"
    return f"[{signed(interval[0], metric)}, {signed(interval[1], metric)}]"


def limit_words(max_regression: float | str | None, metric: str) -> str:
    """A max_regression as the gate stored it, with its rule: "the 10 pts allowed (max_regression 0.1)"."""
    if max_regression is None:
        return "the allowed amount"
    return f"the {allowed(max_regression, metric)} allowed (max_regression {max_regression})"


def allowed(max_regression: float | str, metric: str) -> str:
    """``max_regression`` as a reader reads it: "5 pts", "20% of the baseline", "0.50 s"."""
    if isinstance(max_regression, str):
        return f"{max_regression.strip()} of the baseline"
    return signed(float(max_regression), metric).lstrip("+")


def spark(values: list[float | None], metric: str) -> str:
    """A unicode sparkline; shares on a fixed 0..100% scale (noise must not look like a cliff),
    other units from 0 (or their minimum) to their maximum. ``·`` where a value is missing."""
    known = [v for v in values if v is not None]
    if not known:
        return ""
    low, high = (0.0, 1.0) if is_share(metric) else (min(0.0, *known), max(known))
    span = high / 2 - low / 2  # halves: the span of -1e308 and 1e308 is past the float range
    out = []
    for value in values:
        if value is None:
            out.append("·")
            continue
        level = 0 if span <= 0 else round((min(max(value, low), high) / 2 - low / 2) / span * (len(SPARK) - 1))
        out.append(SPARK[level])
    return "".join(out)


def compact(value: Any, limit: int = VALUE_CHARS) -> str:
    """A value on one line: strings as they are, anything else as JSON; cut to ``limit``."""
    if isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- metric rows -----------------------------------------------------------------------------


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
    # This run's mean over all its scored questions: the end of the trend, as the history's points are.
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


def _by_metric(records: list[GateFailure], path: str) -> dict[str, list[GateFailure]]:
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
    if falls:  # pass rates, as the per-question test weighed them
        pairs = sorted({(fmt(f.baseline, "pass_rate"), fmt(f.current, "pass_rate")) for f in falls})
        change = ", ".join(f"{a} → {b}" for a, b in pairs[:3])
        parts.append(f"{len(falls)} question{'s' if len(falls) != 1 else ''} pass less often ({change} of runs)")
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


def _row(
    comparison: MetricComparison,
    summary: MetricSummary | None,
    failures: list[GateFailure],
    noise: GateFailure | None,
    rule: RuleView | None,
    points: list[Point],
    compared: bool,
    same_job: bool = False,
) -> MetricRow:
    metric = comparison.metric
    mark: Mark
    folded = False  # a count that moved within noise: with what held
    if failures:
        mark, words = "fail", _fail_words(failures, noise, metric, comparison)
    elif comparison.verdict == "removed":
        mark, words = "same", "not scored in this run"
    elif not compared or comparison.baseline is None or comparison.delta is None:
        mark, words = "new", "no baseline to compare with"
    elif abs(comparison.delta) <= EPSILON:
        mark, words = "same", "unchanged"
    elif comparison.direction == "neutral":
        mark, words = "same", "changed (neither better nor worse)"
    else:
        worse = worse_amount(comparison.delta, comparison.direction) > 0
        sure = ci_on_worse_side(comparison.ci95, comparison.direction) if worse else None
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
        if is_timing(metric) and (rule is None or not rule.gated) and not same_job:
            mark, words = "info", INFO_WORDS
    unscored = summary.unscored if summary else 0
    threshold = rule is not None and (rule.min is not None or rule.max is not None)
    visible = fmt(comparison.baseline, metric) != fmt(comparison.current, metric) and comparison.baseline is not None
    # A timing no rule gates is folded with what held: a PR that changes only the machine moves nothing.
    visible = visible and mark != "info" and not folded
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
        overall=summary.mean if summary is not None else comparison.current,
    )


# --- questions -------------------------------------------------------------------------------


@dataclass
class DiffRow:
    label: str
    base: str
    head: str
    kind: Literal["score", "error", "call", "result", "state", "answer"]


@dataclass
class QuestionDiff:
    """A question that got worse than on the base branch, with what its runs did differently."""

    id: str
    run: int
    fell: list[str]  # "state_management_fidelity 100% → 0%"
    metrics: list[str]  # the metrics that fell ("error": the run now ends in one)
    dropped: bool  # a drop the gate counts (max_question_drop)
    rows: list[DiffRow]
    base: QuestionResult | None
    head: QuestionResult
    recorded: bool  # the base run has a transcript (False: its baseline predates them)


@dataclass
class DiffGroup:
    """Questions whose runs differ from their base runs in exactly the same way: one table."""

    questions: list[QuestionDiff]
    rows: list[DiffRow]

    @property
    def ids(self) -> list[str]:
        return [q.id + (f" (run {q.run})" if q.run else "") for q in self.questions]

    @property
    def count(self) -> int:
        return len(self.questions)

    @property
    def label(self) -> str:
        """The questions named, the first ten, then a count."""
        ids = self.ids
        return ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")


def group_diffs(diffs: list[QuestionDiff]) -> list[DiffGroup]:
    groups: dict[tuple[Any, ...], DiffGroup] = {}
    for diff in diffs:
        key = (tuple((r.label, r.base, r.head) for r in diff.rows), diff.recorded, tuple(diff.fell))
        if key in groups:
            groups[key].questions.append(diff)
        else:
            groups[key] = DiffGroup(questions=[diff], rows=diff.rows)
    return list(groups.values())


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


def threshold_for(name: str, thresholds: dict[str, float], summary: dict[str, MetricSummary]) -> float | None:
    recorded = summary[name].pass_threshold if name in summary else None
    return recorded if recorded is not None else thresholds.get(name)


def failed_metrics(question: QuestionResult, thresholds: dict[str, float], summary: dict[str, MetricSummary]) -> list[str]:
    """The metrics whose pass threshold this run missed, judged as the dataset's pass rate is:
    ``summary`` gives each metric's direction and the threshold it was judged with (``thresholds``
    stands in for results written before summaries recorded it)."""
    failed = []
    for name, score in question.scores.items():
        threshold = threshold_for(name, thresholds, summary)
        if threshold is None or score.value is None:
            continue
        direction = summary[name].direction if name in summary else "higher"
        if not passes(score.value, threshold, direction):
            failed.append(name)
    return failed


def _question_view(question: QuestionResult, thresholds: dict[str, float], summary: dict[str, MetricSummary]) -> QuestionView:
    tools = question.scores.get("tool_usage_accuracy")
    state = question.scores.get("state_management_fidelity")
    trajectory = question.scores.get("trajectory_accuracy")
    return QuestionView(
        id=question.id,
        run=question.run,
        status=question.status,
        error=question.error,
        failed=failed_metrics(question, thresholds, summary),
        tools=tools.details if tools and tools.value is not None and tools.value < 1 else None,
        state=list(state.details.get("mismatches", [])) if state and state.value is not None and state.value < 1 else [],
        trajectory=trajectory.details if trajectory and trajectory.value is not None and trajectory.value < 1 else None,
    )


def regressions(current: DatasetResult, base: DatasetResult | None, comparison: DatasetComparison | None) -> dict[str, list[str]]:
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
    for metric in comparison.metrics:
        if metric.direction != "higher" or metric.baseline is None or metric.current is None:
            continue
        now, before = per_question(current, metric.metric), per_question(base, metric.metric)
        for qid in sorted(now.keys() & before.keys()):
            if before[qid] - now[qid] > EPSILON and metric.metric not in out[qid]:
                out[qid].append(metric.metric)
    order = sorted(out, key=lambda q: (not any((q, m) in dropped for m in out[q]), "error" not in out[q], q))
    return {q: out[q] for q in order}


def _worst_run(runs: list[QuestionResult], metrics: list[str]) -> QuestionResult:
    def badness(q: QuestionResult) -> tuple[int, float, int]:
        total = sum((q.scores[m].value or 0.0) if m in q.scores else 0.0 for m in metrics if m != "error")
        return (q.status != "error", total, q.run)

    return min(runs, key=badness)


def _calls(question: QuestionResult | None) -> list[ToolInteraction] | None:
    if question is None or question.transcript is None:
        return None
    return question.transcript.tool_calls


def _result_text(call: ToolInteraction) -> str:
    return f"error: {compact(call.error)}" if call.error else compact(call.output_result)


def _arguments_text(arguments: dict[str, Any], keys: list[str]) -> str:
    if not keys:
        return "(no arguments)"
    return ", ".join(f"{k}: {compact(arguments[k], 60)}" if k in arguments else f"{k}: (not given)" for k in keys)


def call_rows(base: list[ToolInteraction], head: list[ToolInteraction]) -> list[DiffRow]:
    """The tool calls that differ: the n-th call of each tool on one side against the n-th on
    the other, by arguments and by result; calls only one side made."""
    rows: list[DiffRow] = []
    names = list(dict.fromkeys([c.tool_name for c in base] + [c.tool_name for c in head]))
    for name in names:
        ours = [c for c in head if c.tool_name == name]
        theirs = [c for c in base if c.tool_name == name]
        for i in range(max(len(ours), len(theirs))):
            before = theirs[i] if i < len(theirs) else None
            after = ours[i] if i < len(ours) else None
            label = name if max(len(ours), len(theirs)) == 1 else f"{name} #{i + 1}"
            if before is None or after is None:
                made = before or after
                assert made is not None
                shown = _arguments_text(made.input_arguments, sorted(made.input_arguments))
                rows.append(
                    DiffRow(
                        label=f"{label} call",
                        base=shown if before else "not called",
                        head=shown if after else "not called",
                        kind="call",
                    )
                )
                continue
            differing = sorted(
                k
                for k in before.input_arguments.keys() | after.input_arguments.keys()
                if before.input_arguments.get(k, ...) != after.input_arguments.get(k, ...)
            )
            if differing:
                rows.append(
                    DiffRow(
                        label=f"{label} arguments",
                        base=_arguments_text(before.input_arguments, differing),
                        head=_arguments_text(after.input_arguments, differing),
                        kind="call",
                    )
                )
            if (before.error, before.output_result) != (after.error, after.output_result):
                rows.append(DiffRow(label=f"{label} result", base=_result_text(before), head=_result_text(after), kind="result"))
    return rows


def _call_text(call: ToolInteraction) -> str:
    """One call on one line: ``lookup(q: "x") → {"found": true}``."""
    arguments = _arguments_text(call.input_arguments, sorted(call.input_arguments)) if call.input_arguments else ""
    return f"{call.tool_name}({arguments}) → {_result_text(call)}"


def sequence_rows(base: list[ToolInteraction], head: list[ToolInteraction]) -> list[DiffRow]:
    """Every call of a run that ended in an error, in order, beside the base run's n-th call:
    what succeeded before the error shows even where it matches the base."""
    rows = []
    for i in range(max(len(base), len(head))):
        rows.append(
            DiffRow(
                label=f"call {i + 1}",
                base=_call_text(base[i]) if i < len(base) else "not called",
                head=_call_text(head[i]) if i < len(head) else "not reached (the run ended in an error)",
                kind="call",
            )
        )
    return rows


def state_rows(base: dict[str, Any], head: dict[str, Any]) -> list[DiffRow]:
    rows = []
    for key in sorted(base.keys() | head.keys()):
        if base.get(key, ...) != head.get(key, ...):
            rows.append(
                DiffRow(
                    label=f"state {key}",
                    base=compact(base[key]) if key in base else "(not set)",
                    head=compact(head[key]) if key in head else "(not set)",
                    kind="state",
                )
            )
    return rows


def _score_text(score: Score | None, metric: str) -> str:
    if score is None:
        return "–"
    return fmt(score.value, metric) if score.value is not None else "unscored"


def runs_by_id(dataset: DatasetResult) -> dict[str, list[QuestionResult]]:
    """Question id -> its runs, in the dataset's order: made once per dataset, so finding a
    question's runs costs the same at 10,000 questions as at 10 (a scan per question made the
    views quadratic)."""
    out: dict[str, list[QuestionResult]] = defaultdict(list)
    for question in dataset.questions:
        out[question.id].append(question)
    return dict(out)


def volatile_keys(runs: list[QuestionResult]) -> set[str]:
    """Final-state keys whose values differ between the base's own runs of one question
    (timestamps, ids): what re-asking the same question changes, never the PR."""
    states = [r.transcript.final_state for r in runs if r.transcript is not None and r.transcript.final_state is not None]
    keys = {k for state in states for k in state}
    return {k for k in keys if len({json.dumps(state.get(k), sort_keys=True, default=str) for state in states}) > 1}


def question_diff(
    qid: str,
    fell: list[str],
    head_runs: list[QuestionResult],
    before_runs: list[QuestionResult],
    dropped: set[str],
    ignore_state: frozenset[str] = frozenset(),
) -> QuestionDiff:
    """``head_runs``, ``before_runs``: the question's runs in this run and in the base run (from
    :func:`runs_by_id`); ``ignore_state``: state keys the config calls volatile."""
    head = _worst_run(head_runs, fell)
    before = min(before_runs, key=lambda q: (q.status == "error", q.run)) if before_runs else None
    rows: list[DiffRow] = []
    fell_text = []
    for metric in fell:
        if metric == "error":
            continue
        b, h = (before.scores.get(metric) if before else None), head.scores.get(metric)
        rows.append(DiffRow(label=metric, base=_score_text(b, metric), head=_score_text(h, metric), kind="score"))
        fell_text.append(f"{metric} {_score_text(b, metric)} → {_score_text(h, metric)}")
    error_row = None
    if (before.error if before else None) != head.error:
        error_row = DiffRow(
            label="error",
            base=compact(before.error) if before and before.error else "none",
            head=compact(head.error) if head.error else "none",
            kind="error",
        )
    base_calls, head_calls = _calls(before), _calls(head)
    # Only a base run without a transcript predates them: this run may lack tool calls because
    # it ended in an error before it made any (or its process died).
    recorded = before is None or before.transcript is not None
    if head.status == "error":
        # What the run did before the error, call by call beside the base run's, then the error.
        if base_calls is not None and head_calls is not None:
            rows.extend(sequence_rows(base_calls, head_calls))
        elif base_calls is not None:  # timed out, or its process died: nothing of the run came back
            made = ", ".join(c.tool_name for c in base_calls) or "none"
            rows.append(DiffRow(label="tool calls", base=made, head="not recorded: the run ended before it reported any", kind="call"))
        if error_row is not None:
            rows.append(error_row)
    else:
        if error_row is not None:
            rows.append(error_row)
        if base_calls is not None and head_calls is not None:
            rows.extend(call_rows(base_calls, head_calls))
    bt, ht = (before.transcript if before else None), head.transcript
    if bt is not None and ht is not None:
        if bt.final_state is not None and ht.final_state is not None:
            volatile = volatile_keys(before_runs) | set(ignore_state)
            rows.extend(
                state_rows(
                    {k: v for k, v in bt.final_state.items() if k not in volatile},
                    {k: v for k, v in ht.final_state.items() if k not in volatile},
                )
            )
            shown = sorted(k for k in volatile if bt.final_state.get(k, ...) != ht.final_state.get(k, ...))
            if shown:
                rows.append(
                    DiffRow(
                        label="volatile state",
                        base=", ".join(shown),
                        head="differ between the base's own runs (or ignore-state): not a change",
                        kind="state",
                    )
                )
        if (bt.final_response or "") != (ht.final_response or ""):
            rows.append(
                DiffRow(
                    label="answer", base=compact(bt.final_response or "(none)"), head=compact(ht.final_response or "(none)"), kind="answer"
                )
            )
    return QuestionDiff(
        id=qid,
        run=head.run,
        fell=(["ended in an error"] if "error" in fell else []) + fell_text,
        metrics=fell,
        dropped=qid in dropped,
        rows=rows,
        base=before,
        head=head,
        recorded=recorded,
    )


# --- the headline ------------------------------------------------------------------------------


@dataclass
class Reason:
    """One reason for the verdict: a short clause for the headline, and the figures behind it."""

    short: str
    detail: str


# What it means for a question to fall on a metric: (one question, several).
FELL_PHRASES: dict[str, tuple[str, str]] = {
    "tool_usage_accuracy": ("no longer makes the expected tool calls", "no longer make the expected tool calls"),
    "tool_call_precision": ("makes tool calls that were not expected", "make tool calls that were not expected"),
    "response_match": ("answers differently", "answer differently"),
}


def _phrase(metric: str, questions: list[QuestionResult], one: bool) -> str:
    if metric == "state_management_fidelity":
        lines = [line for q in questions for line in (q.scores.get(metric) or Score(value=None)).details.get("mismatches", [])]
        if lines and all("missing from the final state" in line for line in lines):
            return "lost its state writes" if one else "lost their state writes"
        return "ends in a different state" if one else "end in a different state"
    if metric.startswith("trajectory"):
        return "took a different path" if one else "took different paths"
    if metric in FELL_PHRASES:
        return FELL_PHRASES[metric][0 if one else 1]
    return f"scored lower on {metric}"


def _ids(ids: list[str]) -> str:
    named = ", ".join(ids[:IDS_NAMED])
    return named + (f" and {len(ids) - IDS_NAMED} more" if len(ids) > IDS_NAMED else "")


def reasons(results: Results) -> list[Reason]:
    """The gate's failures as sentences, grouped (one per dataset, rule and metric), errors first."""
    gate = results.gate
    if gate is None:
        return []
    by_path = {d.path: d for d in results.datasets}
    comparisons = {c.path: c for c in results.comparison or []}
    several = len(results.datasets) > 1
    groups: dict[tuple[str, str, str], list[GateFailure]] = defaultdict(list)
    for failure in gate.failures:
        groups[(failure.dataset or "", failure.rule, failure.metric or "")].append(failure)
    order = [
        "nothing_scored",
        "new_errors",
        "max_errors",
        "question_fall",
        "question_drop",
        "pass_rate",
        "max_regression",
        "min",
        "max",
        "legacy",
    ]
    metric_order = _metric_order()
    # Question drops of several metrics on the same questions are one story: one reason.
    drops: dict[tuple[str, tuple[str, ...]], list[tuple[str, list[GateFailure]]]] = defaultdict(list)
    said: dict[tuple[str, str], str] = {}  # (path, question) -> how sure the per-question test is, in words
    for (path, rule_name, metric), failures in list(groups.items()):
        if rule_name in ("question_drop", "question_fall") and metric:
            drops[(path, tuple(sorted(f.question or "" for f in failures)))].append((metric, failures))
            del groups[(path, rule_name, metric)]
            for f in failures:
                if rule_name == "question_fall":
                    said[(path, f.question or "")] = (f.detail or f.message).removeprefix("question ")
    found: list[tuple[tuple[int, int, int, str], Reason]] = []
    for (path, ids), metrics in drops.items():
        dataset = by_path.get(path)
        if dataset is None:
            continue
        metrics.sort(key=lambda m: (metric_order.get(m[0], len(metric_order)), m[0]))
        named = set(ids)  # once, not once per question run
        runs = [q for q in dataset.questions if q.id in named]
        prefix = f"{dataset.name}: " if several else ""
        total = len({q.id for q in dataset.questions})
        short = f"{len(ids)} of {plural(total, 'question')} {_phrase(metrics[0][0], runs, len(ids) == 1)}"
        # Each question named once: the questions whose metrics fell alike, then how they fell.
        fell: dict[str, list[str]] = defaultdict(list)
        for metric, failures in metrics:
            for f in failures:
                fell[f.question or ""].append(f"{metric} {fmt(f.baseline, metric)} → {fmt(f.current, metric)}")
        alike: dict[tuple[str, ...], list[str]] = defaultdict(list)
        for question, changes in fell.items():
            alike[tuple(changes)].append(question)
        detail = "; ".join(f"{_ids(questions)} lost: {', '.join(changes)}" for changes, questions in alike.items())
        sure = [said[(path, q)] for q in ids if (path, q) in said]
        if sure:  # the pass rates and how sure: "q26: 0 of 4 runs pass, 5 of 5 on the base: p = 0.0079 (...)"
            detail += "; " + "; ".join(sure[:IDS_NAMED]) + (f"; and {len(sure) - IDS_NAMED} more" if len(sure) > IDS_NAMED else "")
        rank = (order.index("question_drop"), -len(ids), metric_order.get(metrics[0][0], 99), path)
        found.append((rank, Reason(short=prefix + short, detail=detail)))
    for (path, rule_name, metric), failures in groups.items():
        dataset = by_path.get(path)
        prefix = f"{dataset.name}: " if dataset and several else ""
        first = failures[0]
        bound = first.limit if isinstance(first.limit, float | int) else None
        if rule_name == "max_regression":
            comparison = next((m for m in (comparisons[path].metrics if path in comparisons else []) if m.metric == metric), None)
            verb = "rose" if comparison is not None and comparison.direction == "lower" else "fell"
            limit = limit_words(first.limit, metric)
            short = f"{metric} {verb} {signed(comparison.delta if comparison else None, metric).lstrip('+−')}"
            detail = f"{metric} {fmt(first.baseline, metric)} → {fmt(first.current, metric)}, more than {limit}"
            if comparison is not None and comparison.ci95:
                detail += f"; 95% CI of the change {ci(comparison.ci95, metric)}"
        elif rule_name == "min" and bound is not None:
            short = f"{metric} is under its minimum"
            detail = f"{metric} is {fmt(first.current, metric)}, under the minimum {fmt(bound, metric)}"
        elif rule_name == "max" and bound is not None:
            short = f"{metric} is over its maximum"
            detail = f"{metric} is {fmt(first.current, metric)}, over the maximum {fmt(bound, metric)}"
        elif rule_name == "question_fall":
            total = len({q.id for q in dataset.questions}) if dataset else len(failures)
            fallen = [f.question or "" for f in failures]
            short = f"{len(fallen)} of {total} questions pass less often than on the base ({_ids(fallen)})"
            detail = "; ".join((f.detail or f.message).removeprefix("question ") for f in failures)
        elif rule_name == "new_errors":
            count = int(first.current or 0)
            short = f"{count} question{'s' if count != 1 else ''} ended in an error"
            detail = f"{count} on this run, {int(first.baseline or 0)} on the base branch"
        else:
            short = first.detail or first.message
            detail = ""
        rank = (order.index(rule_name) if rule_name in order else 99, 0, metric_order.get(metric, 99), path)
        found.append((rank, Reason(short=prefix + short, detail=detail)))
    found.sort(key=lambda item: item[0])
    out = [reason for _, reason in found]
    return out


INTERRUPTED = "interrupted"  # the first reason of an interrupted run starts so (steps.compare_and_gate)
PARTIAL = "partial"  # and of a run a budget cut short


def headline(results: Results, datasets: list[DatasetView], found: list[Reason]) -> str:
    """The verdict and its first reason: "Agent evaluation failed: 2 of 8 questions lost their state writes"."""
    gate = results.gate
    if gate is None:
        return "Agent evaluation"
    if gate.outcome == "failed":
        more = f" (and {len(found) - 1} more reason{'s' if len(found) > 2 else ''})" if len(found) > 1 else ""
        return "Agent evaluation failed" + (f": {found[0].short}{more}" if found else "")
    if gate.outcome == "unchecked" and gate.infrastructure:
        return f"Agent evaluation could not be checked: {gate.infrastructure}"
    if gate.outcome == "inconclusive":
        count = len(gate.inconclusive)
        first = gate.inconclusive[0].split("; ")[0] if gate.inconclusive else ""
        return (
            f"Agent evaluation inconclusive: {count} question{'s' if count != 1 else ''} fell in some runs and the re-runs "
            f"could neither confirm nor clear {'it' if count == 1 else 'them'} ({first})"
        )
    if gate.outcome == "unchecked":
        if gate.unchecked and (gate.infrastructure or gate.unchecked[0].startswith((f"{INTERRUPTED}:", f"{PARTIAL}:"))):
            return "Agent evaluation could not be checked: " + gate.unchecked[0].split(";")[0]
        count = len(results.problems) or len(gate.unchecked)
        return f"Agent evaluation could not be checked: {count} input problem{'s' if count != 1 else ''}"
    text = "Agent evaluation passed" + (f": {passed_reason(datasets)}" if datasets else "")
    # A deleted dataset is no pass of what remains: the headline says what the PR took out of the check.
    removed = [c.path for c in results.comparison or [] if c.status == "removed"]
    if removed:
        text += f"{';' if datasets else ':'} this PR removes {plural(len(removed), 'dataset')} from the check ({', '.join(removed)})"
    return text


def passed_reason(datasets: list[DatasetView]) -> str:
    gated = {r.metric for d in datasets for r in d.rows if r.rule is not None and r.rule.gated and r.current is not None}
    # Counted from what the table shows: a change too small to show is folded as unchanged there.
    better = sum(1 for d in datasets for r in d.moved if r.mark == "better")
    worse = sum(1 for d in datasets for r in d.moved if r.mark == "worse")
    # Only what was checked: a question none of whose runs ran (a budget skipped it) held nothing.
    questions = sum(len({q.id for q in d.result.questions if q.status != "skipped"}) for d in datasets)
    skipped = sum(
        len({q.id for q in d.result.questions if q.status == "skipped"} - {q.id for q in d.result.questions if q.status != "skipped"})
        for d in datasets
    )
    text = f"{len(gated)} gated metric{'s' if len(gated) != 1 else ''} held on {questions} question{'s' if questions != 1 else ''}"
    if skipped:
        text += f" ({skipped} skipped, not checked: [gate] allow-partial)"
    if worse:
        text += f"; {worse} worse within what the gate allows"
    if better:
        text += f"; {better} improved"
    return text


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


def _metric_order() -> dict[str, int]:
    from agent_eval_action.metrics import REGISTRY

    return {name: i for i, name in enumerate(REGISTRY)}


MARK_ORDER = {"fail": 0, "worse": 1, "better": 2, "new": 3, "same": 4, "info": 5}


def dataset_view(
    dataset: DatasetResult,
    comparison: DatasetComparison | None,
    gate: GateResult | None,
    thresholds: dict[str, float],
    background: Background,
    same_job: bool = False,
) -> DatasetView:
    compared = comparison is not None and comparison.status == "compared"
    if comparison is not None:
        metrics = [m for m in comparison.metrics if m.current is not None or m.baseline is not None]
    else:
        metrics = [
            MetricComparison(metric=name, direction=s.direction, baseline=None, current=s.mean, delta=None, verdict="new")
            for name, s in dataset.summary.items()
            if s.mean is not None
        ]
    failures = _by_metric(gate.failures if gate else [], dataset.path)
    # One record per metric at most: the gate judges a metric's change once per dataset.
    noise = {metric: records[0] for metric, records in _by_metric(gate.within_noise if gate else [], dataset.path).items()}
    history = background.history.get(dataset.path, {})
    order = _metric_order()
    rows = [
        _row(
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
    # Without a baseline nothing is unchanged: every figure is new and shown.
    moved = sorted((r for r in rows if r.moved or not compared), key=lambda r: MARK_ORDER[r.mark])
    base = background.base_runs.get(dataset.path) if compared else None
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
            question_diff(qid, fell, head_runs[qid], base_runs.get(qid, []), dropped, background.ignore_state)
            for qid, fell in regressed_ids.items()
        ]
    views = [_question_view(q, thresholds, dataset.summary) for q in dataset.questions]
    # Each run's failed metrics are judged here once; the terminal's table lists these too.
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
    )


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
