"""Rows of our own making, shaped as the seed pipeline's code writes them.

The pipeline is ``evaluation/`` of ``jcarah/accelerate_context_engineering_workshop``
(src/evaluation/core/). Two writers, read in its code:

- ``processor.enrich_single_interaction`` (the live path): ``status`` as its interactions step
  wrote it (``{"boolean": "success"}``), ``final_session_state`` as ADK's API server answers
  ``GET .../sessions/ID`` (camelCase), ``session_trace`` as ADK's ``/debug/trace/session/ID``
  answers (legacy span names, integer ids and nanosecond times, in the order the exporter saw
  them end), ``latency_data`` from ``AgentClient.get_latency_from_spans`` (the trace's top spans
  with their children, durations rounded to 0.1 ms), ``trace_summary`` from
  ``get_agent_trajectory`` and ``extracted_data`` from ``get_tool_interactions`` /
  ``get_sub_agent_trace``.
- ``converters.AdkHistoryConverter._process_single_run`` (the simulation path, ``base_url
  "simulation"``): ``session_trace`` made up from the session's events by
  ``synthesize_trace_from_events`` (every span its own random trace id, each model and tool
  span 1 s long), ``adk_score.<metric>`` columns from the scores ADK recorded, ``status``
  ``{"boolean": "success"}``.

Nothing of the pipeline's code is here: these functions write the same shapes from our own
conversations.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

MODEL = "gemini-2.5-flash"
APP = "app"
ROOT_AGENT = "retail_location_strategy"
SESSION = "session_b860b762-2d86-4c27-ba27-e56b3f4313d4"
# The AgentTool's own session: ADK runs an agent called as a tool in a session of its own.
TOOL_SESSION = "89c3b395-bae3-485a-a8b8-761ab63bd76f"
T0 = 1_768_018_584_000_000_000  # ns, January 2026
MS = 1_000_000  # one millisecond in ns


@dataclass
class Usage:
    prompt: int
    candidates: int
    thoughts: int = 0
    cached: int = 0
    tool_use: int = 0
    chunks: int = 0

    @property
    def total(self) -> int:
        return self.prompt + self.candidates + self.thoughts + self.tool_use

    def snake(self) -> dict[str, Any]:
        """As google-genai's ``GenerateContentResponseUsageMetadata.model_dump()`` writes it."""
        return {
            "cached_content_token_count": self.cached or None, "candidates_token_count": self.candidates,
            "prompt_token_count": self.prompt, "thoughts_token_count": self.thoughts or None,
            "tool_use_prompt_token_count": self.tool_use or None, "total_token_count": self.total, "traffic_type": "ON_DEMAND",
        }  # fmt: skip

    def camel(self) -> dict[str, Any]:
        return {"".join(w.title() if i else w for i, w in enumerate(k.split("_"))): v for k, v in self.snake().items()}

    def grounding(self) -> dict[str, Any] | None:
        if not self.chunks:
            return None
        return {"grounding_chunks": [{"web": {"uri": f"https://example.com/{i}", "title": f"source {i}"}} for i in range(self.chunks)]}


@dataclass
class Call:
    """One model call of the run: where its span lies (ms from T0), what it answered."""

    start_ms: int
    end_ms: int
    usage: Usage
    agent: str = ROOT_AGENT
    # A function call it made: (tool name, args), or None for a text answer.
    function_call: tuple[str, dict[str, Any]] | None = None
    text: str | None = None
    # Made by an agent called as a tool: in the spans only, under its own session.
    in_tool_session: bool = False
    event_id: str = ""


@dataclass
class ToolRun:
    name: str
    start_ms: int
    end_ms: int
    args: dict[str, Any]
    response: dict[str, Any]
    call_id: str
    tool_type: str = "FunctionTool"


