"""The verdict in words: the headline and the gate's failures as reasons, grouped."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent_eval_action.models.results import DatasetResult, QuestionResult, Results
from agent_eval_action.models.scores import Score
from agent_eval_action.models.verdicts import GateFailure, MetricComparison, PassTest, QuestionTest
from agent_eval_action.text.markdown import p_words, plural
from agent_eval_action.views.figures import ci, fmt, limit_words, signed
from agent_eval_action.views.metric_rows import metric_order

if TYPE_CHECKING:
    from agent_eval_action.views.page import DatasetView

# Ids named in one sentence of the headline; the rest are counted.
IDS_NAMED = 5


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


# Which of the metrics a question fell on names its cause: what the agent did (its calls, its
# state, its path) before how it worded the answer, which follows from them.
CAUSE_ORDER = ("tool_usage_accuracy", "state_management_fidelity", "tool_call_precision", "trajectory", "response_match")


def _cause(metrics: list[str]) -> str:
    """The metric whose phrase names a fall on all of ``metrics``: the first by :data:`CAUSE_ORDER`
    (a missing call moves the answer too, never the other way), else the first given."""

    def rank(metric: str) -> int:
        return next((i for i, name in enumerate(CAUSE_ORDER) if metric == name or metric.startswith(name)), len(CAUSE_ORDER))

    return min(metrics, key=rank)


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


# The order reasons are told in, by the gate's rule (question drops and falls told together).
RULE_ORDER = [
    "nothing_scored",
    "new_errors",
    "max_errors",
    "question_fall",
    "question_drop",
    "new_question",
    "pass_rate",
    "max_regression",
    "min",
    "max",
    "legacy",
]
Rank = tuple[int, int, int, str]


def reasons(results: Results, edited: set[tuple[str, str]] | None = None) -> list[Reason]:
    """The gate's failures as sentences, grouped (one per dataset, rule and metric), errors first.
    ``edited``: the (dataset path, question id) that fell only on metrics whose reference changed."""
    gate = results.gate
    if gate is None:
        return []
    edited = edited or set()
    by_path = {d.path: d for d in results.datasets}
    several = len(results.datasets) > 1
    groups: dict[tuple[str, str, str], list[GateFailure]] = defaultdict(list)
    for failure in gate.failures:
        groups[(failure.dataset or "", failure.rule, failure.metric or "")].append(failure)
    order = metric_order()
    # A dataset's question drops and falls are one story (a dropped sub-agent moves several
    # metrics of the same questions): one reason, each question named once.
    drops: dict[str, list[tuple[str, list[GateFailure]]]] = defaultdict(list)
    for (path, rule_name, metric), failures in list(groups.items()):
        if rule_name in ("question_drop", "question_fall") and metric:
            drops[path].append((metric, failures))
            del groups[(path, rule_name, metric)]
    found: list[tuple[Rank, Reason]] = []
    comparisons = {c.path: c for c in results.comparison or []}
    for path, metrics in drops.items():
        dataset = by_path.get(path)
        ids = tuple(dict.fromkeys(f.question or "" for _, failures in metrics for f in failures))
        if dataset is not None:
            test = comparisons[path].pass_test if path in comparisons else None
            changed = all((path, question) in edited for question in ids)
            found.append(_drop_reason(dataset, path, ids, metrics, test, order, several, changed))
    for (path, rule_name, metric), failures in groups.items():
        dataset = by_path.get(path)
        prefix = f"{dataset.name}: " if dataset and several else ""
        comparison = next((m for m in (comparisons[path].metrics if path in comparisons else []) if m.metric == metric), None)
        short, detail = _rule_words(rule_name, metric, failures, dataset, comparison)
        rank = (RULE_ORDER.index(rule_name) if rule_name in RULE_ORDER else 99, 0, order.get(metric, 99), path)
        found.append((rank, Reason(short=prefix + short, detail=detail)))
    found.sort(key=lambda item: item[0])
    out = [reason for _, reason in found]
    return out


def _drop_reason(
    dataset: DatasetResult,
    path: str,
    ids: tuple[str, ...],
    metrics: list[tuple[str, list[GateFailure]]],
    test: PassTest | None,
    order: dict[str, int],
    several: bool,
    edited: bool = False,
) -> tuple[Rank, Reason]:
    """Questions that dropped (or pass less often) on one or more metrics: one reason for them
    all, and each question named once with the metrics it moved. A fall of the per-question test
    is told in runs that pass ("passes 0 of 4 runs, 5 of 5 on the base"): its figures are pass
    rates of runs, not the metric's score. A drop is told in the metric's own figures. ``edited``:
    each fell only on metrics that read a part of its reference that changed since the base's runs
    were scored: the short says that, not a cause in what the agent did."""
    metrics.sort(key=lambda m: (order.get(m[0], len(order)), m[0]))
    named = set(ids)  # once, not once per question run
    runs = [q for q in dataset.questions if q.id in named]
    prefix = f"{dataset.name}: " if several else ""
    total = len({q.id for q in dataset.questions})
    one = len(ids) == 1
    cause = (
        (f"fail{'s' if one else ''} against {'its' if one else 'their'} changed reference{'' if one else 's'}")
        if edited
        else _phrase(_cause([m for m, _ in metrics]), runs, one)
    )
    short = f"{len(ids)} of {plural(total, 'question')} {cause}"
    dropped: dict[str, list[str]] = defaultdict(list)  # question -> "metric 100% → 50%"
    fell: dict[str, list[str]] = defaultdict(list)  # question -> the metrics its runs fell on
    falls: dict[str, GateFailure] = {}
    for metric, failures in metrics:
        for f in failures:
            question = f.question or ""
            if f.rule == "question_fall":
                fell[question].append(metric)
                falls.setdefault(question, f)
            else:
                dropped[question].append(f"{metric} {fmt(f.baseline, metric)} → {fmt(f.current, metric)}")
    tests = {q.id: q for q in test.tested} if test is not None else {}
    # Questions whose runs fell alike, on the same metrics, are said together.
    fell_alike: dict[tuple[str, str], list[str]] = defaultdict(list)
    for question in ids:
        if question in fell:
            fell_alike[(_fall_rates(tests.get(question), falls[question]), ", ".join(fell[question]))].append(question)
    parts = [_fall_words(questions, rates, on) for (rates, on), questions in fell_alike.items()]
    alike: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for question in ids:
        if question in dropped and question not in fell:
            alike[tuple(dropped[question])].append(question)
    parts += [f"{_ids(questions)} lost: {', '.join(changes)}" for changes, questions in alike.items()]
    detail = "; ".join(parts[:IDS_NAMED]) + (f"; and {len(parts) - IDS_NAMED} more" if len(parts) > IDS_NAMED else "")
    tested = [tests[q] for q in fell if q in tests and not tests[q].short]
    if tested and test is not None:  # how sure, said once for them all
        detail += f" (one-sided Fisher test of each question's runs, Holm over {plural(test.m, 'question')} that could fall, alpha {test.alpha:g})"
    rank = (RULE_ORDER.index("question_drop"), -len(ids), order.get(metrics[0][0], 99), path)
    return rank, Reason(short=prefix + short, detail=detail)


def _fall_rates(test: QuestionTest | None, failure: GateFailure) -> str:
    """ "0 of 4 runs, 5 of 5 on the base (p = 0.0079)": how often a question's runs pass on each side."""
    if test is None:  # an older file without the test's record: the gate's own words
        return (failure.detail or failure.message).removeprefix("question ").split(" (")[0].split(": ", 1)[-1]
    rates = f"{test.passes} of {plural(test.runs, 'run')}, {test.baseline_passes} of {test.baseline_runs} on the base"
    return rates + (
        " (too few base runs to test by: every run fails where every base run passed)" if test.short else f" ({p_words(test.p)})"
    )


