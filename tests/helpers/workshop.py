"""Files of our own making, shaped like the real ones in public repositories.

The simulation rows follow ``customer-service/eval/eval_data/interactions/run_20260112_014831.csv``
of ``jcarah/accelerate_context_engineering_workshop`` (the repository our dataset guide comes
from): ``metric.unique_tools`` as a JSON list of tool names, a whole ADK session (camelCase,
every null field written out) in ``session_state``, the turn list in ``custom_extract``, a
transcript in ``trace_summary``, no ``reference_data``, and ``session_trace`` spans made up
from the session's events, each model and tool span lasting exactly 1 s (a tool call gets
two ``execute_tool`` spans, its call's and its response's). The events are real ADK
``Event`` objects dumped the way that producer did. The conversations are ours.
"""

from __future__ import annotations

import csv
import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.helpers.seed_pipeline import _camel

APP = "customer_service"
AGENT = "customer_service_agent"
MODEL = "gemini-2.5-flash"
T0 = 1_768_182_322.4  # epoch seconds
COLUMNS = [
    "eval_id", "session_id", "agent_name", "timestamp", "score.hallucinations_v1", "score.safety_v1", "metric.duration_sec",
    "metric.total_tokens", "metric.turn_count", "metric.tool_calls", "metric.tool_errors", "metric.unique_tools",
    "eval_set_result_id", "question_id", "user_id", "agents_evaluated", "final_response", "system_instructions",
    "sub_agent_trace", "trace_summary", "user_inputs", "extracted_data", "custom_extract", "session_state", "session_trace",
]  # fmt: skip


@dataclass
class Tool:
    name: str
    args: dict[str, Any]
    response: dict[str, Any]


@dataclass
class Turn:
    user: str
    tools: list[Tool]
    answer: str


@dataclass
class Conversation:
    qid: str
    turns: list[Turn]
    hallucinations: float
    # Per model call: prompt, candidates, cached, thoughts tokens (cycled through).
    usage: list[tuple[int, int, int, int]] = field(default_factory=lambda: [(3911, 44, 0, 125), (4089, 18, 3386, 71)])


def conversations() -> list[Conversation]:
    """Five conversations like the file's five runs: 1, 4, 3, 2 and 0 tool calls."""
    approval = Tool(
        "sync_ask_for_approval", {"value": 15, "discount_type": "percentage", "reason": "Competitor coupon match"}, {"status": "approved"}
    )
    return [
        Conversation(
            "22e1e449",
            [
                Turn(
                    "I found a coupon for 15% off at a competitor store. Can you match it?",
                    [],
                    "I can ask a manager to approve 15%. Proceed?",
                ),
                Turn("Yes, please proceed with asking for approval.", [approval], "Great news! Your 15% discount has been approved."),
                Turn("Please apply the discount.", [], "What would you like to apply it to?"),
                Turn("I simply need the 15% discount applied.", [], "I can generate a QR code for 15% off your next purchase."),
            ],
            0.9375,
        ),
        Conversation(
            "68e57b06",
            [
                Turn(
                    "I'm thinking about planting some Petunias in my backyard in Las Vegas.",
                    [
                        Tool(
                            "get_product_recommendations",
                            {"plant_type": "Petunias", "customer_id": "123"},
                            {"recommendations": ["soil-456"]},
                        )
                    ],
                    "I recommend the Bloom Booster Potting Mix.",
                ),
                Turn(
                    "Is the Bloom Booster Potting Mix in stock?",
                    [
                        Tool(
                            "check_product_availability",
                            {"store_id": "pickup", "product_id": "soil-456"},
                            {"available": True, "quantity": 10},
                        )
                    ],
                    "It is in stock: 10 units.",
                ),
                Turn(
                    "Please add it to my cart.",
                    [
                        Tool("access_cart_information", {"customer_id": "123"}, {"items": [], "subtotal": 0}),
                        Tool(
                            "modify_cart",
                            {"customer_id": "123", "items_to_add": [{"product_id": "soil-456", "quantity": 1}], "items_to_remove": []},
                            {"status": "success"},
                        ),
                    ],
                    "Added one Bloom Booster Potting Mix to your cart.",
                ),
            ],
            0.7,
        ),
        Conversation(
            "6446f647",
            [
                Turn("I need help planting the trees I just bought.", [], "I can schedule a planting service. Which date?"),
                Turn(
                    "Is 2024-07-29 available?",
                    [Tool("get_available_planting_times", {"date": "2024-07-29"}, {"slots": ["9-12", "13-16"]})],
                    "There are 9-12 and 13-16 slots.",
                ),
                Turn(
                    "The morning slot, please.",
                    [
                        Tool(
                            "schedule_planting_service",
                            {"customer_id": "123", "date": "2024-07-29", "time_range": "9-12", "details": "trees"},
                            {"status": "success"},
                        ),
                        Tool(
                            "update_salesforce_crm",
                            {"customer_id": "123", "details": {"appointment": "2024-07-29 9-12"}},
                            {"status": "success"},
                        ),
                    ],
                    "Your tree planting service is booked for July 29, 9 AM to 12 PM.",
                ),
            ],
            1.0,
        ),
        Conversation(
            "c8fa2069",
            [
                Turn(
                    "I have a plant in my garden but I'm not sure what it is.",
                    [Tool("send_call_companion_link", {"phone_number": "+1-702-555-1212"}, {"status": "success"})],
                    "I sent a video link to your phone.",
                ),
                Turn("It's connected. It looks like a fern.", [], "It is a fern indeed."),
                Turn(
                    "Please email me care instructions.",
                    [
                        Tool(
                            "send_care_instructions",
                            {"customer_id": "123", "plant_type": "Fern", "delivery_method": "email"},
                            {"status": "success"},
                        )
                    ],
                    "I've sent the care instructions for ferns to your email address.",
                ),
            ],
            1.0,
        ),
        Conversation(
            "68b39c35",
            [
                Turn("I've been shopping here for a while. Do I get any rewards?", [], "You have 133 loyalty points."),
                Turn("Can I get a QR code for 10% off?", [], "I'll need to check that; loyalty QR codes are for purchases over $50."),
            ],
            0.5,
        ),
    ]


