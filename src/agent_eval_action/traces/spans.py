"""OpenTelemetry spans of ADK runs -> trace facts, in current and legacy ADK naming.

Current (schema v2): ``invoke_agent NAME``, ``generate_content MODEL``, ``execute_tool NAME``
with ``gen_ai.*`` attributes. Legacy (schema v1 and older recordings): ``invocation``,
``agent_run [NAME]``, ``call_llm``, ``execute_tool NAME`` with ``gcp.vertex.agent.*``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agent_eval_action.models.questions import ToolInteraction, TrajectoryStep
from agent_eval_action.models.traces import LlmCall, Span, SpanStats
from agent_eval_action.text.jsonish import loads, maybe_json, opt_str

MERGED_TOOLS = "(merged tools)"


# Past any date in seconds (year 33 658): a float this large was an integer count of nanoseconds
# that a JSON writer without integers (JavaScript's) wrote as a float.
FLOAT_NS = 1e15


def _time_ns(value: Any) -> int | None:
    """A span time in nanoseconds since the epoch, read by its unit as producers write it: an
    integer (or a text of digits) is nanoseconds, as OpenTelemetry's SDK and ADK's trace endpoint
    write ``start_time`` / ``end_time``; a number with a fraction is seconds, as Python's
    ``time.time()`` and ADK's event timestamps are; a date text is ISO 8601. Nothing is guessed
    from a number's size (except a float past any date in seconds, which is nanoseconds)."""
    if value is None or value == "" or isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        if text.isdecimal():
            return int(text)
        try:
            value = float(text)
        except ValueError:
            try:
                return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1e9)
            except ValueError:
                return None
    if isinstance(value, int):
        return value if 0 <= value <= 10**20 else None
    if not isinstance(value, float) or not math.isfinite(value) or value < 0:
        return None
    if value >= FLOAT_NS:
        return int(value) if value <= 1e20 else None
    return round(value * 1e9)


@dataclass(slots=True)
class RawSpan:
    """A normalized span; a plain dataclass because recorded files hold millions of them."""

    name: str
    span_id: str | None
    trace_id: str | None
    parent_span_id: str | None
    start_time: int | None
    end_time: int | None
    attributes: dict[str, Any]

    def to_model(self) -> Span:
        return Span(**{field: getattr(self, field) for field in self.__slots__})


def parse_span(raw: dict[str, Any]) -> RawSpan:
    """A span dict as producers write it (ids as hex strings or ints, attributes maybe JSON text)."""
    attributes = raw.get("attributes") or {}
    if isinstance(attributes, str):
        try:
            attributes = loads(attributes)[0]
        except ValueError:
            attributes = {}
    context: dict[str, Any] = raw["context"] if isinstance(raw.get("context"), dict) else {}
    parent = raw.get("parent_span_id", raw.get("parent_id"))
    if isinstance(parent, dict):
        parent = parent.get("span_id")
    return RawSpan(
        name=str(raw.get("name", "")),
        span_id=opt_str(raw.get("span_id", context.get("span_id"))),
        trace_id=opt_str(raw.get("trace_id", context.get("trace_id"))),
        parent_span_id=opt_str(parent),
        start_time=_time_ns(raw.get("start_time")),
        end_time=_time_ns(raw.get("end_time")),
        attributes=attributes if isinstance(attributes, dict) else {},
    )


def _suffix(name: str, prefix: str) -> str:
    rest = name[len(prefix) :].strip()
    return rest.strip("[]").strip()


@dataclass
class SpanFacts:
    latency_s: float | None = None
    turn_durations: list[float] = field(default_factory=list)
    turn_starts: list[float] = field(default_factory=list)
    llm_calls: list[LlmCall] | None = None
    tool_interactions: list[ToolInteraction] | None = None
    trajectory: list[TrajectoryStep] | None = None
    root_agent: str | None = None
    # Why the spans' times are not measurements, when they are not.
    timing_note: str | None = None
    # Per model call (in ``llm_calls`` order): the id of the session event it wrote and its
    # session's id, as the legacy spans record them (None where not recorded).
    llm_call_origins: list[tuple[str | None, str | None]] = field(default_factory=list)
    stats: SpanStats | None = None


def _is_llm(span: RawSpan) -> bool:
    return (
        span.name == "call_llm"
        or span.name.startswith("generate_content")
        or span.attributes.get("gen_ai.operation.name") in ("generate_content", "chat")
    )


def _answered_with_usage(span: RawSpan) -> bool:
    """A span of another name that holds a model response with its usage: the seed pipeline's
    converter writes the model call that asked for a tool as ``execute_tool NAME`` (ADK's own
    tool spans hold an empty ``{}`` there)."""
    response = span.attributes.get("gcp.vertex.agent.llm_response")
    if not response or (isinstance(response, str) and "usage" not in response):
        return False
    parsed = maybe_json(response)
    return isinstance(parsed, dict) and isinstance(parsed.get("usage_metadata") or parsed.get("usageMetadata"), dict)