def _fall_words(questions: list[str], rates: str, on: str) -> str:
    """ "q_risk_01 passes 0 of 4 runs, 5 of 5 on the base (p = 0.0079); its runs fell on
    tool_usage_accuracy, trajectory_accuracy": questions' falls, in runs, not the metric's score."""
    one = len(questions) == 1
    verb = "passes" if one else "each pass"
    if " runs pass" in rates:  # the gate's words: "0 of 6 runs pass, 5 of 5 on the base"
        said = f"{_ids(questions)}: {rates}"
    else:
        said = f"{_ids(questions)} {verb} {rates}"
    return said + (f"; {'its' if one else 'their'} runs fell on {on}" if on else "")


def _rule_words(
    rule_name: str, metric: str, failures: list[GateFailure], dataset: DatasetResult | None, comparison: MetricComparison | None
) -> tuple[str, str]:
    """One rule's failures on one metric of a dataset: the headline's clause and the figures behind it."""
    first = failures[0]
    bound = first.limit if isinstance(first.limit, float | int) else None
    if rule_name == "max_regression":
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
        verb = "passes" if len(fallen) == 1 else "pass"
        short = f"{len(fallen)} of {plural(total, 'question')} {verb} less often than on the base ({_ids(fallen)})"
        detail = "; ".join((f.detail or f.message).removeprefix("question ") for f in failures)
    elif rule_name == "new_question":
        added = [f.question or "" for f in failures]
        short = f"{plural(len(added), 'question')} the PR adds {'fails' if len(added) == 1 else 'fail'} every run ({_ids(added)})"
        detail = "; ".join((f.detail or f.message).removeprefix("question ") for f in failures)
    elif rule_name == "new_errors":
        count = int(first.current or 0)
        short = f"{count} question{'s' if count != 1 else ''} ended in an error"
        detail = f"{count} on this run, {int(first.baseline or 0)} on the base branch"
    else:
        short = first.detail or first.message
        detail = ""
    return short, detail


