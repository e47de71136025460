"""Builders of realistic recorded runs, as the seed pipeline's producers write them.

Shared by the tests, the bundled example (``python -m tests.helpers.factories``) and the
benchmarks, so all three exercise the same shapes: spans in current or legacy ADK
naming, session objects with events, JSON-string cells, ``metric.*`` columns.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

T0 = 1_732_000_000_000_000_000  # ns


@dataclass
class Call:
    tool: str
    args: dict[str, Any]
    result: Any = None
    error: str | None = None


@dataclass
class Run:
    """One recorded run: which agents answered, which tools they called, what state is left."""

    qid: str
    user_inputs: list[str]
    # Per turn: list of (agent_name, [Call...]) activations in order.
    turns: list[list[tuple[str, list[Call]]]]
    final_response: str
    state: dict[str, Any]
    reference: dict[str, Any]
    app: str = "customer_service"
    model: str = "gemini-2.5-flash"
    tokens: tuple[int, int, int] = (1200, 80, 300)  # per model call: input, output, cached
    turn_seconds: float = 1.5
    status: str = "success"
    session_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


class _Ids:
    def __init__(self, seed: str):
        self.rng = random.Random(seed)

    def span(self) -> str:
        return f"{self.rng.getrandbits(64):016x}"


def spans(run: Run, naming: str = "current", pad_chars: int = 0) -> list[dict[str, Any]]:
    """OpenTelemetry spans of the run: one root per turn, agents, model calls and tools inside."""
    ids = _Ids(run.qid + naming)
    trace_id = f"{ids.rng.getrandbits(128):032x}"
    out: list[dict[str, Any]] = []
    clock = T0
    turn_ns = int(run.turn_seconds * 1e9)
    for turn_index, activations in enumerate(run.turns):
        root_id = ids.span()
        root_start = clock
        steps = sum(1 + len(calls) for _, calls in activations) + 1
        step_ns = turn_ns // (steps + 1)
        t = root_start + step_ns // 2
        parent = root_id
        for agent, calls in activations:
            agent_id = ids.span()
            agent_start = t
            for call in [*calls, None]:
                llm_id = ids.span()
                attrs: dict[str, Any]
                if naming == "current":
                    attrs = {
                        "gen_ai.operation.name": "generate_content",
                        "gen_ai.request.model": run.model,
                        "gen_ai.agent.name": agent,
                        "gen_ai.usage.input_tokens": run.tokens[0],
                        "gen_ai.usage.output_tokens": run.tokens[1],
                        "gen_ai.usage.cache_read.input_tokens": run.tokens[2],
                    }
                    name = f"generate_content {run.model}"
                else:
                    usage = {
                        "prompt_token_count": run.tokens[0],
                        "candidates_token_count": run.tokens[1],
                        "cached_content_token_count": run.tokens[2],
                    }
                    attrs = {
                        "gen_ai.system": "gcp.vertex.agent",
                        "gen_ai.request.model": run.model,
                        "gcp.vertex.agent.llm_request": json.dumps({"model": run.model, "contents": [{"text": "x" * pad_chars}]}),
                        "gcp.vertex.agent.llm_response": json.dumps({"usage_metadata": usage}),
                    }
                    name = "call_llm"
                out.append(_span(name, llm_id, trace_id, agent_id, t, t + step_ns // 2, attrs))
                t += step_ns // 2
                if call is None:
                    break
                tool_attrs: dict[str, Any] = {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": call.tool,
                    "gen_ai.tool.call.id": ids.span(),
                }
                if naming == "current":
                    tool_attrs["gen_ai.tool.call.arguments"] = json.dumps(call.args)
                    tool_attrs["gen_ai.tool.call.result"] = json.dumps(call.result if call.error is None else {"error": call.error})
                else:
                    tool_attrs["gcp.vertex.agent.tool_call_args"] = json.dumps(call.args)
                    tool_attrs["gcp.vertex.agent.tool_response"] = json.dumps(call.result if call.error is None else {"error": call.error})
                if call.error:
                    tool_attrs["error.type"] = call.error
                out.append(_span(f"execute_tool {call.tool}", ids.span(), trace_id, agent_id, t, t + step_ns // 2, tool_attrs))
                t += step_ns // 2
            agent_span = "invoke_agent " + agent if naming == "current" else f"agent_run [{agent}]"
            out.append(
                _span(agent_span, agent_id, trace_id, parent, agent_start, t, {"gen_ai.agent.name": agent} if naming == "current" else {})
            )
            parent = agent_id
        root_name = "invocation" if naming == "legacy" else "invoke_workflow"
        out.append(_span(root_name, root_id, trace_id, None, root_start, root_start + turn_ns, {"turn": turn_index}))
        clock = root_start + turn_ns + 50_000_000
    return out


def _span(name: str, span_id: str, trace_id: str, parent: str | None, start: int, end: int, attrs: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "span_id": span_id,
        "trace_id": trace_id,
        "parent_span_id": parent,
        "start_time": start,
        "end_time": end,
        "attributes": attrs,
    }


def all_calls(run: Run) -> list[Call]:
    return [call for turn in run.turns for _, calls in turn for call in calls]


def session_object(run: Run) -> dict[str, Any]:
    """An ADK session (camelCase, as the API server returns it) whose events replay the run."""
    events: list[dict[str, Any]] = []
    for turn_index, activations in enumerate(run.turns):
        inv = f"e-{run.qid}-{turn_index}"
        events.append(
            {"author": "user", "invocationId": inv, "content": {"role": "user", "parts": [{"text": run.user_inputs[turn_index]}]}}
        )
        for agent, calls in activations:
            for n, call in enumerate(calls):
                cid = f"adk-{run.qid}-{turn_index}-{agent}-{n}"
                events.append(
                    {
                        "author": agent,
                        "invocationId": inv,
                        "modelVersion": run.model,
                        "usageMetadata": {"promptTokenCount": run.tokens[0], "candidatesTokenCount": run.tokens[1]},
                        "content": {"role": "model", "parts": [{"functionCall": {"id": cid, "name": call.tool, "args": call.args}}]},
                    }
                )
                response = call.result if call.error is None else {"error": call.error}
                events.append(
                    {
                        "author": agent,
                        "invocationId": inv,
                        "content": {"role": "user", "parts": [{"functionResponse": {"id": cid, "name": call.tool, "response": response}}]},
                    }
                )
        last_agent = activations[-1][0]
        text = run.final_response if turn_index == len(run.turns) - 1 else f"({last_agent} answered turn {turn_index + 1})"
        events.append(
            {
                "author": last_agent,
                "invocationId": inv,
                "modelVersion": run.model,
                "usageMetadata": {"promptTokenCount": run.tokens[0], "candidatesTokenCount": run.tokens[1]},
                "content": {"role": "model", "parts": [{"text": text}]},
            }
        )
    events[-1]["actions"] = {"stateDelta": run.state}
    return {
        "id": f"s-{run.qid}",
        "appName": run.app,
        "userId": "user",
        "state": run.state,
        "events": events,
        "lastUpdateTime": 1732000000.0,
    }


def csv_row(run: Run, *, naming: str = "current", variant: str = "extracted", pad_chars: int = 0) -> dict[str, str]:
    """One row of a simulation CSV. ``variant`` picks where the trace lives:
    ``extracted`` (extracted_data + spans), ``session`` (an ADK session object with events),
    ``metrics_only`` (just ``metric.*`` columns and a transcript)."""
    calls = all_calls(run)
    agents = [agent for turn in run.turns for agent, _ in turn]
    row: dict[str, Any] = {
        "eval_id": f"eval-{run.qid}",
        "question_id": run.qid,
        "session_id": run.session_id or f"s-{run.qid}",
        "agent_name": run.app,
        "timestamp": "2024-11-19T07:06:40Z",
        "user_id": "user",
        "agents_evaluated": [run.app],
        "final_response": run.final_response,
        "system_instructions": "You are a helpful customer service agent. " * max(1, pad_chars // 400),
        "user_inputs": run.user_inputs,
        "reference_data": run.reference,
        "question_metadata": run.metadata,
        "status": run.status,
        "metric.duration_sec": round(run.turn_seconds * len(run.turns), 3),
        "metric.total_tokens": (run.tokens[0] + run.tokens[1]) * (len(calls) + sum(len(t) for t in run.turns)),
        "metric.turn_count": len(run.turns),
        "metric.tool_calls": len(calls),
        "metric.tool_errors": sum(1 for c in calls if c.error),
        "metric.unique_tools": len({c.tool for c in calls}),
        "score.tool_trajectory_avg_score": 1.0,
    }
    if variant == "extracted":
        row["extracted_data"] = {
            "state_variables": run.state,
            "tool_interactions": [
                {"tool_name": c.tool, "input_arguments": c.args, "output_result": c.result, "call_id": f"c{n}"} for n, c in enumerate(calls)
            ],
            "sub_agent_trace": [{"name": a, "text": "..."} for a in agents],
        }
        row["session_trace"] = spans(run, naming, pad_chars=pad_chars)
        row["trace_summary"] = [f"agent:{a}" for a in dict.fromkeys(agents)]
        row["final_session_state"] = run.state
        row["sub_agent_trace"] = [{"name": a, "text": "..."} for a in agents]
        row["request"] = {"contents": [{"text": "y" * pad_chars}]}
        row["response"] = {"candidates": [{"content": {"parts": [{"text": run.final_response}]}}]}
    elif variant == "session":
        row["final_session_state"] = session_object(run)
        row["latency_data"] = {"name": "session", "duration_seconds": run.turn_seconds * len(run.turns), "children": []}
    else:
        row["trace_summary"] = "\n".join(
            [f"user: {u}" for u in run.user_inputs] + [f"{a}: tool_call: {c.tool}(...)" for turn in run.turns for a, cs in turn for c in cs]
        )
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in row.items()}


def write_csv(path: Path, rows: list[dict[str, str]]) -> Path:
    columns = list(dict.fromkeys(k for row in rows for k in row))
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    return path


CART = {"items": [{"sku": "soil-01", "qty": 2}], "subtotal": 25.98}


def customer_service_runs() -> list[Run]:
    """Six recorded runs of the seed's customer-service agent: most right, some wrong on purpose."""
    cart_ref = {"tool_name": "access_cart_information", "input_arguments": {"customer_id": "123"}}
    qr_ref = {
        "tool_name": "generate_qr_code",
        "input_arguments": {"customer_id": "123", "discount_value": 10, "discount_type": "percentage"},
    }
    return [
        Run(
            "q_cart_01",
            ["Hi", "What's in my cart?"],
            [[("customer_service", [])], [("customer_service", [Call("access_cart_information", {"customer_id": "123"}, CART)])]],
            "Your cart has 2 bags of potting soil, subtotal $25.98.",
            {"customer_id": "123", "cart": CART},
            {
                "reference_tool_interactions": [cart_ref],
                "reference_trajectory": ["customer_service", "access_cart_information"],
                "reference_state_variables": {"customer_id": "123", "cart": {"subtotal": 25.98}},
                "reference_response": "Your cart has 2 bags of potting soil with a subtotal of $25.98.",
            },
        ),
        Run(
            "q_discount_01",
            ["I'd like a discount QR code"],
            [
                [
                    ("customer_service", [Call("transfer_to_agent", {"agent_name": "promotions_agent"})]),
                    (
                        "promotions_agent",
                        [
                            Call("access_cart_information", {"customer_id": "123"}, CART),
                            Call(
                                "generate_qr_code",
                                {"customer_id": "123", "discount_value": 10.0, "discount_type": "percentage"},
                                {"qr": "data:..."},
                            ),
                        ],
                    ),
                ]
            ],
            "Here is your QR code for 10% off.",
            {"customer_id": "123", "discount_value": 10, "qr_generated": True},
            {
                "reference_tool_interactions": [cart_ref, qr_ref],
                "reference_trajectory": ["customer_service", "promotions_agent", "access_cart_information", "generate_qr_code"],
                "reference_state_variables": {"discount_value": 10.0, "qr_generated": True},
            },
            tokens=(1800, 120, 600),
        ),
        Run(
            "q_discount_02",
            ["Can I get 15% off?"],
            [
                [
                    ("customer_service", [Call("transfer_to_agent", {"agent_name": "promotions_agent"})]),
                    (
                        "promotions_agent",
                        [
                            Call(
                                "generate_qr_code",
                                {"customer_id": "123", "discount_value": 15, "discount_type": "percentage"},
                                {"qr": "data:..."},
                            )
                        ],
                    ),
                ]
            ],
            "Here is a QR code for 15% off.",
            {"customer_id": "123", "discount_value": 15},
            # The policy caps discounts at 10%: the agent went over it, and skipped the cart check.
            {
                "reference_tool_interactions": [cart_ref, qr_ref],
                "reference_trajectory": ["customer_service", "promotions_agent", "access_cart_information", "generate_qr_code"],
                "reference_state_variables": {"discount_value": 10},
            },
            tokens=(1700, 110, 0),
            turn_seconds=2.4,
        ),
        Run(
            "q_care_01",
            ["How often should I water a fern?"],
            [
                [
                    (
                        "customer_service",
                        [Call("get_product_recommendations", {"plant_type": "fern", "customer_id": "123"}, {"items": ["mister"]})],
                    )
                ]
            ],
            "Water ferns when the top inch of soil is dry, usually twice a week.",
            {"customer_id": "123", "topic": "plant_care"},
            {
                "reference_tool_interactions": [],
                "reference_trajectory": ["customer_service"],
                "reference_state_variables": {"topic": "plant_care"},
                "reference_response": "Water a fern when the top inch of soil feels dry, about twice a week.",
            },
            turn_seconds=1.1,
        ),
        Run(
            "q_appointment_01",
            ["Book a planting service for Saturday", "Morning please"],
            [
                [("customer_service", [Call("get_available_planting_times", {"date": "2024-11-23"}, ["9-12", "13-16"])])],
                [
                    (
                        "customer_service",
                        [
                            Call(
                                "schedule_planting_service",
                                {"customer_id": "123", "date": "2024-11-23", "time_range": "9-12", "details": "planting"},
                                {"status": "booked"},
                            )
                        ],
                    )
                ],
            ],
            "You're booked for Saturday 9-12.",
            {"customer_id": "123", "appointment": {"date": "2024-11-23", "time_range": "9-12"}},
            {
                "reference_tool_interactions": [
                    {"tool_name": "get_available_planting_times", "input_arguments": {"date": "2024-11-23"}},
                    {
                        "tool_name": "schedule_planting_service",
                        "input_arguments": {"customer_id": "123", "date": "2024-11-23", "time_range": "9-12"},
                    },
                ],
                "reference_trajectory": ["customer_service", "get_available_planting_times", "schedule_planting_service"],
                "reference_state_variables": {"appointment": {"date": "2024-11-23", "time_range": "9-12"}},
            },
            turn_seconds=1.9,
        ),
        Run(
            "q_crm_01",
            ["Please update my address to 1 Main St"],
            [
                [
                    (
                        "customer_service",
                        [
                            Call(
                                "update_salesforce_crm",
                                {"customer_id": "123", "details": {"address": "1 Main St"}},
                                None,
                                error="CRM timeout",
                            )
                        ],
                    )
                ]
            ],
            "Sorry, I couldn't update your address right now.",
            {"customer_id": "123"},
            {
                "reference_tool_interactions": [{"tool_name": "update_salesforce_crm", "input_arguments": {"customer_id": "123"}}],
                "reference_state_variables": {"address_updated": True},
            },
            turn_seconds=3.2,
        ),
    ]


def write_example(directory: Path) -> Path:
    rows = [csv_row(run) for run in customer_service_runs()]
    return write_csv(directory / "customer_service_runs.csv", rows)


if __name__ == "__main__":
    print(write_example(Path(__file__).resolve().parents[2] / "examples" / "recorded"))


def runs(n: int = 24, broken: set[int] | None = None) -> list[Run]:
    """n recorded runs; those in ``broken`` call the cart tool with the wrong customer."""
    out = []
    base = customer_service_runs()
    for i in range(n):
        run = base[i % len(base)]
        run = dataclasses.replace(run, qid=f"{run.qid}_{i:02d}", session_id=None)
        if broken and i in broken:
            turns = [
                [
                    (
                        agent,
                        [
                            Call(c.tool, {**c.args, "customer_id": "999"} if "customer_id" in c.args else c.args, c.result, c.error)
                            for c in calls
                        ],
                    )
                    for agent, calls in turn
                ]
                for turn in run.turns
            ]
            run = dataclasses.replace(run, turns=turns)
        out.append(run)
    return out


def write_dataset(path: Path, items: list[Run]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_csv(path, [csv_row(r) for r in items])