def _events(conversation: Conversation) -> tuple[list[Any], list[tuple[int, int, int, int]]]:
    """Real ADK events of the conversation, and the usage of each model call in order."""
    from google.adk.events.event import Event
    from google.adk.events.event_actions import EventActions
    from google.genai import types

    events: list[Any] = []
    used: list[tuple[int, int, int, int]] = []
    clock = T0

    def add(invocation: str, author: str, content: Any = None, model_call: bool = False, delta: Any = None) -> None:
        nonlocal clock
        metadata = None
        if model_call:
            prompt, candidates, cached, thoughts = conversation.usage[len(used) % len(conversation.usage)]
            used.append((prompt, candidates, cached, thoughts))
            metadata = types.GenerateContentResponseUsageMetadata(
                prompt_token_count=prompt,
                candidates_token_count=candidates,
                cached_content_token_count=cached or None,
                thoughts_token_count=thoughts or None,
                total_token_count=prompt + candidates + thoughts,
            )
        events.append(
            Event(
                invocation_id=invocation,
                author=author,
                content=content,
                usage_metadata=metadata,
                model_version=MODEL if model_call else None,
                actions=EventActions(state_delta=delta or {}),
                timestamp=clock,
            )
        )
        clock += 0.9

    for n, turn in enumerate(conversation.turns):
        invocation = f"e-{conversation.qid}-{n}"
        add(invocation, "user", types.Content(role="user", parts=[types.Part(text=turn.user)]))
        add(invocation, AGENT, delta={"request_count": n + 1})  # a callback's state write: no content, no model call
        for tool in turn.tools:
            call = types.FunctionCall(
                id=f"adk-{uuid.uuid5(uuid.NAMESPACE_URL, conversation.qid + tool.name)}", name=tool.name, args=tool.args
            )
            add(invocation, AGENT, types.Content(role="model", parts=[types.Part(function_call=call)]), model_call=True)
            result = types.FunctionResponse(id=call.id, name=tool.name, response=tool.response)
            add(invocation, AGENT, types.Content(role="user", parts=[types.Part(function_response=result)]))
        add(invocation, AGENT, types.Content(role="model", parts=[types.Part(text=turn.answer)]), model_call=True)
        clock += 2.0  # the simulated user thinks
    return events, used


