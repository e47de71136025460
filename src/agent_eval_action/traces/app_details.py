"""ADK's ``app_details`` of each turn, read from a run's spans: for each agent that asked the
model in the turn, the system instruction and the tool declarations its first request sent, as
ADK's eval records them (``EvaluationGenerator._get_app_details_by_invocation_id``: the request
its interceptor saw for each agent's first event of the invocation). ADK's judged criteria put
them in the judge's prompt: hallucinations_v1's context ("Developer instructions", "Tool
definitions"), the rubric-based criteria's tool declarations.

Every ``call_llm`` span holds its request (``gcp.vertex.agent.llm_request``, unless the run
turned message content off in spans), its invocation and session; its agent is the nearest
agent span above it (``invoke_agent``, or the legacy ``agent_run``). A turn is one invocation of the run's own session (the first
model call's): an AgentTool's agent runs in a session of its own, whose events ADK's eval never
sees, so its requests are not the turn's either.
"""

from __future__ import annotations

from typing import Any

from agent_eval_action.models.traces import Span
from agent_eval_action.text.jsonish import maybe_json
from agent_eval_action.traces.spans import agent_name

REQUEST = "gcp.vertex.agent.llm_request"
INVOCATION = "gcp.vertex.agent.invocation_id"
SESSION = "gcp.vertex.agent.session_id"


def _agent(span: Span, by_id: dict[str, Span]) -> str | None:
    """The agent of the nearest agent span above ``span``."""
    seen: set[str] = set()
    current: Span | None = span
    while current is not None:
        if (name := agent_name(current)) is not None:
            return name
        parent = current.parent_span_id
        if parent is None or parent in seen:
            return None
        seen.add(parent)
        current = by_id.get(parent)
    return None


def _top(span: Span, by_id: dict[str, Span]) -> str | None:
    """The id of the topmost span above ``span`` (its own, when it has no parent among the spans)."""
    seen: set[str] = set()
    current = span
    while current.parent_span_id and current.parent_span_id in by_id and current.parent_span_id not in seen:
        seen.add(current.parent_span_id)
        current = by_id[current.parent_span_id]
    return current.span_id


def _turn_roots(spans: list[Span], by_id: dict[str, Span], turns: int) -> dict[str, int] | None:
    """Each turn's top span (one a turn: ADK's ``invocation`` or the run's top agent span), by
    start time, -> its turn; None when the spans do not show one top span a turn."""
    roots = sorted(
        (s for s in spans if s.span_id and not (s.parent_span_id and s.parent_span_id in by_id)),
        key=lambda s: (s.start_time is None, s.start_time or 0),
    )
    if len(roots) != turns:
        return None
    return {str(root.span_id): turn for turn, root in enumerate(roots)}


def _instruction(value: Any) -> str:
    """A request's system instruction as text (ADK sends a string; a Content's parts are joined)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(str(p.get("text")) for p in value.get("parts") or [] if isinstance(p, dict) and p.get("text"))
    return ""


def app_details_by_turn(spans: list[Span], turns: int) -> list[dict[str, Any] | None]:
    """Per turn (``turns`` of them, in order), ADK's ``AppDetails`` JSON (``{"agent_details":
    {name: {"name", "instructions", "tool_declarations"}}}``), or None where the spans recorded
    no request of it."""
    out: list[dict[str, Any] | None] = [None] * turns
    by_id = {span.span_id: span for span in spans if span.span_id}
    asked = sorted(
        (s for s in spans if s.name == "call_llm" and s.attributes.get(INVOCATION)),
        key=lambda s: (s.start_time is None, s.start_time or 0),
    )
    requests = [(span, maybe_json(span.attributes.get(REQUEST))) for span in asked]
    requests = [(span, request) for span, request in requests if isinstance(request, dict) and request]
    if not requests:
        return out
    session = requests[0][0].attributes.get(SESSION)
    invocations: list[str] = []
    turn_of_root = _turn_roots(spans, by_id, turns)
    for span, request in requests:
        if session is not None and span.attributes.get(SESSION) not in (None, session):
            continue  # an AgentTool's agent, in a session of its own
        invocation = str(span.attributes[INVOCATION])
        if invocation not in invocations:
            invocations.append(invocation)
        # The turn whose top span holds the call; without that structure, the invocations in the
        # order they first asked (a turn that asked no model would shift the later ones).
        turn = turn_of_root.get(str(_top(span, by_id)), -1) if turn_of_root is not None else invocations.index(invocation)
        if turn < 0:
            continue
        agent = _agent(span, by_id)
        if turn >= turns or agent is None:
            continue
        details = out[turn] or {"agent_details": {}}
        out[turn] = details
        if agent in details["agent_details"]:
            continue  # ADK keeps each agent's first request of the invocation
        config = request.get("config") if isinstance(request.get("config"), dict) else {}
        tools = config.get("tools") if isinstance(config.get("tools"), list) else []
        details["agent_details"][agent] = {
            "name": agent,
            "instructions": _instruction(config.get("system_instruction")),
            "tool_declarations": tools,
        }
    return out
