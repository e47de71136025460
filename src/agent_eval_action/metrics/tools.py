"""Tool-call metrics: did the agent make the reference calls with the reference arguments?"""

from __future__ import annotations

from typing import Any

from agent_eval_action.metrics.calls import tool_calls
from agent_eval_action.metrics.registry import MetricContext, per_run, register, unscored
from agent_eval_action.metrics.values import matches, mismatches
from agent_eval_action.models.questions import Question, ReferenceToolCall, ToolInteraction
from agent_eval_action.models.scores import Score, scored
from agent_eval_action.models.traces import Trace


def actual_calls(question: Question, trace: Trace) -> list[ToolInteraction]:
    """The trace's tool calls as every metric counts them (``calls.tool_calls``)."""
    return tool_calls(question, trace) or []


def _arguments_match(ref: ReferenceToolCall, call: ToolInteraction) -> bool:
    return ref.tool_name == call.tool_name and matches(ref.input_arguments, call.input_arguments)


def match_calls(reference: list[ReferenceToolCall], calls: list[ToolInteraction]) -> dict[int, int]:
    """A maximum one-to-one matching of reference calls to actual calls (reference index -> call index).

    Greedy matching can lose a match when one call fits two references (``{}`` and
    ``{"x": 1}``), so this uses augmenting paths (Kuhn's algorithm); lists are small.
    """
    fits = [[j for j, call in enumerate(calls) if _arguments_match(ref, call)] for ref in reference]
    call_owner: dict[int, int] = {}
    for i in range(len(reference)):
        _augment(fits, call_owner, i, set())
    return {i: j for j, i in call_owner.items()}


def _augment(fits: list[list[int]], call_owner: dict[int, int], i: int, seen: set[int]) -> bool:
    """An augmenting path from reference ``i``. A module function, not a closure that calls itself:
    such a closure is a reference cycle, garbage that scoring (the collector paused) would keep."""
    for j in fits[i]:
        if j in seen:
            continue
        seen.add(j)
        if j not in call_owner or _augment(fits, call_owner, call_owner[j], seen):
            call_owner[j] = i
            return True
    return False


def _call_details(question: Question, trace: Trace) -> tuple[dict[int, int], list[ToolInteraction], dict[str, Any]]:
    reference = question.reference_data.reference_tool_interactions or []
    calls = actual_calls(question, trace)
    matched = match_calls(reference, calls)
    used = set(matched.values())
    leftover = [call for j, call in enumerate(calls) if j not in used]
    missing: list[dict[str, Any]] = []
    wrong: list[dict[str, Any]] = []
    for i, ref in enumerate(reference):
        if i in matched:
            continue
        same_name = [call for call in leftover if call.tool_name == ref.tool_name] or [
            call for call in calls if call.tool_name == ref.tool_name
        ]
        if same_name:
            wrong.append(
                {
                    "tool_name": ref.tool_name,
                    "expected": ref.input_arguments,
                    "actual": same_name[0].input_arguments,
                    "differences": mismatches(ref.input_arguments, same_name[0].input_arguments),
                }
            )
        else:
            missing.append({"tool_name": ref.tool_name, "expected": ref.input_arguments})
    wrong_names = {w["tool_name"] for w in wrong}
    unexpected = [{"tool_name": call.tool_name, "actual": call.input_arguments} for call in leftover if call.tool_name not in wrong_names]
    details = {"missing": missing, "wrong_arguments": wrong, "unexpected": unexpected}
    return matched, calls, details


def _compare(question: Question, trace: Trace) -> Score | tuple[int, dict[int, int], list[ToolInteraction], dict[str, Any]]:
    """(reference count, matching, actual calls, details), or the unscored Score when there is
    nothing to compare. The tuple is shared by the run's metrics: read it, don't change it."""
    compared = _compared(question, trace)
    return unscored(compared) if isinstance(compared, str) else compared


@per_run  # tool_usage_accuracy and tool_call_precision compare the same run in turn
def _compared(question: Question, trace: Trace) -> str | tuple[int, dict[int, int], list[ToolInteraction], dict[str, Any]]:
    reference = question.reference_data.reference_tool_interactions
    if reference is None:
        return "no reference_tool_interactions"
    if trace.tool_interactions is None:
        return trace.missing.get("tool_calls", "the run recorded no tool interactions")
    return (len(reference), *_call_details(question, trace))


@register("tool_usage_accuracy", "higher", "Share of the reference tool calls the agent made with the reference arguments.")
def tool_usage_accuracy(question: Question, trace: Trace, ctx: MetricContext) -> Score:
    compared = _compare(question, trace)
    if isinstance(compared, Score):
        return compared
    expected, matched, _, details = compared
    if not expected:
        return scored(value=1.0, explanation="no tool calls expected", details=details)
    return scored(value=len(matched) / expected, explanation=f"{len(matched)} of {expected} reference calls made", details=details)


@register("tool_call_precision", "higher", "Share of the agent's tool calls that match a reference call.")
def tool_call_precision(question: Question, trace: Trace, ctx: MetricContext) -> Score:
    compared = _compare(question, trace)
    if isinstance(compared, Score):
        return compared
    expected, matched, calls, details = compared
    if not calls:
        if not expected:
            return scored(value=1.0, explanation="no tool calls expected and none made", details=details)
        return unscored("the agent made no tool calls (tool_usage_accuracy scores the miss)", **details)
    return scored(value=len(matched) / len(calls), explanation=f"{len(matched)} of {len(calls)} calls expected", details=details)