def _spans(events: list[dict[str, Any]], qid: str) -> list[dict[str, Any]]:
    """The producer's spans: one per event, each model and tool span exactly 1 s long."""
    spans: list[dict[str, Any]] = []
    ids = iter(range(10**15, 10**16, 7919))
    users = [e for e in events if e["author"] == "user"]
    for n, user in enumerate(users):
        start = int(user["timestamp"] * 1e9)
        end = int(users[n + 1]["timestamp"] * 1e9) if n + 1 < len(users) else int(events[-1]["timestamp"] * 1e9) + 10**9
        root, agent = str(next(ids)), str(next(ids))
        for event in events:
            if event["invocationId"] != user["invocationId"] or event["author"] == "user":
                continue
            parts = (event.get("content") or {}).get("parts") or []
            named = [p["functionCall"]["name"] for p in parts if p.get("functionCall")] + [
                p["functionResponse"]["name"] for p in parts if p.get("functionResponse")
            ]
            usage = event.get("usageMetadata") or {}
            attributes: dict[str, Any] = {"gen_ai.system": "gcp.vertex.agent", "gen_ai.request.model": event.get("modelVersion")}
            if usage:
                attributes |= {
                    "gen_ai.usage.input_tokens": usage["promptTokenCount"],
                    "gen_ai.usage.output_tokens": usage["candidatesTokenCount"],
                }
            at = int(event["timestamp"] * 1e9)
            name = f"execute_tool {named[0]}" if named else "call_llm"
            spans.append({"name": name, "span_id": str(next(ids)), "trace_id": str(next(ids)), "parent_span_id": agent,
                          "start_time": at, "end_time": at + 10**9, "attributes": attributes})  # fmt: skip
        spans.append({"name": f"invoke_agent {APP}", "span_id": agent, "trace_id": str(next(ids)), "parent_span_id": root,
                      "start_time": start, "end_time": end, "attributes": {"gen_ai.agent.name": APP, "gen_ai.conversation.id": qid}})  # fmt: skip
        spans.append({"name": "invocation", "span_id": root, "trace_id": str(next(ids)), "parent_span_id": None,
                      "start_time": start, "end_time": end, "attributes": {}})  # fmt: skip
    return spans


PROFILE = json.dumps({"account_number": "428765091", "customer_id": "123", "customer_first_name": "Alex"}, indent=4)


def row(conversation: Conversation, copy: int = 0) -> dict[str, Any]:
    """One run of ``conversation`` as the workshop's producer wrote it (cells as Python values)."""
    events, used = _events(conversation)
    session_id = f"___eval___session___{uuid.uuid5(uuid.NAMESPACE_URL, f'{conversation.qid}/{copy}')}"
    dumped = [event.model_dump(mode="json", by_alias=True) for event in events]
    state = {"customer_profile": PROFILE, "request_count": len(conversation.turns)}
    calls = [tool for turn in conversation.turns for tool in turn.tools]
    answers = [turn.answer for turn in conversation.turns]
    transcript = "\n".join(line for turn in conversation.turns for line in (f"User: {turn.user}", f"{AGENT}: {turn.answer}"))
    turn_list = [
        {"turn_index": i, "role": e["author"], "timestamp": e["timestamp"], "model": e["modelVersion"], "token_usage": e["usageMetadata"]}
        for i, e in enumerate(dumped)
    ]
    return {
        "eval_id": conversation.qid,
        "session_id": session_id,
        "agent_name": APP,
        "timestamp": "2026-01-12T01:45:36.379644",
        "score.hallucinations_v1": conversation.hallucinations,
        "score.safety_v1": "",  # the judge never ran: an empty cell
        "metric.duration_sec": round(dumped[-1]["timestamp"] - dumped[0]["timestamp"], 2),
        "metric.total_tokens": sum(p + c + t for p, c, _, t in used),
        "metric.turn_count": len(conversation.turns),
        "metric.tool_calls": len(calls),
        "metric.tool_errors": 0,
        "metric.unique_tools": sorted({tool.name for tool in calls}),  # a JSON list, not a count
        "eval_set_result_id": f"{APP}_eval_set_with_scenarios_1768182404.95",
        "question_id": conversation.qid,
        "user_id": "test_user",
        "agents_evaluated": [APP],
        "final_response": answers[-1],
        "system_instructions": "You are Project Pro, the primary AI assistant for Cymbal Home & Garden.\n" * 20,
        "sub_agent_trace": [{"agent_name": AGENT, "text_response": answer} for answer in answers],
        "trace_summary": transcript,
        "user_inputs": [turn.user for turn in conversation.turns],
        "extracted_data": {
            "sub_agent_trace": [{"agent_name": AGENT, "text_response": answer} for answer in answers],
            "state_variables": state,
            "tool_interactions": [{"tool_name": tool.name, "input_arguments": tool.args} for tool in calls],
        },
        "custom_extract": turn_list,
        "session_state": {
            "id": session_id,
            "appName": APP,
            "userId": "test_user",
            "state": state,
            "events": dumped,
            "lastUpdateTime": dumped[-1]["timestamp"],
        },
        "session_trace": _spans(dumped, session_id),
    }