def agent_name(span: RawSpan | Span) -> str | None:
    """The agent an agent span runs (``invoke_agent NAME``, or the legacy ``agent_run [NAME]``);
    None for any other span."""
    if span.name.startswith("invoke_agent"):
        return str(span.attributes.get("gen_ai.agent.name") or _suffix(span.name, "invoke_agent")) or None
    if span.name.startswith("agent_run"):
        return _suffix(span.name, "agent_run") or None
    return None


def _tool_name(span: RawSpan) -> str | None:
    if not span.name.startswith("execute_tool"):
        return None
    name = str(span.attributes.get("gen_ai.tool.name") or _suffix(span.name, "execute_tool"))
    return None if not name or name == MERGED_TOOLS else name


def _int(value: Any) -> int:
    """A token count as recorded; anything unreadable counts as not recorded (0)."""
    # Not ``value in (None, "", True, False)``: 1 == True, so a count of one would read as zero.
    if value is None or value == "" or isinstance(value, bool):
        return 0
    try:
        return max(int(float(value)), 0)
    except (TypeError, ValueError, OverflowError):
        return 0


def _usage(span: RawSpan, *, timed: bool = True) -> LlmCall:
    """A model call's usage; ``timed``: its span's times are measurements (else no duration)."""
    attrs = span.attributes
    model = attrs.get("gen_ai.request.model") or attrs.get("gen_ai.response.model")
    if not model and span.name.startswith("generate_content "):
        model = span.name.split(" ", 1)[1]
    fields: dict[str, Any] = {
        "model": str(model) if model else None,
        "agent": opt_str(attrs.get("gen_ai.agent.name")),
        "input_tokens": _int(attrs.get("gen_ai.usage.input_tokens")),
        "output_tokens": _int(attrs.get("gen_ai.usage.output_tokens")),
        "cached_tokens": _int(attrs.get("gen_ai.usage.cache_read.input_tokens")),
        "thoughts_tokens": _int(attrs.get("gen_ai.usage.reasoning.output_tokens")),
        "duration_s": _duration(span) if timed else None,
    }
    # Legacy spans keep the whole usage inside the serialized response (thinking, cache and tool-use
    # prompt counts the attributes lack): it is read whenever it is there.
    response = maybe_json(attrs.get("gcp.vertex.agent.llm_response"))
    usage = (response.get("usage_metadata") or response.get("usageMetadata")) if isinstance(response, dict) else None
    if isinstance(usage, dict):
        fields.update(usage_fields(usage))
    elif not (fields["input_tokens"] or fields["output_tokens"]) and not any(key in attrs for key in USAGE_ATTRIBUTES):
        fields["usage_recorded"] = False  # unknown, not zero
    if isinstance(response, dict):
        fields["grounding_chunks"] = grounding_chunks(response)
    # One model made once the fields are known: a copy with updates cost as much again (model calls
    # are a third of a recorded row's spans).
    return LlmCall(**fields)


USAGE_ATTRIBUTES = ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens")


# Each token count of a ``GenerateContentResponseUsageMetadata`` dict, by its key in either style.
_USAGE_KEYS = (
    ("input_tokens", "prompt_token_count", "promptTokenCount"),
    ("output_tokens", "candidates_token_count", "candidatesTokenCount"),
    ("cached_tokens", "cached_content_token_count", "cachedContentTokenCount"),
    ("thoughts_tokens", "thoughts_token_count", "thoughtsTokenCount"),
    ("tool_use_prompt_tokens", "tool_use_prompt_token_count", "toolUsePromptTokenCount"),
)


def usage_fields(usage: dict[str, Any]) -> dict[str, int]:
    """Token counts of a ``GenerateContentResponseUsageMetadata`` dict (either key style; the
    first key that holds a value is read)."""
    counts: dict[str, int] = {}
    for name, snake, camel in _USAGE_KEYS:
        value = usage.get(snake)
        if value is None:
            value = usage.get(camel)
        counts[name] = 0 if value is None else _int(value)
    return counts


def grounding_chunks(response: dict[str, Any]) -> int:
    """The grounding chunks (citations) of a model response or event: its grounding metadata at the
    top or in its first candidate, in either key style."""
    metadata = response.get("grounding_metadata") or response.get("groundingMetadata")
    candidates = response.get("candidates")
    if not metadata and isinstance(candidates, list) and candidates and isinstance(candidates[0], dict):
        metadata = candidates[0].get("grounding_metadata") or candidates[0].get("groundingMetadata")
    chunks = (metadata.get("grounding_chunks") or metadata.get("groundingChunks")) if isinstance(metadata, dict) else None
    return len(chunks) if isinstance(chunks, list) else 0


