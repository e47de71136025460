"""Metrics measured from the trace, with the source of each number."""

from __future__ import annotations

import pytest

from agent_eval_action.config import Config
from agent_eval_action.metrics import REGISTRY, MetricContext
from agent_eval_action.metrics.trace_metrics import price_for
from agent_eval_action.models.questions import Question, ToolInteraction, Turn
from agent_eval_action.models.scores import Score
from agent_eval_action.models.traces import LlmCall, Trace

Q = Question(id="q", user_inputs=["hi"])
CTX = MetricContext(prices=Config().price_table())


def run(name: str, trace: Trace, ctx: MetricContext = CTX) -> Score:
    return REGISTRY[name].score(Q, trace, ctx)


def test_latency_prefers_the_trace_and_says_so() -> None:
    result = run("latency", Trace(latency_s=2.5, latency_source="session_trace spans", recorded_metrics={"duration_sec": 9.0}))
    assert result.value == 2.5 and result.details["source"] == "session_trace spans"
    fallback = run("latency", Trace(recorded_metrics={"duration_sec": 9.0}))
    assert fallback.value == 9.0 and fallback.details["source"] == "metric.duration_sec"
    assert run("latency", Trace()).value is None


def test_turn_latency_is_mean_of_turns() -> None:
    result = run("turn_latency", Trace(turns=[Turn(duration_s=1.0), Turn(duration_s=2.0), Turn()]))
    assert result.value == 1.5
    assert run("turn_latency", Trace(turns=[Turn()])).value is None


def test_tool_counts_and_error_rate_exclude_transfers() -> None:
    trace = Trace(
        tool_interactions=[
            ToolInteraction(tool_name="transfer_to_agent"),
            ToolInteraction(tool_name="a"),
            ToolInteraction(tool_name="b", error="boom"),
        ]
    )
    assert run("tool_calls", trace).value == 2
    assert run("tool_error_rate", trace).value == 0.5
    assert run("tool_error_rate", Trace(tool_interactions=[])).value is None
    recorded = run("tool_error_rate", Trace(recorded_metrics={"tool_calls": 4, "tool_errors": 1}))
    assert recorded.value == 0.25 and recorded.details["source"] == "metric.tool_errors"


def test_tokens_sum_over_calls() -> None:
    trace = Trace(
        llm_calls=[
            LlmCall(input_tokens=100, output_tokens=10, cached_tokens=40, thoughts_tokens=5),
            LlmCall(input_tokens=50, output_tokens=5),
        ]
    )
    assert run("input_tokens", trace).value == 150
    assert run("output_tokens", trace).value == 20
    assert run("cached_tokens", trace).value == 40
    assert run("total_tokens", trace).value == 170
    assert run("llm_calls", trace).value == 2
    recorded = run("total_tokens", Trace(recorded_metrics={"total_tokens": 999}))
    assert recorded.value == 999 and recorded.details["source"] == "metric.total_tokens"
    assert run("input_tokens", Trace(recorded_metrics={"total_tokens": 999})).value is None


def test_cost_from_price_table_with_cache_and_thinking() -> None:
    ctx = MetricContext(prices={"m": {"input": 1.0, "output": 10.0, "cached": 0.25}})
    trace = Trace(
        llm_calls=[
            LlmCall(model="models/m-001", input_tokens=1_000_000, cached_tokens=400_000, output_tokens=100_000, thoughts_tokens=100_000)
        ]
    )
    # 600k fresh * $1 + 400k cached * $0.25 + 200k output * $10, per million.
    assert run("cost_usd", trace, ctx).value == pytest.approx(0.6 + 0.1 + 2.0)


def test_cost_unknown_model_is_unscored_with_fix() -> None:
    result = run("cost_usd", Trace(llm_calls=[LlmCall(model="my-model", input_tokens=5)]))
    assert result.value is None and "[prices]" in result.explanation


def test_price_lookup_longest_prefix() -> None:
    table = Config().price_table()
    assert price_for("gemini-2.5-flash-lite-001", table) == table["gemini-2.5-flash-lite"]
    assert price_for("gemini-2.5-flash", table) == table["gemini-2.5-flash"]
    assert price_for("projects/p/locations/l/publishers/google/models/gemini-2.5-pro", table) == table["gemini-2.5-pro"]
    assert price_for("claude", table) is None


def test_every_metric_has_a_direction_and_description() -> None:
    for metric in REGISTRY.values():
        assert metric.direction in ("higher", "lower", "neutral")
        assert metric.description
    assert REGISTRY["latency"].direction == "lower" and REGISTRY["cost_usd"].direction == "lower"


def test_one_cost_rule_for_the_agents_calls_and_the_judges() -> None:
    """Cached prompt tokens at the cached price, for a judge's answer as for the agent's model calls."""
    from agent_eval_action.metrics.trace_metrics import tokens_cost
    from agent_eval_action.run.judges.client import Answer
    from agent_eval_action.run.judges.engine import _cost

    prices = {"judge-model": {"input": 1.0, "output": 4.0, "cached": 0.25}}
    assert tokens_cost(prices["judge-model"], 1_000_000, 1_000_000, 800_000) == pytest.approx(0.2 + 0.2 + 4.0)
    answer = Answer(text="{}", input_tokens=1_000_000, output_tokens=1_000_000, cached_tokens=800_000)
    assert _cost("judge-model-001", answer, prices) == pytest.approx(4.4)
    assert tokens_cost({"input": 1.0, "output": 2.0}, 100, 0, 100) == pytest.approx(100 / 1_000_000)  # no cached price: input's
