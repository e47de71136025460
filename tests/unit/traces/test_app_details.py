"""ADK's app_details read from a recorded run's legacy spans (``call_llm`` with its request), as
ADK's eval records them: per turn, each agent's first request; an AgentTool's session apart."""

from __future__ import annotations

import json
from typing import Any

from agent_eval_action.models.traces import Span
from agent_eval_action.traces.app_details import app_details_by_turn


def _request(instruction: str, tools: list[str]) -> str:
    declarations = [{"function_declarations": [{"name": name} for name in tools]}] if tools else []
    return json.dumps({"model": "gemini", "config": {"system_instruction": instruction, "tools": declarations}, "contents": []})


def _spans(plan: list[tuple[str, str, str, str, list[str]]]) -> list[Span]:
    """(invocation, session, agent, instruction, tools) per model call, in order; each call under
    an ``invoke_agent`` span of its agent."""
    out: list[Span] = []
    for k, (invocation, session, agent, instruction, tools) in enumerate(plan):
        out.append(Span(name=f"invoke_agent {agent}", span_id=f"a{k}", start_time=10 * k, attributes={"gen_ai.agent.name": agent}))
        attributes: dict[str, Any] = {
            "gcp.vertex.agent.invocation_id": invocation,
            "gcp.vertex.agent.session_id": session,
            "gcp.vertex.agent.llm_request": _request(instruction, tools),
        }
        out.append(Span(name="call_llm", span_id=f"c{k}", parent_span_id=f"a{k}", start_time=10 * k + 1, attributes=attributes))
    return out


def test_each_turn_has_each_agents_first_request_and_not_an_agent_tools() -> None:
    spans = _spans(
        [
            ("inv-1", "s", "shop", "Shop assistant.", ["lookup_order"]),
            ("inv-1", "other", "researcher", "Find the facts.", []),  # an AgentTool's session
            ("inv-1", "s", "shop", "Shop assistant, later.", ["lookup_order"]),
            ("inv-1", "s", "refunds", "Refund orders.", ["refund"]),
            ("inv-2", "s", "refunds", "Refund orders.", ["refund"]),
        ]
    )
    first, second = app_details_by_turn(spans, 2)
    assert first is not None and second is not None
    assert list(first["agent_details"]) == ["shop", "refunds"]
    assert first["agent_details"]["shop"] == {
        "name": "shop",
        "instructions": "Shop assistant.",
        "tool_declarations": [{"function_declarations": [{"name": "lookup_order"}]}],
    }
    assert list(second["agent_details"]) == ["refunds"]


def test_spans_without_requests_say_nothing() -> None:
    spans = _spans([("inv-1", "s", "shop", "x", [])])
    for span in spans:
        span.attributes.pop("gcp.vertex.agent.llm_request", None)
    assert app_details_by_turn(spans, 1) == [None]
    # ADK's legacy spans with message content off hold "{}".
    for span in spans:
        if span.name == "call_llm":
            span.attributes["gcp.vertex.agent.llm_request"] = "{}"
    assert app_details_by_turn(spans, 2) == [None, None]


def test_a_turn_that_asked_no_model_keeps_its_place() -> None:
    """Turns are the run's top spans: the second turn answered without a model (a callback), so
    the third turn's request is the third's, not the second's."""
    spans: list[Span] = []
    for turn, asked in enumerate((True, False, True)):
        spans.append(Span(name="invocation", span_id=f"i{turn}", start_time=100 * turn))
        spans.append(Span(name="agent_run [shop]", span_id=f"a{turn}", parent_span_id=f"i{turn}", start_time=100 * turn + 1))
        if asked:
            attributes = {
                "gcp.vertex.agent.invocation_id": f"inv-{turn}",
                "gcp.vertex.agent.session_id": "s",
                "gcp.vertex.agent.llm_request": _request(f"Turn {turn}.", []),
            }
            spans.append(
                Span(name="call_llm", span_id=f"c{turn}", parent_span_id=f"a{turn}", start_time=100 * turn + 2, attributes=attributes)
            )
    first, second, third = app_details_by_turn(spans, 3)
    assert first is not None and first["agent_details"]["shop"]["instructions"] == "Turn 0."
    assert second is None
    assert third is not None and third["agent_details"]["shop"]["instructions"] == "Turn 2."
