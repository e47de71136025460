"""ADK session events (dicts, snake_case or camelCase) read into trace facts: tool calls paired
with their responses, transfers between agents, turns, state, model calls and errors."""

from __future__ import annotations

from typing import Any

from agent_eval_action.models.questions import Question
from agent_eval_action.traces.adk_events import event_text, facts_from_events, final_response_parts, trace_from_run

USAGE = {"prompt_token_count": 120, "candidates_token_count": 8}


def user(text: str, invocation: str = "i1") -> dict[str, Any]:
    return {"author": "user", "invocation_id": invocation, "content": {"role": "user", "parts": [{"text": text}]}}


def calls(author: str, *calls: dict[str, Any], invocation: str = "i1") -> dict[str, Any]:
    return {"author": author, "invocation_id": invocation, "usage_metadata": USAGE, "model_version": "gemini-2.5-flash",
            "content": {"role": "model", "parts": [{"function_call": c} for c in calls]}}  # fmt: skip


def answers(author: str, *responses: dict[str, Any], invocation: str = "i1", delta: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"author": author, "invocation_id": invocation, "actions": {"state_delta": delta or {}},
            "content": {"role": "user", "parts": [{"function_response": r} for r in responses]}}  # fmt: skip


def says(author: str, text: str, invocation: str = "i1", **extra: Any) -> dict[str, Any]:
    return {
        "author": author,
        "invocation_id": invocation,
        "usage_metadata": USAGE,
        "content": {"role": "model", "parts": [{"text": text}]},
        **extra,
    }


def shop_session() -> list[Any]:
    """The shop looks an order up, transfers to refunds, which refunds it and answers."""
    return [
        user("refund order 7"),
        calls("shop", {"id": "c1", "name": "lookup_order", "args": {"order": 7}}),
        answers("shop", {"id": "c1", "name": "lookup_order", "response": {"status": "paid"}}, delta={"order": 7}),
        calls("shop", {"id": "c2", "name": "transfer_to_agent", "args": {"agent_name": "refunds"}}),
        answers("shop", {"id": "c2", "name": "transfer_to_agent", "response": {}}),
        calls("refunds", {"id": "c3", "name": "refund", "args": {"order": 7}}),
        answers("refunds", {"id": "c3", "name": "refund", "response": {"error": "already refunded"}}, delta={"refunded": False}),
        says("refunds", "Order 7 was already refunded."),
        "not an event",
    ]


def test_tool_calls_are_paired_with_their_responses_by_id() -> None:
    facts = facts_from_events(shop_session())
    assert [(t.tool_name, t.input_arguments, t.output_result, t.error, t.agent, t.turn) for t in facts.tool_interactions] == [
        ("lookup_order", {"order": 7}, {"status": "paid"}, None, "shop", 0),
        ("transfer_to_agent", {"agent_name": "refunds"}, {}, None, "shop", 0),
        ("refund", {"order": 7}, {"error": "already refunded"}, "already refunded", "refunds", 0),
    ]


def test_a_transfer_shows_in_the_trajectory_and_the_sub_agents_answer_in_its_trace() -> None:
    facts = facts_from_events(shop_session())
    assert [(s.kind, s.name) for s in facts.trajectory] == [
        ("agent", "shop"), ("tool", "lookup_order"), ("tool", "transfer_to_agent"), ("agent", "refunds"), ("tool", "refund"),
    ]  # fmt: skip
    assert facts.root_agent == "shop"
    assert [(r.agent_name, r.text_response) for r in facts.sub_agent_trace] == [("refunds", "Order 7 was already refunded.")]
    assert facts.final_response == "Order 7 was already refunded."


def test_state_deltas_are_laid_over_the_initial_state() -> None:
    facts = facts_from_events(shop_session(), {"order": 1, "user": "ann"})
    assert facts.state == {"order": 7, "user": "ann", "refunded": False}


def test_model_calls_are_the_agents_events_with_usage_or_model_content() -> None:
    facts = facts_from_events(shop_session())
    assert [(c.agent, c.model, c.input_tokens, c.output_tokens) for c in facts.llm_calls] == [
        ("shop", "gemini-2.5-flash", 120, 8), ("shop", "gemini-2.5-flash", 120, 8), ("refunds", "gemini-2.5-flash", 120, 8), ("refunds", None, 120, 8),
    ]  # fmt: skip
    no_usage = facts_from_events([{"author": "a", "content": {"role": "model", "parts": [{"text": "x"}]}}]).llm_calls
    assert [(c.usage_recorded, c.input_tokens) for c in no_usage] == [(False, 0)]