@dataclass
class Spans:
    """Spans in the exporter's order (the order they ended), ids as integers, times in ns."""

    spans: list[dict[str, Any]] = field(default_factory=list)
    next_id: int = 7_708_889_134_629_594_298

    def add(self, name: str, start_ms: int, end_ms: int, parent: int | None, attributes: dict[str, Any]) -> int:
        self.next_id += 7919
        self.spans.append({
            "name": name, "span_id": self.next_id, "trace_id": 42844846255291825297351727694619264529,
            "start_time": T0 + start_ms * MS, "end_time": T0 + end_ms * MS, "attributes": attributes, "parent_span_id": parent,
        })  # fmt: skip
        return self.next_id

    def ordered(self) -> list[dict[str, Any]]:
        return sorted(self.spans, key=lambda s: s["end_time"])


def _llm_span(spans: Spans, call: Call, parent: int) -> None:
    response: dict[str, Any] = {"model_version": MODEL, "usage_metadata": call.usage.snake(), "finish_reason": "STOP"}
    parts: list[dict[str, Any]] = []
    if call.function_call:
        parts.append({"function_call": {"name": call.function_call[0], "args": call.function_call[1]}})
    if call.text:
        parts.append({"text": call.text})
    response["content"] = {"role": "model", "parts": parts}
    if call.usage.grounding():
        response["grounding_metadata"] = call.usage.grounding()
    spans.add("call_llm", call.start_ms, call.end_ms, parent, {
        "gen_ai.system": "gcp.vertex.agent", "gen_ai.request.model": MODEL,
        "gcp.vertex.agent.session_id": TOOL_SESSION if call.in_tool_session else SESSION,
        "gcp.vertex.agent.event_id": call.event_id, "gcp.vertex.agent.llm_request": "{}",
        "gcp.vertex.agent.llm_response": json.dumps(response),
        "gen_ai.usage.input_tokens": call.usage.prompt, "gen_ai.usage.output_tokens": call.usage.candidates,
    })  # fmt: skip


def _tool_span(spans: Spans, tool: ToolRun, parent: int) -> int:
    return spans.add(f"execute_tool {tool.name}", tool.start_ms, tool.end_ms, parent, {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool.name, "gen_ai.tool.type": tool.tool_type,
        "gcp.vertex.agent.llm_request": "{}", "gcp.vertex.agent.llm_response": "{}",
        "gcp.vertex.agent.tool_call_args": json.dumps(tool.args), "gen_ai.tool.call.id": tool.call_id,
        "gcp.vertex.agent.tool_response": json.dumps(tool.response),
    })  # fmt: skip


# The live run: two turns. Turn 1 calls the AgentTool IntakeAgent (its own model call, in its own
# session), then search_places, refused by the Maps API; turn 2 transfers to a sub-agent whose
# generate_qr_code refuses an over-limit request.
INTAKE = Call(1_030, 1_500, Usage(300, 49, thoughts=133), agent="IntakeAgent", text='{"target_location": "Austin"}',
              in_tool_session=True, event_id="f9226eb6")  # fmt: skip
CALLS = [
    Call(10, 1_000, Usage(1_000, 50, thoughts=200, cached=400, tool_use=30, chunks=2), function_call=("IntakeAgent", {"request": "Austin gym"}),
         event_id="e1"),
    INTAKE,
    Call(2_000, 2_400, Usage(1_500, 60, cached=1_000), function_call=("search_places", {"query": "gym Austin"}), event_id="e3"),
    Call(2_600, 2_950, Usage(1_700, 120, thoughts=80, chunks=3), text="Austin looks promising.", event_id="e5"),
    Call(5_010, 5_300, Usage(1_900, 20), function_call=("transfer_to_agent", {"agent_name": "ReportAgent"}), event_id="e7"),
    Call(5_400, 5_800, Usage(2_000, 25, thoughts=40), agent="ReportAgent",
         function_call=("generate_qr_code", {"data": "https://example.com", "count": 500}), event_id="e9"),
    Call(6_000, 6_700, Usage(2_100, 90, tool_use=12), agent="ReportAgent", text="I can make at most 100 QR codes.", event_id="e11"),
]  # fmt: skip
TOOLS = [
    ToolRun("IntakeAgent", 1_001, 1_990, {"request": "Austin gym"}, {"target_location": "Austin"}, "adk-1", tool_type="AgentTool"),
    ToolRun("search_places", 2_410, 2_590, {"query": "gym Austin"},
            {"status": "error", "error_message": "REQUEST_DENIED (This API project is not authorized to use this API.)", "preview": [],
             "count": 0}, "adk-2"),
    ToolRun("transfer_to_agent", 5_310, 5_320, {"agent_name": "ReportAgent"}, {"result": None}, "adk-3",
            tool_type="TransferToAgentTool"),
    ToolRun("generate_qr_code", 5_810, 5_990, {"data": "https://example.com", "count": 500},
            {"status": "error", "error_message": "Cannot generate more than 100 QR codes."}, "adk-4"),
]  # fmt: skip
TURNS_MS = [(0, 3_000), (5_000, 6_800)]  # the invocations: the user's 2 s between them are not the agent's
INPUTS = ["I want to open a gym in Austin.", "Make QR codes for the flyer: 500 of them."]


