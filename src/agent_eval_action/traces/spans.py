"""OpenTelemetry spans of ADK runs -> trace facts, in current and legacy ADK naming.

Current (schema v2): ``invoke_agent NAME``, ``generate_content MODEL``, ``execute_tool NAME``
with ``gen_ai.*`` attributes. Legacy (schema v1 and older recordings): ``invocation``,
``agent_run [NAME]``, ``call_llm``, ``execute_tool NAME`` with ``gcp.vertex.agent.*``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agent_eval_action.core.jsonish import loads, maybe_json, opt_str
from agent_eval_action.core.models import LlmCall, Span, ToolInteraction, TrajectoryStep

MERGED_TOOLS = "(merged tools)"


def _time_ns(value: Any) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if isinstance(value, int) and value >= 10**17:
        return value  # nanoseconds already; float() would round them
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            try:
                return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1e9)
            except ValueError:
                return None
    else:
        return None
    if not math.isfinite(number) or number < 0 or number > 1e20:
        return None
    # Accept seconds, milliseconds and microseconds as well as nanoseconds since the epoch.
    if number < 1e11:
        return int(number * 1e9)
    if number < 1e14:
        return int(number * 1e6)
    if number < 1e17:
        return int(number * 1e3)
    return int(number)


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


def _is_llm(span: RawSpan) -> bool:
    return (
        span.name == "call_llm"
        or span.name.startswith("generate_content")
        or span.attributes.get("gen_ai.operation.name") in ("generate_content", "chat")
    )


def _agent_name(span: RawSpan) -> str | None:
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


def _usage(span: RawSpan) -> LlmCall:
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
        "duration_s": _duration(span),
    }
    if not (fields["input_tokens"] or fields["output_tokens"]):
        # Legacy spans keep the usage only inside the serialized response.
        response = maybe_json(attrs.get("gcp.vertex.agent.llm_response"))
        usage = response.get("usage_metadata") or response.get("usageMetadata") if isinstance(response, dict) else None
        if isinstance(usage, dict):
            fields.update(usage_fields(usage))
        elif not any(key in attrs for key in USAGE_ATTRIBUTES):
            fields["usage_recorded"] = False  # unknown, not zero
    # One model made once the fields are known: a copy with updates cost as much again (model calls
    # are a third of a recorded row's spans).
    return LlmCall(**fields)


USAGE_ATTRIBUTES = ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens")


def usage_fields(usage: dict[str, Any]) -> dict[str, int]:
    """Token counts of a ``GenerateContentResponseUsageMetadata`` dict (either key style)."""

    def pick(*keys: str) -> int:
        for key in keys:
            if usage.get(key) is not None:
                return _int(usage[key])
        return 0

    return {
        "input_tokens": pick("prompt_token_count", "promptTokenCount"),
        "output_tokens": pick("candidates_token_count", "candidatesTokenCount"),
        "cached_tokens": pick("cached_content_token_count", "cachedContentTokenCount"),
        "thoughts_tokens": pick("thoughts_token_count", "thoughtsTokenCount"),
    }


def _duration(span: RawSpan) -> float | None:
    if span.start_time is None or span.end_time is None:
        return None
    return max(span.end_time - span.start_time, 0) / 1e9


def _tool_interaction(span: RawSpan, name: str) -> ToolInteraction:
    attrs = span.attributes
    args = maybe_json(attrs.get("gen_ai.tool.call.arguments", attrs.get("gcp.vertex.agent.tool_call_args")))
    result = maybe_json(attrs.get("gen_ai.tool.call.result", attrs.get("gcp.vertex.agent.tool_response")))
    error = attrs.get("error.type") or attrs.get("error.message")
    if error is None and isinstance(result, dict) and "error" in result and len(result) == 1:
        error = str(result["error"])
    return ToolInteraction(
        tool_name=name,
        input_arguments=args if isinstance(args, dict) else {},
        output_result=None if result in ("{}", "N/A") else result,
        agent=opt_str(attrs.get("gen_ai.agent.name")),
        error=str(error) if error else None,
        call_id=opt_str(attrs.get("gen_ai.tool.call.id")),
    )


SYNTHETIC_NS = 1_000_000_000


def _made_up_timing(timed: list[RawSpan]) -> str | None:
    """Some producers write spans from session events with every model and tool span lasting
    exactly 1 s: their times are not measurements, and no latency is read from them."""
    leaves = [s for s in timed if _is_llm(s) or s.name.startswith("execute_tool")]
    if len(leaves) >= 2 and all(
        s.end_time is not None and s.start_time is not None and s.end_time - s.start_time == SYNTHETIC_NS for s in leaves
    ):
        return f"the session_trace spans are not timings: all {len(leaves)} model and tool spans last exactly 1 s"
    return None


def facts_from_spans(spans: list[RawSpan]) -> SpanFacts:
    """Latency, per-turn timing, model calls, tool calls and trajectory from one question's spans."""
    facts = SpanFacts()
    timed = [s for s in spans if s.start_time is not None and s.end_time is not None]
    facts.timing_note = _made_up_timing(timed)
    if timed and facts.timing_note is None:
        start = min(s.start_time for s in timed if s.start_time is not None)
        end = max(s.end_time for s in timed if s.end_time is not None)
        facts.latency_s = max(end - start, 0) / 1e9
        ids = {s.span_id for s in spans if s.span_id}
        roots = sorted((s for s in timed if not s.parent_span_id or s.parent_span_id not in ids), key=lambda s: s.start_time or 0)
        facts.turn_durations = [d for s in roots if (d := _duration(s)) is not None]
        facts.turn_starts = [(s.start_time or 0) / 1e9 for s in roots]
    ordered = sorted(spans, key=lambda s: s.start_time or 0)
    legacy_llm = [s for s in ordered if s.name == "call_llm"]
    llm_spans = legacy_llm or [s for s in ordered if _is_llm(s)]
    if llm_spans:
        facts.llm_calls = [_usage(s) for s in llm_spans]
        if facts.timing_note is not None:
            facts.llm_calls = [call.model_copy(update={"duration_s": None}) for call in facts.llm_calls]
    tools: list[ToolInteraction] = []
    steps: list[TrajectoryStep] = []
    last_agent: str | None = None
    for span in ordered:
        agent = _agent_name(span)
        if agent:
            facts.root_agent = facts.root_agent or agent
            if agent != last_agent:
                steps.append(TrajectoryStep(kind="agent", name=agent))
                last_agent = agent
            continue
        tool = _tool_name(span)
        if tool:
            tools.append(_tool_interaction(span, tool))
            steps.append(TrajectoryStep(kind="tool", name=tool))
    if any(_tool_name(s) or _agent_name(s) for s in spans):
        facts.tool_interactions = tools
        facts.trajectory = steps
    return facts
