"""Why a question got worse: its runs beside the base's, side by side (scores, the error, tool
calls and their results, the final state, the answer), and the questions that differ alike grouped."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Literal

from agent_eval_action.models.questions import ReferenceData, ToolInteraction
from agent_eval_action.models.results import DatasetResult, QuestionResult
from agent_eval_action.models.scores import Score
from agent_eval_action.views.figures import VALUE_CHARS, compact, fmt


@dataclass
class DiffRow:
    label: str
    base: str
    head: str
    kind: Literal["score", "reference", "error", "call", "result", "state", "answer"]


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
    # The parts of the question's reference that differ from the one the base's run was scored
    # against: what is expected changed, and the scores that read it moved whatever the agent did.
    reference_changed: frozenset[str] = frozenset()


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


def _judged(score: Score) -> bool:
    """A judge's score (ADK's judged criteria, our judges): its explanation is the judge's rationale."""
    return score.value is not None and ("adk_status" in score.details or "raw_score" in score.details)


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
        if h is not None and _judged(h):  # what the judge said, for the run that fell
            said = DiffRow(
                label=f"{metric}: the judge", base=compact(b.explanation) if b else "–", head=compact(h.explanation), kind="score"
            )
            rows.append(said)
        fell_text.append(f"{metric} {_score_text(b, metric)} → {_score_text(h, metric)}")
    # Only a base run without a transcript predates them: this run may lack tool calls because
    # it ended in an error before it made any (or its process died).
    recorded = before is None or before.transcript is not None
    # The reference the base's run was scored against, as its transcript recorded it (files
    # written before transcripts kept it have none: then nothing is said of it).
    bt, ht = (before.transcript if before else None), head.transcript
    changed, parts = (
        reference_rows(bt.reference, ht.reference)
        if bt is not None and ht is not None and "reference" in bt.model_fields_set
        else ([], frozenset())
    )
    rows.extend(changed)
    rows.extend(_run_rows(before, head))
    rows.extend(_transcript_rows(before, head, before_runs, ignore_state))
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
        reference_changed=parts,
    )


# Each part of a question's reference, as the why-table names it (the user's own keys are not
# kept in a transcript: nothing to compare them with). A turn-by-turn part that differs is shown
# instead of its whole-conversation form, which an ADK eval set derives from it.
REFERENCE_PARTS = {
    "turn_references": "expected answers by turn",
    "reference_response": "expected answer",
    "turn_tool_calls": "expected tool calls by turn",
    "reference_tool_interactions": "expected tool calls",
    "reference_trajectory": "expected path",
    "reference_state_variables": "expected state",
}
_DERIVED = {"reference_response": "turn_references", "reference_tool_interactions": "turn_tool_calls"}
# The parts of the reference each built-in metric family reads (by its name's start): a fall on
# one of them is the reference's doing only when a part it reads changed.
READS = {
    "response_match": ("reference_response", "turn_references"),
    "final_response_match": ("reference_response", "turn_references"),
    "tool_usage_accuracy": ("reference_tool_interactions", "turn_tool_calls"),
    "tool_call_precision": ("reference_tool_interactions", "turn_tool_calls"),
    "tool_trajectory_avg_score": ("reference_tool_interactions", "turn_tool_calls"),
    "trajectory": ("reference_trajectory", "reference_tool_interactions"),
    "state_management_fidelity": ("reference_state_variables",),
}


def reads_changed(metric: str, changed: frozenset[str]) -> bool:
    """Whether ``metric`` reads a part of the reference in ``changed``; False for a metric that
    reads none we know of (a judge, a custom metric, an error): its fall is not put on the reference."""
    parts = next((p for name, p in READS.items() if metric.startswith(name)), ())
    return any(part in changed for part in parts)


def reference_rows(base: ReferenceData, head: ReferenceData) -> tuple[list[DiffRow], frozenset[str]]:
    """The parts of the reference that differ from the one the base's run was scored against
    (recorded in its transcript), as rows, and their names. Where they changed is not known here
    (this PR, or the dataset on the base branch after its baseline was made): "changed" says only that."""
    sides = {f: (_plain(getattr(base, f)), _plain(getattr(head, f))) for f in REFERENCE_PARTS}
    differ = {f for f, (was, now) in sides.items() if was != now}
    rows = []
    for field, label in REFERENCE_PARTS.items():
        if field in differ and _DERIVED.get(field) not in differ:
            was, now = _texts(*sides[field])
            rows.append(DiffRow(label=label, base=was, head=f"{now} (changed)", kind="reference"))
    return rows, frozenset(differ)


def _plain(value: Any) -> Any:
    """``value`` as JSON has it (models as their fields), an empty one as none."""
    plain = json.loads(json.dumps(value, sort_keys=True, default=lambda v: v.model_dump() if hasattr(v, "model_dump") else str(v)))
    return None if plain in ({}, [], "") else plain


# Characters kept before the first difference of two long texts that share their start.
_LEAD = 40


def _texts(was: Any, now: Any) -> tuple[str, str]:
    """Both sides on one line each; when they share a long start, from a little before where they
    first differ, so that an edit past the cut is seen."""
    a, b = ("(none)" if v is None else v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, sort_keys=True) for v in (was, now))
    same = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    if same > _LEAD and max(len(a), len(b)) > VALUE_CHARS:
        a, b = "…" + a[same - _LEAD :], "…" + b[same - _LEAD :]
    return compact(a), compact(b)


def _run_rows(before: QuestionResult | None, head: QuestionResult) -> list[DiffRow]:
    """The error and the tool calls: for a run that ended in an error, what it did before the
    error call by call, then the error; otherwise the error first, then the calls that differ."""
    rows: list[DiffRow] = []
    error_row = None
    if (before.error if before else None) != head.error:
        error_row = DiffRow(
            label="error",
            base=compact(before.error) if before and before.error else "none",
            head=compact(head.error) if head.error else "none",
            kind="error",
        )
    base_calls, head_calls = _calls(before), _calls(head)
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
    return rows


def _transcript_rows(
    before: QuestionResult | None, head: QuestionResult, before_runs: list[QuestionResult], ignore_state: frozenset[str]
) -> list[DiffRow]:
    """The final state (without what the base's own runs vary in) and the answer, where they differ."""
    rows: list[DiffRow] = []
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
    return rows