# A tool's answer that says it failed, as ADK tools write it: {"status": "error", "error_message": ...}
# (ADK's documented convention), an API's failure status (Google Maps' REQUEST_DENIED ...), a lone
# {"error": ...} (ADK's answer for an unknown tool).
FAILED_STATUSES = {
    "error", "failed", "failure", "fail", "denied", "request_denied", "invalid_request", "over_query_limit",
    "over_daily_limit", "unknown_error", "permission_denied", "unauthenticated", "not_found", "unavailable",
    "deadline_exceeded", "internal", "aborted", "resource_exhausted",
}  # fmt: skip


def tool_failure(result: Any) -> str | None:
    """Why a tool's answer is a failure, or None when it is not one (or not a dict)."""
    if not isinstance(result, dict):
        return None
    status = result.get("status")
    message = result.get("error_message") or result.get("error") or result.get("errorMessage")
    if isinstance(status, str) and status.strip().lower() in FAILED_STATUSES:
        return str(message) if message else f"status {status.strip()}"
    if message:
        return message if isinstance(message, str) else json.dumps(message, default=str)
    return None


def _duration(span: RawSpan) -> float | None:
    if span.start_time is None or span.end_time is None:
        return None
    return max(span.end_time - span.start_time, 0) / 1e9


def _tool_interaction(span: RawSpan, name: str) -> ToolInteraction:
    attrs = span.attributes
    args = maybe_json(attrs.get("gen_ai.tool.call.arguments", attrs.get("gcp.vertex.agent.tool_call_args")))
    result = maybe_json(attrs.get("gen_ai.tool.call.result", attrs.get("gcp.vertex.agent.tool_response")))
    error = attrs.get("error.type") or attrs.get("error.message") or tool_failure(result)
    return ToolInteraction(
        tool_name=name,
        input_arguments=args if isinstance(args, dict) else {},
        output_result=None if result in ("{}", "N/A") else result,
        agent=opt_str(attrs.get("gen_ai.agent.name")),
        error=str(error) if error else None,
        call_id=opt_str(attrs.get("gen_ai.tool.call.id")),
    )


def _roots(spans: list[RawSpan]) -> list[RawSpan] | None:
    """The trace's top spans, one per turn (ADK's ``invocation``, or a run's top ``invoke_agent``):
    spans whose parent is not among the spans. Spans without ids show no structure: then the
    ``invocation`` spans are the turns; None when there are none either."""
    ids = {s.span_id for s in spans if s.span_id}
    if ids:
        return [s for s in spans if not s.parent_span_id or s.parent_span_id not in ids]
    invocations = [s for s in spans if s.name == "invocation"]
    # An agent called as a tool runs an invocation of its own inside the turn's: not a turn.
    inside = [
        s for s in invocations
        if any(o is not s and (o.start_time or 0) <= (s.start_time or 0) and (s.end_time or 0) <= (o.end_time or 0) for o in invocations)
    ]  # fmt: skip
    return [s for s in invocations if s not in inside] or None


def _covered(spans: list[RawSpan]) -> float:
    """Seconds that the spans (sorted by start) cover together."""
    total, reach = 0, None
    for span in spans:
        start, end = span.start_time or 0, max(span.end_time or 0, span.start_time or 0)
        if reach is None or start >= reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total / 1e9


def _is_handoff(span: RawSpan) -> str | None:
    """The agent a span hands the work to, as the seed pipeline's ``calculate_agent_handoffs``
    counts them: an agent run (``invoke_agent X``, ``agent_run X``), a transfer, or an agent called
    as a tool (its type ``AgentTool``, or, where the type is not recorded, a name ending in "Agent")."""
    if span.name.startswith(("invoke_agent ", "agent_run ")):
        return _suffix(span.name, "invoke_agent" if span.name.startswith("invoke_agent") else "agent_run") or None
    if span.name.startswith("execute_tool "):
        name = _suffix(span.name, "execute_tool")
        kind = span.attributes.get("gen_ai.tool.type")
        if name == "transfer_to_agent" or kind == "AgentTool" or (kind is None and name.endswith("Agent")):
            return name
    return None


def _stats(timed: list[RawSpan], handoffs: list[str], llm_spans: list[RawSpan], timing_note: str | None) -> SpanStats:
    """``timed``: the spans with both times, in recorded order; ``handoffs``: the agents the spans
    hand the work to (:func:`_is_handoff`)."""
    stats = SpanStats(agent_handoffs=len(handoffs), handoff_agents=sorted(set(handoffs)), timing_note=timing_note)
    if timing_note is not None or not timed:
        return stats
    # From the run's first span (ADK's): our worker's own wrapper of a turn spans its set-up too.
    start = min(s.start_time or 0 for s in [s for s in timed if not s.name.startswith("agent_eval.")] or timed)
    model = [s for s in llm_spans if s.start_time is not None and s.end_time is not None]
    tools = [s for s in timed if "execute_tool" in s.name or "tool_call" in s.name]
    stats.llm_time_s = sum(_duration(s) or 0.0 for s in model) if model else None
    stats.tool_time_s = sum(_duration(s) or 0.0 for s in tools)
    # The first answer of a model: the end of the model call that ended first.
    stats.first_response_s = (min(s.end_time or 0 for s in model) - start) / 1e9 if model else None
    return stats


