"""A run's and its datasets' notes in words: how the agent ran, what was reused, skipped or
replayed, the questions paired by content, scored on one side only, or flaky; the gate's
dataset-level failures."""

from __future__ import annotations

import re
from collections import defaultdict

from agent_eval_action.models.results import BaseRun, DatasetResult, Results
from agent_eval_action.models.verdicts import DatasetComparison, GateFailure
from agent_eval_action.text.markdown import plural
from agent_eval_action.views.headline import IDS_NAMED


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
        notes.append(f"{plural(dataset.reused, 'question run')} reused from the baseline, {ran} ran")
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
            flight = f"at most {plural(run.max_in_flight, 'question run')} in flight"
            if run.max_in_flight < run.reached:  # the limit never held a run back at its height
                flight += ", all it had ready"
            parts.append(f"concurrency auto: {flight}; {limit}")
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
    """What compare-with = "base" cost: "base re-run: 12 questions x 3 runs + 2 re-runs of the
    questions in doubt, 76 model calls"."""
    reruns = f" + {plural(base.reruns, 're-run')} of the questions in doubt" if base.reruns else ""
    return (
        f"base re-run: {plural(base.questions, 'question')} × {plural(base.runs, 'run')}{reruns}, {plural(base.model_calls, 'model call')}"
    )


def unpaired_lines(comparison: DatasetComparison | None, errored: int = 0, questions: int | None = None) -> list[str]:
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
    added = comparison.added_questions
    compared = sum(1 for m in comparison.metrics if m.verdict not in ("new", "removed"))
    if errored and errored == questions:  # no other question for the rows to compare
        lines.append(f"every question ended in an error in this run ({errored}), so no metric scored any: there is nothing to compare")
    elif errored:
        lines.append(
            f"{plural(errored, 'question')} ended in an error in this run, so no metric scored "
            f"{'it' if errored == 1 else 'them'}: the rows compare the other questions"
        )
    for (base_only, head_only), metrics in groups.items():
        parts = []
        if base_only:
            parts.append(f"{plural(base_only, 'question')} scored only on the base (removed, or an error or unscored now)")
        if head_only and head_only == len(added):  # what the change adds, named: no guess at why
            parts.append(
                f"{plural(head_only, 'question')} this change adds ({', '.join(added[:IDS_NAMED])}{', …' if len(added) > IDS_NAMED else ''})"
            )
        elif head_only:
            parts.append(f"{plural(head_only, 'question')} scored only on this PR (added, or unscored on the base)")
        lines.append(f"{_metrics_named(metrics, compared)}: {'; '.join(parts)}")
    return lines


def _metrics_named(metrics: list[str], compared: int) -> str:
    """The metrics a line is about, briefly: one added question is unpaired on all 28 of them."""
    if len(metrics) == compared and compared > 1:
        return "every metric"
    if len(metrics) > 3:
        return f"{len(metrics)} metrics ({', '.join(metrics[:3])}, …)"
    return ", ".join(metrics)


def flaky_lines(comparison: DatasetComparison | None) -> list[str]:
    """Each flaky question and metric with how many of its runs passed on each side."""

    def side(rate: float | None, runs: int, where: str) -> str:
        return f"{round(rate * runs)}/{runs} {where}" if rate is not None else f"not scored {where}"

    return [
        f"{f.id} ({f.metric}): {side(f.baseline_pass_rate, f.baseline_runs, 'on base')}, {side(f.current_pass_rate, f.current_runs, 'here')}"
        for f in (comparison.flaky if comparison is not None else [])
    ]


def dataset_line(failure: GateFailure) -> str:
    """A dataset-level failure (errors, nothing scored) in words."""
    if failure.rule == "new_errors":
        count, before = int(failure.current or 0), int(failure.baseline or 0)
        return f"fails the gate: {count} question{'s' if count != 1 else ''} ended in an error, {before} on the base branch"
    return "fails the gate: " + (failure.detail or failure.message)


# The gate's note on each metric whose mean fell beyond max_regression when the per-question
# test decides it: "cs: tool_usage_accuracy 1 -> 0.6 is worse than max_regression 0.05; decided ...".
_BY_PASS_TEST = re.compile(
    r"^(?P<name>.*): (?P<moved>\S+ \S+ -> \S+) is worse than max_regression (?P<limit>\S+); decided question by question by the pass test$"
)


def gate_notes(notes: list[str]) -> list[str]:
    """The gate's notes as the views show them: one cause said once. A dropped sub-agent moves
    six metrics of the same questions; the gate notes each one's mean "decided question by
    question by the pass test", which reads as one line per dataset and limit."""
    out: list[str] = []
    folded: dict[tuple[str, str], list[str]] = {}
    for note in notes:
        found = _BY_PASS_TEST.match(note)
        if found is None:
            out.append(note)
            continue
        key = (found["name"], found["limit"])
        if key not in folded:
            folded[key] = []
            out.append(f"\0{len(folded) - 1}")  # its place, filled in below
        folded[key].append(found["moved"])
    lines = [
        f"{name}: {', '.join(moved)} {'is' if len(moved) == 1 else 'are'} worse than max_regression {limit}; "
        "decided question by question by the pass test"
        for (name, limit), moved in folded.items()
    ]
    return [lines[int(note[1:])] if note.startswith("\0") else note for note in out]


def not_scored_line(metrics: list[str]) -> list[str]:
    """The metrics the base scored and this run scored on no question, in one line."""
    if not metrics:
        return []
    more = f" and {len(metrics) - IDS_NAMED} more" if len(metrics) > IDS_NAMED else ""
    verb = "was" if len(metrics) == 1 else "were"
    return [f"{plural(len(metrics), 'metric')} the base scored {verb} not scored in this run ({', '.join(metrics[:IDS_NAMED])}{more})"]