def live_trace() -> list[dict[str, Any]]:
    """The run's spans as ADK 1.20's /debug/trace/session endpoint answers them."""
    spans = Spans()
    turn1 = spans.add("invocation", *TURNS_MS[0], None, {})
    agent1 = spans.add(f"invoke_agent {ROOT_AGENT}", 1, 2_999, turn1, {"gen_ai.agent.name": ROOT_AGENT})
    _llm_span(spans, CALLS[0], agent1)
    tool = _tool_span(spans, TOOLS[0], agent1)
    inner = spans.add("invocation", 1_010, 1_980, tool, {})
    intake = spans.add("invoke_agent IntakeAgent", 1_020, 1_970, inner, {"gen_ai.agent.name": "IntakeAgent"})
    _llm_span(spans, INTAKE, intake)
    _llm_span(spans, CALLS[2], agent1)
    _tool_span(spans, TOOLS[1], agent1)
    _llm_span(spans, CALLS[3], agent1)
    turn2 = spans.add("invocation", *TURNS_MS[1], None, {})
    agent2 = spans.add(f"invoke_agent {ROOT_AGENT}", 5_001, 5_330, turn2, {"gen_ai.agent.name": ROOT_AGENT})
    _llm_span(spans, CALLS[4], agent2)
    _tool_span(spans, TOOLS[2], agent2)
    report = spans.add("invoke_agent ReportAgent", 5_330, 6_790, turn2, {"gen_ai.agent.name": "ReportAgent"})
    _llm_span(spans, CALLS[5], report)
    _tool_span(spans, TOOLS[3], report)
    _llm_span(spans, CALLS[6], report)
    return spans.ordered()


def _event(event_id: str, author: str, invocation: str, at_ms: int, parts: list[dict[str, Any]], role: str, **more: Any) -> dict[str, Any]:
    return {
        "modelVersion": more.get("model"), "content": {"parts": parts, "role": role},
        "groundingMetadata": more.get("grounding"), "partial": None, "turnComplete": None, "finishReason": more.get("finish"),
        "errorCode": None, "errorMessage": None, "usageMetadata": more.get("usage"), "invocationId": invocation,
        "author": author, "actions": {"stateDelta": more.get("delta", {}), "artifactDelta": {}, "transferToAgent": more.get("transfer")},
        "id": event_id, "timestamp": (T0 + at_ms * MS) / 1e9,
    }  # fmt: skip


