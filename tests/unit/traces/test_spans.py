"""OpenTelemetry spans of ADK runs read into trace facts, in current (``invoke_agent``,
``generate_content``, ``gen_ai.*``) and legacy (``invocation``, ``agent_run``, ``call_llm``,
``gcp.vertex.agent.*``) naming, with times in any unit producers write."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_eval_action.traces.spans import MERGED_TOOLS, RawSpan, facts_from_spans, parse_span, tool_failure, usage_fields

S = 1_000_000_000  # one second in nanoseconds
T0 = 1_763_000_000 * S  # November 2025, in nanoseconds since the epoch


def span(name: str, span_id: str, parent: str | None, start: float, end: float, **attributes: Any) -> RawSpan:
    return parse_span(
        {"name": name, "span_id": span_id, "trace_id": "t1", "parent_span_id": parent,
         "start_time": T0 + int(start * S), "end_time": T0 + int(end * S), "attributes": attributes}
    )  # fmt: skip


def current_run() -> list[RawSpan]:
    return [
        span("invocation", "1", None, 0, 2.5),
        span("invoke_agent shop", "2", "1", 0.1, 2.4, **{"gen_ai.agent.name": "shop"}),
        span("generate_content gemini-2.5-flash", "3", "2", 0.2, 0.9,
             **{"gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": "20", "gen_ai.usage.cache_read.input_tokens": 40,
                "gen_ai.agent.name": "shop"}),
        span("execute_tool lookup", "4", "2", 1.0, 1.2,
             **{"gen_ai.tool.name": "lookup", "gen_ai.tool.call.arguments": json.dumps({"item": "apple"}),
                "gen_ai.tool.call.result": json.dumps({"price": 1}), "gen_ai.tool.call.id": "c1", "gen_ai.agent.name": "shop"}),
        span("invoke_agent refunds", "5", "2", 1.3, 2.3, **{"gen_ai.agent.name": "refunds"}),
        span("generate_content gemini-2.5-pro", "6", "5", 1.4, 2.2, **{"gen_ai.usage.input_tokens": 7, "gen_ai.usage.output_tokens": 3}),
    ]  # fmt: skip


def legacy_run() -> list[RawSpan]:
    response = json.dumps({"usage_metadata": {"prompt_token_count": 100, "candidates_token_count": 20, "cached_content_token_count": 40}})
    return [
        span("invocation", "1", None, 0, 2.5),
        span("agent_run [shop]", "2", "1", 0.1, 2.4),
        span("call_llm", "3", "2", 0.2, 0.9, **{"gen_ai.request.model": "gemini-2.5-flash", "gcp.vertex.agent.llm_response": response}),
        span("generate_content gemini-2.5-flash", "3b", "3", 0.25, 0.85),  # the same call seen twice: call_llm wins
        span("execute_tool lookup", "4", "2", 1.0, 1.2,
             **{"gcp.vertex.agent.tool_call_args": json.dumps({"item": "apple"}), "gcp.vertex.agent.tool_response": json.dumps({"price": 1})}),
        span("agent_run [refunds]", "5", "2", 1.3, 2.3),
    ]  # fmt: skip


@pytest.mark.parametrize("run", [current_run, legacy_run])
def test_current_and_legacy_names_give_the_same_facts(run: Any) -> None:
    facts = facts_from_spans(run())
    assert facts.latency_s == pytest.approx(2.5)
    assert facts.turn_durations == [pytest.approx(2.5)]
    assert facts.root_agent == "shop"
    assert [(s.kind, s.name) for s in facts.trajectory or []] == [("agent", "shop"), ("tool", "lookup"), ("agent", "refunds")]
    (tool,) = facts.tool_interactions or []
    assert (tool.tool_name, tool.input_arguments, tool.output_result, tool.error) == ("lookup", {"item": "apple"}, {"price": 1}, None)
    first = (facts.llm_calls or [])[0]
    assert (first.model, first.input_tokens, first.output_tokens, first.cached_tokens) == ("gemini-2.5-flash", 100, 20, 40)
    assert first.duration_s == pytest.approx(0.7)


def test_current_spans_name_the_model_from_the_span_and_the_tools_call_id_and_agent() -> None:
    facts = facts_from_spans(current_run())
    assert [c.model for c in facts.llm_calls or []] == ["gemini-2.5-flash", "gemini-2.5-pro"]
    assert (facts.llm_calls or [])[0].agent == "shop"
    (tool,) = facts.tool_interactions or []
    assert (tool.call_id, tool.agent) == ("c1", "shop")


def test_legacy_spans_keep_one_call_per_call_llm() -> None:
    assert len(facts_from_spans(legacy_run()).llm_calls or []) == 1


def test_a_model_span_without_usage_is_unknown_not_zero() -> None:
    (call,) = facts_from_spans([span("call_llm", "1", None, 0, 1, **{"gen_ai.request.model": "m"})]).llm_calls or []
    assert call.usage_recorded is False and call.input_tokens == 0
    (zero,) = facts_from_spans([span("call_llm", "1", None, 0, 1, **{"gen_ai.usage.input_tokens": 0})]).llm_calls or []
    assert zero.usage_recorded is True  # recorded as zero


def test_unreadable_token_counts_count_as_zero() -> None:
    attributes = {"gen_ai.usage.input_tokens": "lots", "gen_ai.usage.output_tokens": -5, "gen_ai.usage.reasoning.output_tokens": "1e3"}
    (call,) = facts_from_spans([span("generate_content m", "1", None, 0, 1, **attributes)]).llm_calls or []
    assert (call.input_tokens, call.output_tokens, call.thoughts_tokens) == (0, 0, 1000)


def test_a_tool_error_and_the_merged_tools_span() -> None:
    spans = [
        span("execute_tool lookup", "1", None, 0, 1, **{"gen_ai.tool.call.result": json.dumps({"error": "no such item"})}),
        span("execute_tool refund", "2", None, 1, 2, **{"error.type": "ValueError"}),
        span(f"execute_tool {MERGED_TOOLS}", "3", None, 2, 3),
    ]
    tools = facts_from_spans(spans).tool_interactions or []
    assert [(t.tool_name, t.error) for t in tools] == [("lookup", "no such item"), ("refund", "ValueError")]


def test_spans_of_no_agent_and_no_tool_leave_the_tools_and_trajectory_unknown() -> None:
    facts = facts_from_spans([span("generate_content m", "1", None, 0, 1, **{"gen_ai.usage.input_tokens": 1})])
    assert facts.tool_interactions is None and facts.trajectory is None and facts.root_agent is None


def test_each_root_span_is_a_turn_and_the_latency_is_the_turns_time() -> None:
    spans = [span("invocation", "a", None, 0, 1), span("invocation", "b", None, 3, 5), span("call_llm", "c", "b", 3.5, 4)]
    facts = facts_from_spans(spans)
    assert facts.turn_durations == [pytest.approx(1.0), pytest.approx(2.0)]
    assert facts.turn_starts == [pytest.approx(T0 / S), pytest.approx(T0 / S + 3)]
    assert facts.latency_s == pytest.approx(3.0)  # the user's 2 s between the turns are not the agent's


def test_spans_without_ids_are_turns_only_when_they_are_invocations() -> None:
    def bare(name: str, start: float, end: float) -> RawSpan:
        return parse_span({"name": name, "start_time": T0 + int(start * S), "end_time": T0 + int(end * S)})

    facts = facts_from_spans([bare("invocation", 0, 1), bare("call_llm", 0.2, 0.5), bare("execute_tool t", 0.6, 0.7)])
    assert facts.turn_durations == [pytest.approx(1.0)]
    unstructured = facts_from_spans([bare("call_llm", 0, 1), bare("execute_tool t", 1, 2), bare("call_llm", 2, 3.5)])
    assert unstructured.turn_durations == [] and unstructured.latency_s == pytest.approx(3.5)


def test_spans_that_all_last_one_second_are_timings_unless_the_producer_made_them_up() -> None:
    spans = [span("invocation", "1", None, 0, 3), span("call_llm", "2", "1", 0, 1), span("execute_tool t", "3", "1", 1, 2)]
    measured = facts_from_spans(spans)
    assert measured.timing_note is None and measured.latency_s == pytest.approx(3.0)
    assert measured.stats is not None and (measured.stats.llm_time_s, measured.stats.tool_time_s) == (1.0, 1.0)
    made_up = facts_from_spans(spans, synthesized=True)
    assert made_up.timing_note is not None and "converter" in made_up.timing_note
    assert made_up.latency_s is None and made_up.turn_durations == []
    assert [c.duration_s for c in made_up.llm_calls or []] == [None]
    assert made_up.stats is not None and made_up.stats.llm_time_s is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (T0 + 1, T0 + 1),  # an integer is nanoseconds (OpenTelemetry, ADK's trace endpoint), kept exact
        (str(T0 + 1), T0 + 1),
        (1_000 * S, 1_000 * S),  # the seed pipeline's test events at 1000 s: nanoseconds, never reread
        (1_000, 1_000),  # a small integer is still nanoseconds: nothing is guessed from its size
        (1_763_000_000.5, T0 + S // 2),  # a number with a fraction is seconds (time.time(), ADK events)
        ("1763000000.5", T0 + S // 2),
        (float(T0), T0),  # an integer count of nanoseconds that a JSON writer made a float
        ("2025-11-13T02:13:20Z", T0),
        ("2025-11-13T02:13:20+00:00", T0),
        ("not a time", None),
        ("", None),
        (None, None),
        (True, None),
        (-1, None),
        (float("nan"), None),
        (float("inf"), None),
        ([1], None),
    ],
)
def test_times_in_every_unit_producers_write(value: Any, expected: int | None) -> None:
    assert parse_span({"name": "x", "start_time": value}).start_time == expected


def test_ids_in_a_context_a_parent_as_a_dict_and_attributes_as_json_text() -> None:
    parsed = parse_span(
        {"name": "n", "context": {"span_id": 12, "trace_id": "abc"}, "parent_id": {"span_id": "p"}, "attributes": '{"k": 1}'}
    )
    assert (parsed.span_id, parsed.trace_id, parsed.parent_span_id, parsed.attributes) == ("12", "abc", "p", {"k": 1})
    assert parse_span({"name": "n", "attributes": "{not json"}).attributes == {}
    assert parse_span({"name": "n", "attributes": "[1, 2]"}).attributes == {}
    assert parse_span({}).name == ""
    assert parsed.to_model().span_id == "12"


def test_usage_fields_in_either_key_style() -> None:
    snake = {"prompt_token_count": 5, "candidates_token_count": 2, "cached_content_token_count": 1, "thoughts_token_count": 3}
    camel = {"promptTokenCount": 5, "candidatesTokenCount": 2, "cachedContentTokenCount": 1, "thoughtsTokenCount": 3}
    snake["tool_use_prompt_token_count"], camel["toolUsePromptTokenCount"] = 4, 4
    expected = {"input_tokens": 5, "output_tokens": 2, "cached_tokens": 1, "thoughts_tokens": 3, "tool_use_prompt_tokens": 4}
    assert usage_fields(snake) == usage_fields(camel) == expected
    assert set(usage_fields({}).values()) == {0}


def test_a_count_of_one_is_one_and_a_boolean_is_no_count() -> None:
    """1 == True in Python: a membership test against (True, False) read every count of one as zero."""
    attributes = {"gen_ai.usage.input_tokens": 1, "gen_ai.usage.output_tokens": 1.0, "gen_ai.usage.cache_read.input_tokens": True}
    (call,) = facts_from_spans([span("generate_content m", "1", None, 0, 1, **attributes)]).llm_calls or []
    assert (call.input_tokens, call.output_tokens, call.cached_tokens) == (1, 1, 0)
    assert usage_fields({"thoughts_token_count": 1, "prompt_token_count": False})["thoughts_tokens"] == 1


@pytest.mark.parametrize(
    ("result", "failure"),
    [
        ({"status": "error", "error_message": "Over the limit."}, "Over the limit."),  # ADK's convention
        ({"status": "REQUEST_DENIED"}, "status REQUEST_DENIED"),  # an API's failure status
        ({"status": "success", "error_message": "partial: 2 of 3 sent"}, "partial: 2 of 3 sent"),
        ({"error": "no tool named nope"}, "no tool named nope"),  # ADK's answer for an unknown tool
        ({"error": {"code": 7}}, '{"code": 7}'),
        ({"status": "success", "message": "sent"}, None),
        ({"result": None}, None),
        ({"error": None, "rows": []}, None),  # an empty error field says nothing failed
        ("error", None),
        (None, None),
    ],
)
def test_tool_failures_in_the_shapes_adk_tools_answer(result: Any, failure: str | None) -> None:
    assert tool_failure(result) == failure


def test_a_time_of_digits_that_int_cannot_read_is_no_time() -> None:
    """'²' is a digit to str.isdigit but no number to int(): found by Hypothesis under load."""
    assert parse_span({"name": "call_llm", "start_time": "²", "end_time": "1700000000000000000"}).start_time is None
    assert parse_span({"name": "call_llm", "start_time": "1700000000000000000"}).start_time == 1700000000000000000