def with_dotenv(cause: str) -> str:
    """A missing model key's cause, with where else the key can be: the agent folder's ``.env``,
    which the agent's process reads as ``adk run`` does (agent_worker/loader.py: read_dotenv)."""
    if cause.startswith("no API key"):
        return cause + ", or in the agent folder's .env (read as `adk run` reads it)"
    return cause


INTERRUPTED = "interrupted"  # the first reason of an interrupted run starts so (steps.compare_and_gate)
PARTIAL = "partial"  # and of a run a budget cut short


def first_clause(reason: str) -> tuple[str, str]:
    """A reason cut at its first ";" outside brackets, and the rest: a judge's error quoted in
    parentheses may hold one ("429 RESOURCE_EXHAUSTED; retry in 30s"), which is not the cut."""
    depth = 0
    for i, char in enumerate(reason):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        elif char == ";" and depth == 0:
            return reason[:i], reason[i + 1 :].strip()
    return reason, ""


def unchecked_after(said: str, unchecked: list[str]) -> list[str]:
    """``unchecked`` (the gate's reasons it could not check) past what the headline ``said``: a
    reason the headline took its first clause from keeps only the rest ("run the check again")."""
    out = []
    for reason in unchecked:
        first, rest = first_clause(reason)
        if said.endswith(f": {first}"):
            if rest:
                out.append(rest[:1].upper() + rest[1:])
            continue
        out.append(reason)
    return out


def headline(results: Results, datasets: list[DatasetView], found: list[Reason]) -> str:
    """The verdict and its first reason: "Agent evaluation failed: 2 of 8 questions lost their state writes"."""
    gate = results.gate
    if gate is None:
        return "Agent evaluation"
    if gate.outcome == "failed":
        more = f" (and {len(found) - 1} more reason{'s' if len(found) > 2 else ''})" if len(found) > 1 else ""
        return "Agent evaluation failed" + (f": {found[0].short}{more}" if found else "")
    if gate.outcome == "unchecked" and gate.infrastructure:
        return f"Agent evaluation could not be checked: {with_dotenv(gate.infrastructure)}"
    if gate.outcome == "inconclusive":
        count = len(gate.inconclusive)
        first = first_clause(gate.inconclusive[0])[0] if gate.inconclusive else ""
        return (
            f"Agent evaluation inconclusive: {count} question{'s' if count != 1 else ''} fell in some runs and the re-runs "
            f"could neither confirm nor clear {'it' if count == 1 else 'them'} ({first})"
        )
    if gate.outcome == "unchecked":
        if gate.unchecked and (gate.infrastructure or gate.unchecked[0].startswith((f"{INTERRUPTED}:", f"{PARTIAL}:"))):
            return "Agent evaluation could not be checked: " + first_clause(gate.unchecked[0])[0]
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