def live_session() -> dict[str, Any]:
    """The session as ADK's API server answers GET .../sessions/ID (camelCase): the root agent's and
    the sub-agent's events; the AgentTool's model call is in its own session, not here."""
    events = []
    own = [c for c in CALLS if not c.in_tool_session]
    tool_for = {t.name: t for t in TOOLS}
    invocations = ["e-1", "e-2"]
    for turn, (start, _end) in enumerate(TURNS_MS):
        events.append(_event(f"u{turn}", "user", invocations[turn], start, [{"text": INPUTS[turn]}], "user"))
        for call in own:
            if not start <= call.start_ms < TURNS_MS[turn][1]:
                continue
            parts: list[dict[str, Any]] = []
            if call.function_call:
                name, args = call.function_call
                parts.append({"functionCall": {"id": tool_for[name].call_id, "name": name, "args": args}})
            if call.text:
                parts.append({"text": call.text})
            events.append(
                _event(call.event_id, call.agent, invocations[turn], call.end_ms, parts, "model", model=MODEL, usage=call.usage.camel(),
                       grounding=({"groundingChunks": call.usage.grounding()["grounding_chunks"]} if call.usage.chunks else None),  # type: ignore[index]
                       finish="STOP", transfer="ReportAgent" if call.function_call and call.function_call[0] == "transfer_to_agent" else None)
            )  # fmt: skip
            if call.function_call:
                tool = tool_for[call.function_call[0]]
                response = {"functionResponse": {"id": tool.call_id, "name": tool.name, "response": tool.response}}
                events.append(_event(f"r-{tool.call_id}", call.agent, invocations[turn], tool.end_ms, [response], "user"))
    return {"id": SESSION, "appName": APP, "userId": "eval_user", "state": {"target_location": "Austin"}, "events": events,
            "lastUpdateTime": events[-1]["timestamp"]}  # fmt: skip