SYNTHESIZED_NOTE = (
    "the session_trace was written from the session's events by the seed pipeline's converter (base_url "
    '"simulation"): each model and tool span lasts 1 s by construction, so span times are not measurements'
)


MISMATCHED_NOTE = (
    "the session_trace spans were not recorded by OpenTelemetry (a span's trace id differs from its parent's, which "
    "OpenTelemetry never writes): a producer made them from the session's events, so span times are not measurements"
)


def _made_up(spans: list[RawSpan]) -> bool:
    """Spans a producer wrote from events rather than recorded: OpenTelemetry gives every span its
    parent's trace id, and the seed pipeline's converters give each span a new one."""
    trace_of = {s.span_id: s.trace_id for s in spans if s.span_id and s.trace_id}
    return any(s.parent_span_id in trace_of and s.trace_id and trace_of[s.parent_span_id] != s.trace_id for s in spans)


def facts_from_spans(spans: list[RawSpan], *, synthesized: bool = False) -> SpanFacts:
    """Latency, per-turn timing, model calls, tool calls and trajectory from one question's spans.

    ``synthesized``: the producer says it made the spans up from events. Spans whose trace ids
    show it (a child's differs from its parent's) are taken as made up too. The times of
    made-up spans are not read.
    """
    facts = SpanFacts()
    # One pass in recorded order: the spans with both times (the turns, the latency and the
    # statistics are read from them, the tool time summed in this order) and the handoffs.
    timed: list[RawSpan] = []
    handoffs: list[str] = []
    for span in spans:
        if span.start_time is not None and span.end_time is not None:
            timed.append(span)
        handoff = _is_handoff(span)
        if handoff:
            handoffs.append(handoff)
    facts.timing_note = SYNTHESIZED_NOTE if synthesized else MISMATCHED_NOTE if _made_up(spans) else None
    synthesized = facts.timing_note is not None
    if timed and not synthesized:
        roots = sorted((s for s in _roots(timed) or [] if s.start_time is not None), key=lambda s: s.start_time or 0)
        facts.turn_durations = [d for s in roots if (d := _duration(s)) is not None]
        facts.turn_starts = [(s.start_time or 0) / 1e9 for s in roots]
        if facts.turn_durations:
            # The turns' time, as our runs and the seed pipeline count it: not the user's between
            # them (the union of the top spans, so that none is counted twice).
            facts.latency_s = _covered(roots)
        else:
            start = min(s.start_time for s in timed if s.start_time is not None)
            end = max(s.end_time for s in timed if s.end_time is not None)
            facts.latency_s = max(end - start, 0) / 1e9
    # One pass in time order: the legacy model calls, and the agents and tools in the order they ran.
    ordered = sorted(spans, key=lambda s: s.start_time or 0)
    legacy_llm: list[RawSpan] = []
    tools: list[ToolInteraction] = []
    steps: list[TrajectoryStep] = []
    last_agent: str | None = None
    named = False  # an agent's or a tool's span is there: the calls and steps are recorded (maybe none)
    for span in ordered:
        if span.name == "call_llm" or _answered_with_usage(span):
            legacy_llm.append(span)
        agent = agent_name(span)
        if agent:
            named = True
            facts.root_agent = facts.root_agent or agent
            if agent != last_agent:
                steps.append(TrajectoryStep(kind="agent", name=agent))
                last_agent = agent
            continue
        tool = _tool_name(span)
        if tool:
            named = True
            tools.append(_tool_interaction(span, tool))
            steps.append(TrajectoryStep(kind="tool", name=tool))
    llm_spans = legacy_llm or [s for s in ordered if _is_llm(s)]
    if llm_spans:
        facts.llm_calls = [_usage(s, timed=not synthesized) for s in llm_spans]
        facts.llm_call_origins = [
            (
                opt_str(s.attributes.get("gcp.vertex.agent.event_id")),
                opt_str(s.attributes.get("gcp.vertex.agent.session_id") or s.attributes.get("gen_ai.conversation.id")),
            )
            for s in llm_spans
        ]
    facts.stats = _stats(timed, handoffs, llm_spans, facts.timing_note)
    if named:
        facts.tool_interactions = tools
        facts.trajectory = steps
    return facts