def test_responses_without_ids_go_to_the_oldest_open_call_of_that_name() -> None:
    events = [
        calls("a", {"name": "lookup", "args": {"q": 1}}, {"name": "lookup", "args": {"q": 2}}, {"name": "other", "args": {}}),
        answers("a", {"name": "lookup", "response": {"r": 1}}),
        answers("a", {"name": "lookup", "response": {"r": 2}}),
        answers("a", {"name": "nothing_called_this", "response": {"r": 3}}),
    ]
    tools = facts_from_events(events).tool_interactions
    assert [(t.input_arguments, t.output_result) for t in tools] == [({"q": 1}, {"r": 1}), ({"q": 2}, {"r": 2}), ({}, None)]


def test_each_invocation_is_a_turn_with_its_user_text_and_last_answer() -> None:
    events = [
        user("hello", "i1"), says("shop", "Hi!", "i1"),
        user("price of apple?", "i2"), calls("shop", {"id": "x", "name": "lookup", "args": {}}, invocation="i2"),
        answers("shop", {"id": "x", "name": "lookup", "response": {"price": 1}}, invocation="i2"),
        says("shop", "Let me check.", "i2", partial=True), says("shop", "It costs 1.", "i2"),
        user("thanks", "i3"),
    ]  # fmt: skip
    facts = facts_from_events(events)
    assert facts.user_inputs == ["hello", "price of apple?", "thanks"]
    assert facts.turn_responses == ["Hi!", "It costs 1.", None]
    assert facts.turn_response_parts == [["Hi!"], ["It costs 1."], None]
    assert [t.turn for t in facts.tool_interactions] == [1]
    assert len(facts.llm_calls) == 3  # the partial event is no model call of its own


def test_a_later_final_event_without_text_does_not_replace_one_with_text() -> None:
    events = [
        says("a", "The answer."),
        {"author": "a", "invocation_id": "i1", "content": {"role": "model", "parts": [{"inline_data": {}}]}},
    ]
    assert facts_from_events(events).turn_response_parts == [["The answer."]]


def test_thoughts_are_not_the_answer_but_are_in_the_parts_adks_eval_reads() -> None:
    event = {
        "author": "a",
        "invocation_id": "i1",
        "content": {"role": "model", "parts": [{"text": "thinking...", "thought": True}, {"text": "Done."}]},
    }
    assert event_text(event) == "Done."
    facts = facts_from_events([event])
    assert facts.final_response == "Done."
    assert facts.turn_response_parts == [["thinking...", "Done."]]
    assert final_response_parts(None) is None


def test_camel_case_events_read_the_same() -> None:
    events = [
        {"author": "user", "invocationId": "i1", "content": {"role": "user", "parts": [{"text": "hi"}]}},
        {"author": "a", "invocationId": "i1", "usageMetadata": {"promptTokenCount": 3}, "modelVersion": "m",
         "content": {"role": "model", "parts": [{"functionCall": {"id": "c", "name": "t", "args": {"k": 1}}}]}},
        {"author": "a", "invocationId": "i1", "actions": {"stateDelta": {"s": 1}},
         "content": {"role": "user", "parts": [{"functionResponse": {"id": "c", "name": "t", "response": {"ok": True}}}]}},
        {"author": "a", "invocationId": "i1", "content": {"role": "model", "parts": [{"text": "ok"}]}},
    ]  # fmt: skip
    facts = facts_from_events(events)
    assert [(t.tool_name, t.output_result) for t in facts.tool_interactions] == [("t", {"ok": True})]
    assert facts.state == {"s": 1} and facts.user_inputs == ["hi"] and facts.final_response == "ok"
    assert (facts.llm_calls[0].model, facts.llm_calls[0].input_tokens) == ("m", 3)


def test_errors_of_the_agent_are_collected_and_a_users_are_not() -> None:
    events = [
        {"author": "user", "error_message": "not ours"},
        {"author": "a", "error_code": "SAFETY", "error_message": "blocked by safety"},
        {"author": "a", "error_code": "MAX_TOKENS"},
    ]
    assert facts_from_events(events).errors == ["blocked by safety", "MAX_TOKENS"]


