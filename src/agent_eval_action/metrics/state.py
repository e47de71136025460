"""State fidelity: the reference session-state variables against the final state."""

from __future__ import annotations

from agent_eval_action.metrics.registry import MetricContext, register, unscored
from agent_eval_action.metrics.values import mismatches
from agent_eval_action.models.questions import Question
from agent_eval_action.models.scores import Score, scored
from agent_eval_action.models.traces import Trace


@register(
    "state_management_fidelity",
    "higher",
    "Share of reference_state_variables whose final value matches (nested objects by their expected keys).",
)
def state_management_fidelity(question: Question, trace: Trace, ctx: MetricContext) -> Score:
    reference = question.reference_data.reference_state_variables
    if reference is None:
        return unscored("no reference_state_variables")
    if trace.final_state is None:
        return unscored(trace.missing.get("state", "the run recorded no final session state"))
    if not reference:
        return scored(value=1.0, explanation="no state variables expected")
    problems: list[str] = []
    good = 0
    for key, expected in reference.items():
        if key not in trace.final_state:
            problems.append(f"{key}: missing from the final state")
            continue
        found = mismatches(expected, trace.final_state[key], key)
        problems.extend(found)
        good += not found
    return scored(
        value=good / len(reference),
        explanation=f"{good} of {len(reference)} state variables match",
        details={"mismatches": problems},
    )