def write_rows(path: Path, rows: list[dict[str, Any]], columns: list[str] = COLUMNS) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        for item in rows:
            writer.writerow({k: v if isinstance(v, str) else json.dumps(v) for k, v in item.items()})
    return path


def simulation_csv(path: Path, count: int = 5) -> Path:
    """``count`` runs cycling through the five conversations (each copy a distinct session)."""
    chats = conversations()
    return write_rows(path, [row(chats[i % len(chats)], copy=i // len(chats)) for i in range(count)])


# The workshop's scenario eval sets (customer-service/eval/scenarios/*.evalset.json): cases with
# a conversation_scenario and a session_input naming the app and user, no state, no references.
def scenario_case(eval_id: str, starting: str, plan: str, **extra: Any) -> dict[str, Any]:
    return {
        "eval_id": eval_id,
        "conversation_scenario": {"starting_prompt": starting, "conversation_plan": plan, **extra},
        "session_input": {"app_name": APP, "user_id": "test_user"},
        "creation_timestamp": 1768618442.673241,
    }


# The first of the committed files (run_20260111_115619.csv), written by the first converter
# (AdkHistoryConverter's forerunner, process_adk_history_file): its 19 columns (no question_id,
# user_inputs or extracted_data), the session's events dumped by ADK's eval history in snake_case
# and every key of them camelCased by the converter (tool arguments and state deltas too), the
# metric.* figures counted from those events, and rows from every eval history in the folder: two
# runs of each scenario, in which ADK's user simulator said different things.
EARLY_COLUMNS = [
    "eval_id", "session_id", "agent_name", "timestamp", "score.hallucinations_v1", "score.safety_v1", "metric.duration_sec",
    "metric.total_tokens", "metric.turn_count", "metric.tool_calls", "metric.tool_errors", "metric.unique_tools",
    "eval_set_result_id", "user_id", "final_response", "system_instructions", "custom_extract", "session_state", "session_trace",
]  # fmt: skip


def simulated(conversation: Conversation, run: int) -> Conversation:
    """The scenario's ``run``-th run: the simulated user says each turn after the first in other words."""
    turns = [
        Turn(t.user if i == 0 or not run else f"{t.user} (said again, run {run})", t.tools, t.answer)
        for i, t in enumerate(conversation.turns)
    ]
    return Conversation(conversation.qid, turns, conversation.hallucinations, conversation.usage)


def early_row(conversation: Conversation, run: int) -> dict[str, Any]:
    """One row as the first converter wrote it; ``run`` numbers the eval history it came from."""
    events, _ = _events(conversation)
    snake = [event.model_dump(mode="json") for event in events]
    session_id = f"___eval___session___{uuid.uuid5(uuid.NAMESPACE_URL, f'{conversation.qid}/early/{run}')}"
    parts = [p for e in snake for p in ((e.get("content") or {}).get("parts") or [])]
    calls = [p["function_call"]["name"] for p in parts if p.get("function_call")]
    stamps = [e["timestamp"] for e in snake]
    camel = _camel(snake)  # every key, tool arguments and state deltas too
    session = {"id": session_id, "appName": APP, "userId": "test_user", "state": {"customer_profile": PROFILE}, "events": camel}
    return {
        "eval_id": conversation.qid,
        "session_id": session_id,
        "agent_name": APP,
        "timestamp": "2026-01-11T07:27:49.756637",
        "score.hallucinations_v1": conversation.hallucinations,
        "score.safety_v1": 1.0,
        "metric.duration_sec": round(stamps[-1] - stamps[0], 2),
        "metric.total_tokens": sum((e.get("usage_metadata") or {}).get("total_token_count") or 0 for e in snake),
        "metric.turn_count": sum(1 for e in snake if e["author"] == "user"),
        "metric.tool_calls": len(calls),
        "metric.tool_errors": 0,
        "metric.unique_tools": sorted(set(calls)),
        "eval_set_result_id": f"{APP}_eval_set_with_scenarios_{1768116588 + 68 * run}.66",
        "user_id": "test_user",
        "final_response": conversation.turns[-1].answer,
        "system_instructions": "\nThe profile of the current customer is: {}\n" + "You are Project Pro.\n" * 20,
        "custom_extract": [{"turn_index": i, "role": e["author"], "token_usage": e["usage_metadata"]} for i, e in enumerate(snake)],
        "session_state": session | {"lastUpdateTime": stamps[-1]},
        "session_trace": _spans(camel, session_id),
    }