def test_an_event_without_an_author_makes_up_no_agent() -> None:
    facts = facts_from_events([{"invocation_id": "i1", "content": {"role": "model", "parts": [{"text": "anonymous"}]}}])
    assert facts.trajectory == [] and facts.sub_agent_trace == [] and facts.root_agent is None
    assert facts.final_response == "anonymous"


def test_the_trace_of_a_run() -> None:
    question = Question(id="q1", user_inputs=["refund order 7"])
    events = shop_session()[:-1]
    events[1]["content"]["parts"][0]["function_call"]["id"] = "adk-1f2e"  # ADK's own random id
    events[2]["content"]["parts"][0]["function_response"]["id"] = "adk-1f2e"
    trace = trace_from_run(
        question, events, final_state=None, turn_times=[(100.0, 2.5)], app_name="shop", models={"refunds": "gemini-2.5-pro"}
    )
    assert [t.call_id for t in trace.tool_interactions or []] == [None, "c2", "c3"]
    assert [c.model for c in trace.llm_calls or []] == ["gemini-2.5-flash"] * 3 + ["gemini-2.5-pro"]  # a call without a model: its agent's
    assert [(t.user_input, t.response, t.start_time, t.duration_s) for t in trace.turns] == [
        ("refund order 7", "Order 7 was already refunded.", 100.0, 2.5)
    ]
    assert trace.final_state == {"order": 7, "refunded": False}
    assert (trace.latency_s, trace.latency_source, trace.app_name, trace.root_agent) == (2.5, "measured", "shop", "shop")
    assert trace_from_run(question, events, final_state={"kept": 1}, turn_times=[], app_name=None, models={}).final_state == {"kept": 1}


def test_a_scenarios_user_turns_are_what_the_simulated_user_said() -> None:
    question = Question(id="s1", user_inputs=["start"], conversation_scenario={"starting_prompt": "start", "conversation_plan": "ask"})
    events = [user("start", "i1"), says("a", "Hello.", "i1"), user("a follow-up", "i2"), says("a", "Sure.", "i2")]
    trace = trace_from_run(question, events, final_state={}, turn_times=[(0.0, 1.0)], app_name=None, models={})
    assert [(t.user_input, t.response, t.duration_s) for t in trace.turns] == [("start", "Hello.", 1.0), ("a follow-up", "Sure.", None)]
    assert trace.latency_s == 1.0


def test_what_the_agent_says_before_its_final_response_is_kept_per_turn_where_adks_eval_keeps_it() -> None:
    """Words written with a tool call, and a sub-agent's answer before the root's final one, are
    a turn's intermediate texts (ADK's invocation events hold them); the final response is not."""
    from agent_eval_action.run.judges.adk import actual_invocations

    guessed = calls("shop", {"id": "c1", "name": "price", "args": {"item": "rake"}})
    guessed["content"]["parts"].insert(0, {"text": "Rakes are about $20, let me check."})
    events = [
        user("How much is the rake?"),
        guessed,
        answers("shop", {"id": "c1", "name": "price", "response": {"usd": 25}}),
        says("helper", "The helper found it."),
        says("shop", "The rake costs $25."),
        user("Thanks", invocation="i2"),
        says("shop", "You are welcome.", invocation="i2"),
    ]
    facts = facts_from_events(events)
    first, second = facts.turn_intermediate
    assert [(e.texts, e.at, e.with_call, e.author) for e in first] == [
        (["Rakes are about $20, let me check."], 0, True, "shop"),
        (["The helper found it."], 1, False, "helper"),
    ]
    assert second == []
    trace = trace_from_run(
        Question(id="q", user_inputs=["How much is the rake?", "Thanks"]),
        events,
        final_state=None,
        turn_times=[],
        app_name="shop",
        models={},
    )
    (turn_events, thanks_events) = [i["intermediate_data"]["invocation_events"] for i in actual_invocations(trace)]
    # As ADK's eval orders them: the words in the call's own event, the answer, the helper's words, the final event.
    assert turn_events[0]["content"]["parts"][0] == {"text": "Rakes are about $20, let me check."}
    assert "function_call" in turn_events[0]["content"]["parts"][1]
    assert "function_response" in turn_events[1]["content"]["parts"][0]
    assert turn_events[2] == {"author": "helper", "content": {"role": "model", "parts": [{"text": "The helper found it."}]}}
    assert turn_events[3] == {"author": "shop"} and thanks_events == [{"author": "shop"}]
