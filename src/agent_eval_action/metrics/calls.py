"""The one definition of a tool call, shared by every metric and by ``convert``.

``transfer_to_agent`` is how an ADK agent hands the conversation to another agent: an agent
step, not a tool call, unless the question's reference names it (a reference recorded from an
ADK session lists the transfer among the calls it expects, and then it counts as one). Traces
keep every call and step as recorded; this module decides, per question, what counts.
"""

from __future__ import annotations

from agent_eval_action.models.questions import Question, ToolInteraction, TrajectoryStep
from agent_eval_action.models.traces import Trace

TRANSFER = "transfer_to_agent"


def names_transfer(question: Question) -> bool:
    """Whether the question's reference expects ``transfer_to_agent`` as a tool call or a step."""
    ref = question.reference_data
    if ref.reference_trajectory and TRANSFER in ref.reference_trajectory:
        return True
    if any(call.tool_name == TRANSFER for call in ref.reference_tool_interactions or ()):
        return True
    return any(call.tool_name == TRANSFER for turn in ref.turn_tool_calls or () for call in turn)


def counts(name: str, question: Question) -> bool:
    """Whether a call of the tool ``name`` counts as a tool call for this question."""
    return name != TRANSFER or names_transfer(question)


def tool_calls(question: Question, trace: Trace) -> list[ToolInteraction] | None:
    """The run's tool calls as every metric counts them; None when the run recorded none at all."""
    if trace.tool_interactions is None:
        return None
    if names_transfer(question):
        return list(trace.tool_interactions)
    return [call for call in trace.tool_interactions if call.tool_name != TRANSFER]


def steps(question: Question, trace: Trace) -> list[TrajectoryStep] | None:
    """The run's trajectory with transfer calls left to the agent steps unless the reference names them."""
    if trace.trajectory is None:
        return None
    if names_transfer(question):
        return list(trace.trajectory)
    return [step for step in trace.trajectory if not (step.kind == "tool" and step.name == TRANSFER)]
