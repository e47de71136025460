"""ADK session events (as JSON dicts, snake_case or camelCase) -> trace facts.

Used for recorded ADK session objects and for sessions read back from an ADK API server.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent_eval_action.models.questions import AdkTurnUsage, IntermediateText, Question, ToolInteraction, TrajectoryStep, Turn
from agent_eval_action.models.traces import LlmCall, SubAgentResponse, Trace
from agent_eval_action.text.jsonish import get, opt_str
from agent_eval_action.traces.adk_usage import turn_usage
from agent_eval_action.traces.calls import calls_beyond_events
from agent_eval_action.traces.spans import RawSpan, facts_from_spans, grounding_chunks, tool_failure, usage_fields


@dataclass
class EventFacts:
    tool_interactions: list[ToolInteraction] = field(default_factory=list)
    trajectory: list[TrajectoryStep] = field(default_factory=list)
    sub_agent_trace: list[SubAgentResponse] = field(default_factory=list)
    final_response: str | None = None
    # Last agent text of each invocation (one invocation per user turn), in order.
    turn_responses: list[str | None] = field(default_factory=list)
    # The text parts of each invocation's final response as ADK's eval reads it (see
    # ``final_response_parts``), in order; None for an invocation without one.
    turn_response_parts: list[list[str] | None] = field(default_factory=list)
    # The user's text of each invocation, in order (what a simulated user said).
    user_inputs: list[str | None] = field(default_factory=list)
    # What ADK's efficiency reports read of each invocation, in order.
    turn_usage: list[AdkTurnUsage] = field(default_factory=list)
    # Each invocation's texts before its final response (``IntermediateText``), in order.
    turn_intermediate: list[list[IntermediateText]] = field(default_factory=list)
    llm_calls: list[LlmCall] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)
    root_agent: str | None = None
    errors: list[str] = field(default_factory=list)


def _parts(event: dict[str, Any]) -> list[dict[str, Any]]:
    content = get(event, "content") or {}
    parts = get(content, "parts") or []
    return [p for p in parts if isinstance(p, dict)]


def event_text(event: dict[str, Any]) -> str:
    return "".join(str(p["text"]) for p in _parts(event) if p.get("text") and not p.get("thought"))


def _is_model_call(event: dict[str, Any], author: str) -> bool:
    """An event that a model call produced: an agent's event with usage, a model version or model-role content.

    Function responses are agent-authored too, but their content has the user role.
    """
    if author == "user" or get(event, "partial"):
        return False
    if isinstance(get(event, "usage_metadata"), dict) or get(event, "model_version"):
        return True
    return bool(get(get(event, "content"), "role") == "model")


def _is_final_response(event: dict[str, Any], parts: list[dict[str, Any]]) -> bool:
    """``Event.is_final_response()`` on an event dict."""
    actions = get(event, "actions") or {}
    if get(actions, "skip_summarization") or get(event, "long_running_tool_ids"):
        return True
    if get(event, "partial"):
        return False
    if any(get(p, "function_call") or get(p, "function_response") for p in parts):
        return False
    return not (parts and get(parts[-1], "code_execution_result") is not None)


def facts_from_events(events: list[Any], initial_state: dict[str, Any] | None = None) -> EventFacts:
    """What the events of one session show. A step without an author is left out of the
    trajectory and the sub-agent trace: no name is made up for it."""
    facts = EventFacts(state=dict(initial_state or {}))
    pending: dict[str, int] = {}  # open call id -> index in tool_interactions
    last_agent: str | None = None
    invocation_order: list[str] = []
    turn_of: dict[str, int] = {}
    turn_text: dict[str, str | None] = {}
    final_parts: dict[str, list[dict[str, Any]] | None] = {}
    final_event: dict[str, int] = {}  # invocation -> the index of the event taken as its final response
    # invocation -> (event index, its texts, calls before it, with a call, author) of each agent event with text
    said: dict[str, list[tuple[int, list[str], int, bool, str | None]]] = {}
    calls_so_far: dict[str, int] = {}
    user_text: dict[str, str | None] = {}
    for index, event in enumerate(events):
        if not isinstance(event, dict):
            continue
        author = opt_str(get(event, "author")) or ""
        invocation = opt_str(get(event, "invocation_id")) or ""
        if invocation and invocation not in turn_of:
            turn_of[invocation] = len(invocation_order)
            invocation_order.append(invocation)
            turn_text[invocation] = final_parts[invocation] = user_text[invocation] = None
        turn = turn_of.get(invocation)
        is_user = author == "user"
        partial = bool(get(event, "partial"))
        parts = _parts(event)
        if author and not is_user and author != last_agent:
            facts.root_agent = facts.root_agent or author
            facts.trajectory.append(TrajectoryStep(kind="agent", name=author))
            last_agent = author
        actions = get(event, "actions") or {}
        delta = get(actions, "state_delta") or {}
        if isinstance(delta, dict):
            facts.state.update(delta)
        if _is_model_call(event, author):
            facts.llm_calls.append(_llm_call(event, author))
        error = get(event, "error_code") or get(event, "error_message")
        if error and not is_user:
            facts.errors.append(opt_str(get(event, "error_message")) or str(error))
        has_call = _tool_parts(facts, pending, parts, author, turn)
        text = event_text(event)
        if invocation and not is_user and not partial:
            texts = [str(p["text"]) for p in parts if p.get("text")]
            if texts:
                said.setdefault(invocation, []).append((index, texts, calls_so_far.get(invocation, 0), has_call, author or None))
            calls_so_far[invocation] = calls_so_far.get(invocation, 0) + sum(1 for p in parts if isinstance(get(p, "function_call"), dict))
        if is_user:
            if invocation and user_text[invocation] is None and text:
                user_text[invocation] = text
            continue
        if parts and invocation and _is_final_response(event, parts):
            # As ADK's eval picks an invocation's final response: a later final event replaces an
            # earlier one unless the earlier has text and the later has none.
            earlier = final_parts[invocation]
            if not (earlier and any(p.get("text") for p in earlier)) or any(p.get("text") for p in parts):
                final_parts[invocation] = parts
                final_event[invocation] = index
        if text and not partial and not has_call:
            facts.final_response = text
            if author:
                facts.sub_agent_trace.append(SubAgentResponse(agent_name=author, text_response=text))
            if invocation:
                turn_text[invocation] = text
    facts.turn_responses = [turn_text[i] for i in invocation_order]
    facts.turn_response_parts = [final_response_parts(final_parts[i]) for i in invocation_order]
    facts.user_inputs = [user_text[i] for i in invocation_order]
    # What ADK's eval keeps between the user's message and the final response: every other text.
    facts.turn_intermediate = [
        [
            IntermediateText(texts=texts, at=calls, with_call=with_call, author=who)
            for at, texts, calls, with_call, who in said.get(i, [])
            if at != final_event.get(i)
        ]
        for i in invocation_order
    ]
    usage = turn_usage(events)
    facts.turn_usage = [usage.get(i, AdkTurnUsage()) for i in invocation_order]
    return facts


def _llm_call(event: dict[str, Any], author: str) -> LlmCall:
    usage = get(event, "usage_metadata")
    counts = usage_fields(usage) if isinstance(usage, dict) else {}
    return LlmCall(
        model=opt_str(get(event, "model_version")),
        agent=author or None,
        usage_recorded=isinstance(usage, dict),
        grounding_chunks=_event_grounding(event),
        **counts,
    )


def _tool_parts(facts: EventFacts, pending: dict[str, int], parts: list[dict[str, Any]], author: str, turn: int | None) -> bool:
    """An event's function calls (opened, in ``pending`` by id) and responses (closing them);
    whether it made a call."""
    has_call = False
    for part in parts:
        call = get(part, "function_call")
        if isinstance(call, dict):
            has_call = True
            name = opt_str(call.get("name")) or ""
            args = call.get("args") or {}
            interaction = ToolInteraction(
                tool_name=name,
                input_arguments=args if isinstance(args, dict) else {},
                agent=author or None,
                call_id=opt_str(call.get("id")),
                turn=turn,
            )
            facts.tool_interactions.append(interaction)
            pending[opt_str(call.get("id")) or f"#{len(facts.tool_interactions)}"] = len(facts.tool_interactions) - 1
            facts.trajectory.append(TrajectoryStep(kind="tool", name=name))
        response = get(part, "function_response")
        if isinstance(response, dict):
            _attach_response(facts, pending, response)
    return has_call


def _event_grounding(event: dict[str, Any]) -> int:
    metadata = get(event, "grounding_metadata")
    return grounding_chunks({"grounding_metadata": metadata}) if isinstance(metadata, dict) else 0


def final_response_parts(parts: list[dict[str, Any]] | None) -> list[str] | None:
    """The texts ADK's eval reads from a final response: every part with text, thoughts included."""
    if parts is None:
        return None
    return [str(p["text"]) for p in parts if isinstance(p, dict) and p.get("text")]


