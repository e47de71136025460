"""Judge prompts. Every prompt sees the conversation, the final response, the trace AND the
question's reference data: a judge that never sees the reference cannot score correctness."""

from __future__ import annotations

import json
from typing import Any

from agent_eval_action.models.questions import Question
from agent_eval_action.models.traces import Trace

RESPONSE_CORRECTNESS = """You are grading an AI agent's answer against the reference for this test case.

## Conversation (user turns, in order)
{% for turn in user_inputs %}
{{ loop.index }}. {{ turn }}
{% endfor %}

## Agent's final response
{{ final_response }}

## What the agent did
Tool calls: {{ tool_calls }}
Trajectory: {{ trajectory }}
Final session state: {{ final_state }}

## Reference
Expected response: {{ reference.reference_response or "(none given)" }}
Expected tool calls: {{ reference.reference_tool_interactions }}
Expected final state: {{ reference.reference_state_variables }}
Other reference data: {{ reference.custom }}

## Rubric
Score 1 to 5: 5 = correct and complete by the reference (same facts, same outcome);
4 = correct with minor omissions; 3 = partly correct; 2 = mostly wrong; 1 = wrong, contradicts
the reference, or claims an action the trace shows did not happen.

Answer with JSON only: {"score": <integer 1-5>, "explanation": "<one or two sentences>"}.
"""


def user_turns(question: Question, trace: Trace) -> list[str]:
    """What the user said: a conversation scenario's simulated turns, else the question's inputs."""
    if question.conversation_scenario is not None and trace.turns:
        return [turn.user_input or "" for turn in trace.turns]
    return question.user_inputs


def judge_context(question: Question, trace: Trace) -> dict[str, Any]:
    """The variables a judge template can use."""
    ref = question.reference_data
    said = user_turns(question, trace)
    return {
        "question_id": question.id,
        "user_inputs": said,
        "prompt": "\n".join(said),
        "final_response": trace.final_response or "(no response)",
        "response": trace.final_response or "(no response)",
        "tool_calls": _json([c.model_dump(exclude_none=True) for c in trace.tool_interactions or []]),
        "trajectory": " -> ".join(f"{s.kind}:{s.name}" for s in trace.trajectory or []) or "(not recorded)",
        "final_state": _json(trace.final_state),
        "state": trace.final_state or {},
        "sub_agent_trace": _json([s.model_dump() for s in trace.sub_agent_trace]),
        "reference": {
            "reference_response": ref.reference_response,
            "reference_tool_interactions": _json([c.model_dump() for c in ref.reference_tool_interactions or []]),
            "reference_trajectory": _json(ref.reference_trajectory),
            "reference_state_variables": _json(ref.reference_state_variables),
            "custom": _json(ref.custom),
        },
        "reference_data": ref.model_dump(),
        "metadata": question.metadata,
    }


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
