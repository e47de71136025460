"""Each metric's unit is declared where it is registered (a custom metric's in its config), and
the views, the gate's timing rule and the readers of producers' columns all ask the registry."""

from __future__ import annotations

from agent_eval_action.metrics import REGISTRY
from agent_eval_action.metrics.registry import declare_unit, one_run, recorded_unit, unit_of
from agent_eval_action.verdict.gate import is_timing
from agent_eval_action.views.figures import fmt, signed


def test_the_built_in_metrics_declare_their_units() -> None:
    units = {name: metric.unit for name, metric in REGISTRY.items() if metric.unit != "ratio"}
    assert units == {
        "latency": "seconds",
        "turn_latency": "seconds",
        "llm_calls": "count",
        "tool_calls": "count",
        "input_tokens": "count",
        "output_tokens": "count",
        "cached_tokens": "count",
        "total_tokens": "count",
        "cost_usd": "usd",
        "llm_time": "seconds",
        "tool_time": "seconds",
        "time_to_first_response": "seconds",
        "thinking_tokens": "count",
        "max_call_tokens": "count",
        "grounding_chunks": "count",
        "output_density": "count",
        "agent_handoffs": "count",
        "distinct_tools": "count",
        "tool_call_count_v1": "count",
        "inference_call_count_v1": "count",
        "token_usage_v1": "count",
        "invocation_duration_v1": "seconds",
    }
    assert [name for name in REGISTRY if is_timing(name)] == [
        "latency", "turn_latency", "llm_time", "tool_time", "time_to_first_response", "invocation_duration_v1"
    ]  # fmt: skip
    assert (recorded_unit("duration_sec"), recorded_unit("tool_calls"), recorded_unit("unique_tools")) == ("seconds", "count", None)


@one_run
def test_a_declared_unit_is_the_one_every_view_uses() -> None:
    assert fmt(1234.0, "my_count_metric") == "123400%"  # undeclared: a ratio, as ADK's and judges' scores are
    declare_unit("my_count_metric", "count")
    declare_unit("my_wait", "seconds")
    declare_unit("latency", "count")  # a built-in metric's unit is its registration's
    assert unit_of("my_count_metric") == "count" and unit_of("latency") == "seconds"
    assert (fmt(1234.0, "my_count_metric"), signed(-3.0, "my_count_metric")) == ("1,234", "−3")
    assert fmt(2.5, "my_wait") == "2.50\u00a0s" and is_timing("my_wait")


def test_a_runs_declared_units_are_its_own_never_the_next_runs_in_the_same_process() -> None:
    @one_run
    def run(declared: dict[str, str]) -> tuple[str, bool]:
        for name, unit in declared.items():
            declare_unit(name, unit)  # type: ignore[arg-type]
        return fmt(3.0, "custom_wait"), is_timing("custom_wait")

    # A library user's two runs (or two commands a test runs in one process), the same custom
    # metric name: the second run's figures and verdict are in its own unit.
    assert run({"custom_wait": "seconds"}) == ("3.00\u00a0s", True)
    assert run({"custom_wait": "count"}) == ("3", False)
    assert run({}) == ("300%", False)  # declared by neither: a ratio, not what an earlier run said
    assert unit_of("custom_wait") == "ratio"


def test_a_call_inside_a_command_sees_the_commands_units_and_its_own_go_with_it() -> None:
    @one_run
    def inner() -> tuple[str, str]:
        declare_unit("inner_only", "count")
        return unit_of("outer_wait"), unit_of("inner_only")

    @one_run
    def command() -> tuple[tuple[str, str], str]:
        declare_unit("outer_wait", "seconds")  # the config's custom metric, declared by the command
        return inner(), unit_of("inner_only")

    assert command() == (("seconds", "count"), "ratio")


def test_adks_efficiency_reports_have_no_gate_rule_and_refuse_one() -> None:
    """Informational, as in ADK: the gate's default rule for them sets nothing, and a rule of the
    config's naming one is refused (so no path gates them)."""
    import pytest
    from pydantic import ValidationError

    from agent_eval_action.config.tables import GateConfig, MetricRule
    from agent_eval_action.metrics.adk_efficiency import INFORMATIONAL
    from agent_eval_action.verdict.gate import rule_for

    assert {"tool_call_count_v1", "inference_call_count_v1", "token_usage_v1", "invocation_duration_v1"} == INFORMATIONAL
    for name in INFORMATIONAL:
        metric = REGISTRY[name]
        rule = rule_for(name, metric.kind, metric.direction, GateConfig())
        assert (rule.min, rule.max, rule.max_regression, rule.pass_threshold) == (None, None, None, None), name
        with pytest.raises(ValidationError, match=rf"\[gate\.metrics\.{name}\]: ADK's efficiency reports never pass or fail"):
            GateConfig(metrics={name: MetricRule(max_regression=0.1)})