def latency_data(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The trace's top spans with their children, each duration in ms rounded to 2 places and then
    in s to 4, as the pipeline's ``get_latency_from_spans`` lays them out."""
    ids = {s["span_id"] for s in spans}
    children: dict[Any, list[dict[str, Any]]] = {}
    for s in spans:
        children.setdefault(s["parent_span_id"] if s["parent_span_id"] in ids else None, []).append(s)

    def entry(s: dict[str, Any]) -> dict[str, Any]:
        ms = round((s["end_time"] - s["start_time"]) / 1_000_000, 2)
        out: dict[str, Any] = {"name": s["name"], "type": "OTHER", "duration_seconds": round(ms / 1000.0, 4)}
        if children.get(s["span_id"]):
            out["children"] = [entry(c) for c in children[s["span_id"]]]
        return out

    return [entry(s) for s in children.get(None, [])]


def live_row(**changes: Any) -> dict[str, Any]:
    """One row of processed_interaction_app.jsonl as processor.enrich_single_interaction writes it."""
    spans = live_trace()
    session = live_session()
    calls = []
    for event in session["events"]:
        for part in event["content"]["parts"]:
            if part.get("functionCall"):
                fc = part["functionCall"]
                calls.append({"tool_name": fc["name"], "input_arguments": fc["args"], "call_id": fc["id"], "output_result": None})
            if part.get("functionResponse"):
                fr = part["functionResponse"]
                match = next(c for c in calls if c["call_id"] == fr["id"])
                match["output_result"] = fr["response"].get("result") or fr["response"]
    subs = [
        {"agent_name": e["author"], "text_response": p["text"], "timestamp": e["timestamp"]}
        for e in session["events"]
        if e["author"] != "user"
        for p in e["content"]["parts"]
        if p.get("text")
    ]
    row: dict[str, Any] = {
        "status": {"boolean": "success"}, "run_id": 1, "question_id": "retail_001_full_pipeline", "agents_evaluated": [APP],
        "user_inputs": INPUTS, "question_metadata": {"description": "full pipeline"}, "interaction_datetime": "2026-01-28T00:21:08.154080",
        "session_id": SESSION, "base_url": "http://localhost:8502", "app_name": APP, "ADK_USER_ID": "eval_user", "USER": "someone",
        "reference_data": {"reference_tool_interactions": [{"tool_name": "IntakeAgent", "input_arguments": {"request": "Austin gym"}}]},
        "missing_information": {"boolean": False}, "final_session_state": session, "latency_data": latency_data(spans),
        "trace_summary": ["agent:retail_location_strategy", "sub-agent:IntakeAgent", "agent:IntakeAgent", "tool:search_places",
                          "sub-agent:transfer_to_agent", "agent:ReportAgent", "tool:generate_qr_code"],
        "session_trace": spans,
        "extracted_data": {"state_variables": session["state"], "tool_interactions": calls, "sub_agent_trace": subs, **session["state"]},
        "final_response": subs[-1]["text_response"],
        "request": {"contents": [{"role": "user", "parts": [{"text": t}]} for t in INPUTS]},
        "response": {"candidates": [{"content": {"role": "model", "parts": [{"text": subs[-1]["text_response"]}]}}]},
    }  # fmt: skip
    row.update(changes)
    return row


# The simulation path: an ADK eval history case (snake_case events, as ADK's Event.model_dump()).
SIM_EVENTS_S: list[tuple[str, float, list[dict[str, Any]], Usage | None]] = [  # (author, seconds after the start, parts, usage)
    ("user", 0.0, [{"text": "Can I get a QR code for 15% off?"}], None),
    ("customer_service_agent", 2.5, [{"function_call": {"id": "adk-q", "name": "generate_qr_code", "args": {"count": 500}}}],
     Usage(3_911, 44, thoughts=125)),
    ("customer_service_agent", 2.6, [{"function_response": {"id": "adk-q", "name": "generate_qr_code",
                                                           "response": {"status": "error", "error_message": "Over the limit of 100."}}}], None),
    ("customer_service_agent", 4.1, [{"text": "I can make at most 100."}], Usage(4_089, 18, thoughts=71, cached=3_386, tool_use=9)),
    ("user", 9.0, [{"text": "Then 100, please."}], None),
    ("customer_service_agent", 11.2, [{"text": "Done: 100 QR codes."}], Usage(4_200, 12)),
]  # fmt: skip
SIM_START_S = 1_768_618_705.972394
ADK_SCORES = {"hallucinations_v1": 0.975, "safety_v1": 1.0, "per_turn_user_simulator_quality_v1": None,
              "rubric_based_tool_use_quality_v1": 1.0, "rubric_based_final_response_quality_v1": 0.5}  # fmt: skip


def sim_events() -> list[dict[str, Any]]:
    out = []
    for i, (author, at, parts, usage) in enumerate(SIM_EVENTS_S):
        out.append({
            "author": author, "timestamp": SIM_START_S + at, "invocation_id": f"e-{sum(1 for a, *_ in SIM_EVENTS_S[: i + 1] if a == 'user')}",
            "content": {"role": "user" if author == "user" or "function_response" in parts[0] else "model", "parts": parts},
            "model_version": MODEL if usage else None, "usage_metadata": usage.snake() if usage else None, "id": f"ev{i}",
        })  # fmt: skip
    return out


def synthesized_trace(events: list[dict[str, Any]], session_id: str) -> list[dict[str, Any]]:
    """Spans made from the events as ``synthesize_trace_from_events`` makes them: an ``invocation``
    and an ``invoke_agent`` span per user event, one 1-s span per other event (``execute_tool NAME``
    for a function call or response, else ``call_llm``), every span its own trace id."""
    spans: list[dict[str, Any]] = []
    serial = iter(range(1_000_000_000_000_000, 10**17, 104_729))

    def span(name: str, start: float, end: float, parent: str | None, attributes: dict[str, Any]) -> dict[str, Any]:
        return {"name": name, "span_id": str(next(serial))[:16], "trace_id": str(next(serial)) * 2, "parent_span_id": parent,
                "start_time": int(start * 1e9), "end_time": int(end * 1e9), "attributes": attributes}  # fmt: skip

    invocation = agent = None
    for event in events:
        at = event["timestamp"]
        if event["author"] == "user":
            if invocation and agent:
                invocation["end_time"] = agent["end_time"] = int(at * 1e9)
                spans += [agent, invocation]
            invocation = span("invocation", at, at + 1, None, {})
            agent = span(
                f"invoke_agent {APP}", at, at + 1, invocation["span_id"], {"gen_ai.agent.name": APP, "gen_ai.conversation.id": session_id}
            )
            continue
        assert agent is not None and invocation is not None
        part = event["content"]["parts"][0]
        named = part.get("function_call") or part.get("function_response")
        attributes: dict[str, Any] = {"gen_ai.system": "gcp.vertex.agent", "gen_ai.request.model": event["model_version"] or "unknown"}
        if named:
            attributes["gen_ai.tool.name"] = named["name"]
            if part.get("function_call"):
                attributes["gcp.vertex.agent.tool_call_args"] = json.dumps(named["args"])
            else:
                attributes["gcp.vertex.agent.tool_response"] = json.dumps(named["response"])
        if event["usage_metadata"]:
            attributes["gen_ai.usage.input_tokens"] = event["usage_metadata"]["prompt_token_count"]
            attributes["gen_ai.usage.output_tokens"] = event["usage_metadata"]["candidates_token_count"]
            attributes["gcp.vertex.agent.llm_response"] = json.dumps({"usage_metadata": event["usage_metadata"]})
        step = span(f"execute_tool {named['name']}" if named else "call_llm", at, at + 1.0, agent["span_id"], attributes)
        spans.append(step)
        agent["end_time"] = invocation["end_time"] = step["end_time"]
    assert agent is not None and invocation is not None
    return [*spans, agent, invocation]


def _camel(value: Any) -> Any:
    if isinstance(value, dict):
        return {"".join(w.title() if i else w for i, w in enumerate(k.split("_"))): _camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel(v) for v in value]
    return value


def sim_row(**changes: Any) -> dict[str, Any]:
    """One row of processed_interaction_sim.jsonl as AdkHistoryConverter writes it."""
    events = sim_events()
    session_id = "___eval___session___8cfec7f5-afe3-4bce-9cc4-1c70b0e2b140"
    spans = synthesized_trace(events, session_id)
    camel = _camel(events)
    texts = [p["text"] for e in events if e["author"] != "user" for p in e["content"]["parts"] if p.get("text")]
    inputs = [p["text"] for e in events if e["author"] == "user" for p in e["content"]["parts"]]
    calls = [{"tool_name": "generate_qr_code", "input_arguments": {"count": 500}, "call_id": "adk-q",
              "output_result": {"status": "error", "error_message": "Over the limit of 100."}}]  # fmt: skip
    row: dict[str, Any] = {
        "request": {"contents": []}, "response": {"candidates": []}, "question_id": "df4c7efb", "session_id": session_id,
        "base_url": "simulation", "app_name": APP, "ADK_USER_ID": "test_user", "status": {"boolean": "success"},
        "run_id": "147b306e-b686-4437-be97-c7da205525b1", "agents_evaluated": [APP], "user_inputs": inputs, "question_metadata": {},
        "interaction_datetime": "2026-01-17T03:12:50.835627", "USER": "someone", "reference_data": {},
        "missing_information": {"boolean": False},
        "final_session_state": {"id": session_id, "appName": APP, "userId": "test_user", "state": {}, "events": camel,
                                "lastUpdateTime": events[-1]["timestamp"]},
        "session_trace": spans, "latency_data": latency_data(spans), "trace_summary": [f"agent:{APP}", "tool:generate_qr_code"],
        "extracted_data": {"state_variables": {}, "tool_interactions": calls, "sub_agent_trace": [], "tool_declarations": [],
                           "per_turn_tokens": [e["usage_metadata"] for e in events if e["usage_metadata"]]},
        "final_response": texts[-1],
    }  # fmt: skip
    row.update({f"adk_score.{name}": value for name, value in ADK_SCORES.items()})
    row.update(changes)
    return row


def sim_usages() -> list[Usage]:
    return [usage for _, _, _, usage in SIM_EVENTS_S if usage is not None]


def write_jsonl(path: Any, rows: list[dict[str, Any]]) -> Any:
    """As the pipeline's ``write_jsonl``: one ``json.dumps(record, ensure_ascii=False, default=str)`` a line."""
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
    return path
