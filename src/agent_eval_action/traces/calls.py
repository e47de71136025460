"""Model calls the spans show and a session's events do not: an AgentTool runs its agent in a
session of its own, so its calls are only in the spans. One function for every reader of a run
(a recorded row's events and spans, a live run's), so a question's ``llm_calls`` and tokens count
the same calls wherever its run came from."""

from __future__ import annotations

from collections import Counter
from typing import Any

from agent_eval_action.models.traces import LlmCall
from agent_eval_action.text.jsonish import get
from agent_eval_action.traces.spans import SpanFacts


def calls_beyond_events(spans: SpanFacts | None, event_calls: list[LlmCall], events: list[Any], session: str | None) -> list[LlmCall]:
    """Model calls the spans show and the session's events do not: an AgentTool runs its agent in
    a session of its own, so its calls are only in the spans.

    A span's call is an event's when the event it names is among them. One that names no stored
    event is still an event's when it is of the events' session and an event's call of the same
    usage is not yet claimed: ADK names in the span the id its response event had when the model
    answered, and gives that event a new id when a response processor yielded an event first (a
    BuiltInCodeExecutor's, for every response of a code-executing agent), so a span of the run's
    own session can name an id no stored event has. Otherwise the call is beyond the events when
    its session is another, or it names an event the session does not hold.
    """
    if spans is None or not spans.llm_calls or not spans.llm_call_origins:
        return []
    ids = {str(get(event, "id")) for event in events if isinstance(event, dict) and get(event, "id")}
    unclaimed = Counter(usage_key(call) for call in event_calls)
    named = [(call, origin) for call, origin in zip(spans.llm_calls, spans.llm_call_origins, strict=True)]
    for call, (event_id, _) in named:
        if event_id is not None and event_id in ids:
            unclaimed[usage_key(call)] -= 1
    out = []
    for call, (event_id, span_session) in named:
        if event_id is not None and event_id in ids:
            continue
        other_session = bool(span_session and session and span_session != session)
        if not other_session and unclaimed[usage_key(call)] > 0:
            unclaimed[usage_key(call)] -= 1
            continue
        if other_session or (event_id is not None and ids):
            out.append(call)
    return out


def usage_key(call: LlmCall) -> tuple[int, ...] | None:
    """What identifies one model call's answer across its event and its span: its token counts
    (None for a call whose counts were not recorded, which no span can be matched to)."""
    if not call.usage_recorded:
        return None
    return (call.input_tokens, call.output_tokens, call.cached_tokens, call.thoughts_tokens, call.tool_use_prompt_tokens)
