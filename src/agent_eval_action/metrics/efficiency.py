"""How a run spent its tokens and time: the seed pipeline's deterministic figures we had no
counterpart for (its ``deterministic_metrics.py``: cache efficiency, thinking, the latency
breakdown, tool utilization, agent handoffs, context saturation, grounding, output density).

All are trace metrics: information, gated only by a rule of the config's that names them. The
token figures come from the model calls (the session's events, the spans for the calls that only
they hold), the time figures from the OpenTelemetry spans. docs/metrics.md names the pipeline's
figure beside each and says where a definition differs from its own, and why.
"""

from __future__ import annotations

from collections.abc import Callable

from agent_eval_action.metrics.calls import tool_calls as counted_calls
from agent_eval_action.metrics.registry import MetricContext, register, unscored
from agent_eval_action.metrics.trace_metrics import usage_unknown
from agent_eval_action.models.questions import Question
from agent_eval_action.models.scores import Score, scored
from agent_eval_action.models.traces import LlmCall, SpanStats, Trace

NO_SPANS = "no OpenTelemetry spans recorded"


def _calls(trace: Trace) -> list[LlmCall] | str:
    """The run's model calls with known usage, or why there are none to read."""
    if not trace.llm_calls:
        return trace.missing.get("tokens", "no model calls recorded")
    return usage_unknown(trace) or list(trace.llm_calls)


def _from_calls(figure: Callable[[list[LlmCall]], tuple[float, str] | str]) -> Callable[[Question, Trace, MetricContext], Score]:
    def score(question: Question, trace: Trace, ctx: MetricContext) -> Score:
        calls = _calls(trace)
        if isinstance(calls, str):
            return unscored(calls)
        found = figure(calls)
        if isinstance(found, str):
            return unscored(found)
        value, explanation = found
        return scored(value=value, explanation=explanation, details={"source": "llm calls", "llm_calls": len(calls)})

    return score


def _cache_hit_rate(calls: list[LlmCall]) -> tuple[float, str] | str:
    prompt = sum(c.input_tokens for c in calls)
    cached = sum(c.cached_tokens for c in calls)
    if not prompt:
        return "no prompt tokens recorded"
    return cached / prompt, f"{cached} of {prompt} prompt tokens served from the context cache"


def _thinking_tokens(calls: list[LlmCall]) -> tuple[float, str]:
    thoughts = sum(c.thoughts_tokens for c in calls)
    return float(thoughts), f"{thoughts} thinking tokens in {sum(1 for c in calls if c.thoughts_tokens)} of {len(calls)} model call(s)"


def _reasoning_ratio(calls: list[LlmCall]) -> tuple[float, str] | str:
    thoughts = sum(c.thoughts_tokens for c in calls)
    output = thoughts + sum(c.output_tokens for c in calls)
    if not output:
        return "no output tokens recorded"
    return thoughts / output, f"{thoughts} of {output} output tokens were thinking"


def _max_call_tokens(calls: list[LlmCall]) -> tuple[float, str]:
    largest = max(calls, key=lambda c: c.total_tokens)
    return float(largest.total_tokens), f"{largest.total_tokens} tokens in the largest model call (of {len(calls)})"


def _grounding_chunks(calls: list[LlmCall]) -> tuple[float, str]:
    chunks = sum(c.grounding_chunks for c in calls)
    return float(chunks), f"{chunks} grounding chunk(s) in {sum(1 for c in calls if c.grounding_chunks)} of {len(calls)} response(s)"


def _output_density(calls: list[LlmCall]) -> tuple[float, str]:
    output = sum(c.output_tokens for c in calls)
    return output / len(calls), f"{output} response tokens over {len(calls)} model call(s)"


register("cache_hit_rate", "higher", "Share of prompt tokens served from the context cache.", kind="trace")(_from_calls(_cache_hit_rate))
register("thinking_tokens", "lower", "Thinking (reasoning) tokens over all model calls.", kind="trace", unit="count")(
    _from_calls(_thinking_tokens)
)
register("reasoning_ratio", "neutral", "Thinking tokens / (thinking + response tokens).", kind="trace")(_from_calls(_reasoning_ratio))
register(
    "max_call_tokens",
    "lower",
    "Tokens of the largest single model call (prompt and answer): how full the context got.",
    kind="trace",
    unit="count",
)(_from_calls(_max_call_tokens))
register("grounding_chunks", "neutral", "Grounding chunks (citations) in the model's responses.", kind="trace", unit="count")(
    _from_calls(_grounding_chunks)
)
register("output_density", "neutral", "Mean response tokens per model call.", kind="trace", unit="count")(_from_calls(_output_density))


def _stats(trace: Trace) -> SpanStats | str:
    return trace.span_stats if trace.span_stats is not None else trace.missing.get("spans", NO_SPANS)


def _timed(pick: Callable[[SpanStats], float | None], what: str) -> Callable[[Question, Trace, MetricContext], Score]:
    def score(question: Question, trace: Trace, ctx: MetricContext) -> Score:
        stats = _stats(trace)
        if isinstance(stats, str):
            return unscored(stats)
        if stats.timing_note is not None:
            return unscored(stats.timing_note)
        seconds = pick(stats)
        if seconds is None:
            return unscored(f"no {what} in the spans")
        return scored(value=seconds, explanation=f"{seconds:.3f} s", details={"source": "session_trace spans"})

    return score


register("llm_time", "lower", "Seconds spent in model calls (the sum of their spans).", kind="trace", unit="seconds")(
    _timed(lambda s: s.llm_time_s, "model call spans")
)
register("tool_time", "lower", "Seconds spent in tool calls (the sum of their spans).", kind="trace", unit="seconds")(
    _timed(lambda s: s.tool_time_s, "tool spans")
)
register(
    "time_to_first_response", "lower", "Seconds from the run's first span to the end of its first model call.", kind="trace", unit="seconds"
)(_timed(lambda s: s.first_response_s, "model call spans"))


@register("agent_handoffs", "neutral", "Agent runs, transfers and agents called as tools, from the spans.", kind="trace", unit="count")
def agent_handoffs(question: Question, trace: Trace, ctx: MetricContext) -> Score:
    stats = _stats(trace)
    if isinstance(stats, str):
        return unscored(stats)
    return scored(
        value=float(stats.agent_handoffs),
        explanation=f"{stats.agent_handoffs} handoff(s) among {len(stats.handoff_agents)} agent(s)",
        details={"source": "session_trace spans", "agents": stats.handoff_agents},
    )


@register("distinct_tools", "neutral", "Number of different tools called.", kind="trace", unit="count")
def distinct_tools(question: Question, trace: Trace, ctx: MetricContext) -> Score:
    calls = counted_calls(question, trace)
    if calls is None:
        recorded = trace.recorded_metrics.get("unique_tools")
        if recorded is not None:
            return scored(value=recorded, explanation=f"{recorded:g} tool(s)", details={"source": "metric.unique_tools"})
        return unscored(trace.missing.get("tool_calls", "no tool calls recorded"))
    names = sorted({call.tool_name for call in calls})
    return scored(value=float(len(names)), explanation=f"{len(names)} tool(s): {', '.join(names) or 'none'}", details={"tools": names})