def _attach_response(facts: EventFacts, pending: dict[str, int], response: dict[str, Any]) -> None:
    key = opt_str(response.get("id"))
    index = pending.pop(key, None) if key else None
    if index is None:  # no ids: pair with the oldest open call of that name
        name = response.get("name")
        for pkey, candidate in list(pending.items()):
            if facts.tool_interactions[candidate].tool_name == name:
                index = pending.pop(pkey)
                break
    if index is None:
        return
    target = facts.tool_interactions[index]
    result = response.get("response")
    error = tool_failure(result)
    facts.tool_interactions[index] = target.model_copy(update={"output_result": result, "error": error})


def trace_from_run(
    question: Question,
    events: list[dict[str, Any]],
    *,
    final_state: dict[str, Any] | None,
    turn_times: list[tuple[float, float]],
    app_name: str | None,
    models: dict[str, str],
    spans: list[RawSpan] | None = None,
) -> Trace:
    """The trace of one run: events as dicts, the session's final state, (start, seconds) per turn.

    A conversation scenario's user turns are the user messages among the events (the simulator
    wrote them); a static question's are its ``user_inputs``.
    """
    facts = facts_from_events(events, question.initial_state)
    tools = [
        # ADK's own call ids are random: drop them so traces of equal runs compare equal.
        call.model_copy(update={"call_id": None}) if call.call_id and call.call_id.startswith("adk-") else call
        for call in facts.tool_interactions
    ]
    span_facts = facts_from_spans(spans) if spans else None
    # An AgentTool's model calls are in its own session's events, which the run does not hold:
    # only the spans show them (traces/calls.py, as for a recorded row).
    beyond = calls_beyond_events(span_facts, facts.llm_calls, events, None)
    calls = [
        call if call.model or not call.agent else call.model_copy(update={"model": models.get(call.agent)})
        for call in [*facts.llm_calls, *beyond]
    ]
    inputs: list[str | None] = list(facts.user_inputs) if question.conversation_scenario is not None else list(question.user_inputs)
    turns = [
        Turn(
            user_input=text,
            response=facts.turn_responses[i] if i < len(facts.turn_responses) else None,
            response_parts=facts.turn_response_parts[i] if i < len(facts.turn_response_parts) else None,
            adk_usage=facts.turn_usage[i] if i < len(facts.turn_usage) else None,
            intermediate=facts.turn_intermediate[i] if i < len(facts.turn_intermediate) else None,
            start_time=turn_times[i][0] if i < len(turn_times) else None,
            duration_s=turn_times[i][1] if i < len(turn_times) else None,
        )
        for i, text in enumerate(inputs)
    ]
    return Trace(
        app_name=app_name,
        root_agent=facts.root_agent,
        turns=turns,
        tool_interactions=tools,
        trajectory=facts.trajectory,
        sub_agent_trace=facts.sub_agent_trace,
        final_response=facts.final_response,
        final_state=final_state if final_state is not None else facts.state,
        llm_calls=calls,
        spans=[span.to_model() for span in spans or []],
        span_stats=span_facts.stats if span_facts is not None else None,
        latency_s=sum(seconds for _, seconds in turn_times) if turn_times else None,
        latency_source="measured" if turn_times else None,
    )
