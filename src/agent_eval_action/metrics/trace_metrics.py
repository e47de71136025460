"""Metrics measured from the trace: latency, call counts, tool errors, tokens and cost.

Each says in ``details["source"]`` where its number came from: the run's spans or
events when recorded, else the producer's ``metric.*`` columns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from agent_eval_action.metrics.calls import tool_calls as counted_calls
from agent_eval_action.metrics.registry import MetricContext, register, unscored
from agent_eval_action.models.questions import Question
from agent_eval_action.models.scores import Score, scored
from agent_eval_action.models.traces import LlmCall, Trace


@register(
    "latency", "lower", "Wall-clock seconds for the whole question (all turns).", kind="trace", unit="seconds", recorded=("duration_sec",)
)
def latency(question: Question, trace: Trace, ctx: MetricContext) -> Score:
    if trace.latency_s is not None:
        return scored(value=trace.latency_s, explanation=f"{trace.latency_s:.3f} s", details={"source": trace.latency_source})
    recorded = trace.recorded_metrics.get("duration_sec")
    if recorded is not None:
        return scored(value=recorded, explanation=f"{recorded:.3f} s", details={"source": "metric.duration_sec"})
    return unscored(trace.missing.get("timing", "no timing recorded"))


@register("turn_latency", "lower", "Mean wall-clock seconds per turn.", kind="trace", unit="seconds")
def turn_latency(question: Question, trace: Trace, ctx: MetricContext) -> Score:
    durations = [turn.duration_s for turn in trace.turns if turn.duration_s is not None]
    if not durations:
        return unscored(trace.missing.get("timing", "no per-turn timing recorded"))
    mean = sum(durations) / len(durations)
    return scored(
        value=mean,
        explanation=f"{mean:.3f} s over {len(durations)} turn(s)",
        details={"source": trace.latency_source, "per_turn": [round(d, 4) for d in durations]},
    )


@register("llm_calls", "lower", "Number of model calls.", kind="trace", unit="count")
def llm_calls(question: Question, trace: Trace, ctx: MetricContext) -> Score:
    if trace.llm_calls is None:
        return unscored(trace.missing.get("llm_calls", "no model calls recorded"))
    return scored(value=float(len(trace.llm_calls)), explanation=f"{len(trace.llm_calls)} model call(s)", details={"source": "trace"})


@register(
    "tool_calls",
    "neutral",
    "Number of tool calls (transfer_to_agent only where the reference names it).",
    kind="trace",
    unit="count",
    recorded=("tool_calls",),
)
def tool_calls(question: Question, trace: Trace, ctx: MetricContext) -> Score:
    calls = counted_calls(question, trace)
    if calls is not None:
        return scored(value=float(len(calls)), explanation=f"{len(calls)} tool call(s)", details={"source": "trace"})
    recorded = trace.recorded_metrics.get("tool_calls")
    if recorded is not None:
        return scored(value=recorded, explanation=f"{recorded:g} tool call(s)", details={"source": "metric.tool_calls"})
    return unscored(trace.missing.get("tool_calls", "no tool calls recorded"))


@register("tool_error_rate", "lower", "Share of tool calls that failed.", kind="trace")
def tool_error_rate(question: Question, trace: Trace, ctx: MetricContext) -> Score:
    calls = counted_calls(question, trace)
    if calls is not None:
        errors = [call.tool_name for call in calls if call.error]
        source = "trace"
        n_calls, n_errors = len(calls), len(errors)
    elif "tool_calls" in trace.recorded_metrics and "tool_errors" in trace.recorded_metrics:
        n_calls, n_errors = int(trace.recorded_metrics["tool_calls"]), int(trace.recorded_metrics["tool_errors"])
        errors, source = [], "metric.tool_errors"
    else:
        return unscored(trace.missing.get("tool_calls", "no tool calls recorded"))
    if n_calls == 0:
        return unscored("no tool calls made")
    return scored(
        value=n_errors / n_calls,
        explanation=f"{n_errors} of {n_calls} tool call(s) failed",
        details={"source": source, "failed": errors},
    )


def _token_metric(name: str, description: str, pick: Callable[[LlmCall], int], recorded_key: str | None = None) -> None:
    def score(question: Question, trace: Trace, ctx: MetricContext) -> Score:
        unknown = usage_unknown(trace)
        if trace.llm_calls and unknown is None:
            total = sum(pick(call) for call in trace.llm_calls)
            return scored(value=float(total), explanation=f"{total} tokens", details={"source": "llm calls"})
        if recorded_key and recorded_key in trace.recorded_metrics:
            value = trace.recorded_metrics[recorded_key]
            return scored(value=value, explanation=f"{value:g} tokens", details={"source": f"metric.{recorded_key}"})
        return unscored(unknown or trace.missing.get("tokens", "no token usage recorded"))

    register(name, "lower", description, kind="trace", unit="count", recorded=(recorded_key,) if recorded_key else ())(score)


_token_metric("input_tokens", "Prompt tokens over all model calls (cached ones included).", lambda c: c.input_tokens)
_token_metric("output_tokens", "Response tokens over all model calls (thinking included).", lambda c: c.output_tokens + c.thoughts_tokens)
_token_metric("cached_tokens", "Prompt tokens served from the context cache.", lambda c: c.cached_tokens)
_token_metric(
    "total_tokens",
    "Input plus output tokens (thinking and the model's tool-use prompts included), as Gemini totals them.",
    lambda c: c.total_tokens,
    recorded_key="total_tokens",
)


def usage_unknown(trace: Trace) -> str | None:
    """Why the token counts of the recorded model calls are unknown, if they are."""
    blind = sum(1 for call in trace.llm_calls or () if not call.usage_recorded)
    if not blind:
        return None
    return trace.missing.get("tokens") or f"token usage not recorded for {blind} of {len(trace.llm_calls or ())} model call(s)"


def price_for(model: str | None, prices: Mapping[str, Mapping[str, float]]) -> Mapping[str, float] | None:
    """The price entry whose key is the longest prefix of the model name (``models/`` dropped)."""
    if not model:
        return None
    name = model.removeprefix("models/").lower()
    if "/" in name:  # Vertex resource names: projects/.../models/NAME
        name = name.rsplit("/", 1)[-1]
    best = max((key for key in prices if name.startswith(key.lower())), key=len, default=None)
    return prices[best] if best is not None else None


def tokens_cost(price: Mapping[str, float], input_tokens: int, output_tokens: int, cached_tokens: int = 0) -> float:
    """USD for one call: fresh prompt tokens at the input price, cached ones at the cached price
    (the input price when the table has none), output (thinking included) at the output price.
    The one cost rule, for the agent's calls and the judges' alike."""
    fresh = max(input_tokens - cached_tokens, 0)
    return (
        fresh * price.get("input", 0.0)
        + cached_tokens * price.get("cached", price.get("input", 0.0))
        + output_tokens * price.get("output", 0.0)
    ) / 1_000_000


def calls_cost(calls: Iterable[LlmCall], prices: Mapping[str, Mapping[str, float]]) -> tuple[float, set[str]]:
    """USD of the agent's model calls (thinking tokens priced as output, the model's tool-use prompt
    tokens as input), and the models the price table has no entry for (their calls are not in the total)."""
    total = 0.0
    unknown: set[str] = set()
    for call in calls:
        price = price_for(call.model, prices)
        if price is None:
            unknown.add(call.model or "(unnamed model)")
            continue
        total += tokens_cost(
            price, call.input_tokens + call.tool_use_prompt_tokens, call.output_tokens + call.thoughts_tokens, call.cached_tokens
        )
    return total, unknown


@register("cost_usd", "lower", "Model cost in US dollars from the price table (per million tokens).", kind="trace", unit="usd")
def cost_usd(question: Question, trace: Trace, ctx: MetricContext) -> Score:
    if not trace.llm_calls:
        return unscored(trace.missing.get("tokens", "no per-call token usage recorded"))
    blind = usage_unknown(trace)
    if blind is not None:
        return unscored(blind)
    total, unknown = calls_cost(trace.llm_calls, ctx.prices)
    if unknown:
        return unscored(
            f"no price for model(s) {', '.join(sorted(unknown))}: add them under [prices] in the config",
            models=sorted(unknown),
        )
    return scored(value=total, explanation=f"${total:.6f}", details={"source": "llm calls"})
