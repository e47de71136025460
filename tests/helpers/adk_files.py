"""ADK eval history files written with ADK's own models from a real run of the shop test app (a
``Runner`` with scripted models): as ADK 2.x writes them with and without the session (and with
its own writer, ``LocalEvalSetResultsManager``), and as older ADK wrote them (bare tool uses,
every null Part field spelt out). ``ADK_1_HISTORY`` was written by ADK 1.21.0 itself
(tests/adk_history/README.md)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# Written by ADK 1.21.0's own `adk eval`: double-encoded, judge_model_options in every metric result.
ADK_1_HISTORY = ROOT / "tests" / "adk_history" / "1.21.0" / "shop_shop_set_1795465006.2185001.evalset_result.json"
INPUTS = ["where is my order", "I want a refund"]
ANSWERS = ["Your order A1 has shipped.", "Your order A1 was refunded 10."]
# What ADK 2.13.0's TrajectoryEvaluator (EXACT) and RougeEvaluator gave on these invocations
# (checked live in test_adk_history where they import).
ADK_TRAJECTORY = 0.5
ADK_ROUGE = 0.463636
ADK_TRAJECTORY_PER_TURN = [1.0, 0.0]
ADK_ROUGE_PER_TURN = [0.2, 0.7272727272727272]


def run_shop() -> tuple[list[Any], Any]:
    """Events of a two-turn conversation with the shop app, a user event before each turn's, as ADK's eval records them."""
    from google.adk.events.event import Event
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    from tests.apps.shop.agent import root_agent

    async def run() -> tuple[list[Any], Any]:
        service = InMemorySessionService()
        runner = Runner(app_name="shop", agent=root_agent, session_service=service)
        session = await service.create_session(app_name="shop", user_id="u")
        events: list[Any] = []
        for text in INPUTS:
            message = types.Content(role="user", parts=[types.Part(text=text)])
            first = True
            async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
                if first:
                    events.append(Event(content=message, author="user", invocation_id=event.invocation_id))
                    first = False
                events.append(event)
        return events, await service.get_session(app_name="shop", user_id="u", session_id=session.id)

    return asyncio.run(run())


def expected_invocations() -> list[Any]:
    from google.adk.evaluation.eval_case import IntermediateData, Invocation
    from google.genai import types

    calls = [
        [types.FunctionCall(name="lookup_order", args={"order_id": "A1"})],
        # The reference names the transfer (as one recorded from an ADK session does) but not the lookup.
        [
            types.FunctionCall(name="transfer_to_agent", args={"agent_name": "refunds"}),
            types.FunctionCall(name="refund", args={"order_id": "A1", "amount": 10}),
        ],
    ]
    return [
        Invocation(
            user_content=types.Content(role="user", parts=[types.Part(text=text)]),
            final_response=types.Content(role="model", parts=[types.Part(text=answer)]),
            intermediate_data=IntermediateData(tool_uses=turn),
        )
        for text, answer, turn in zip(INPUTS, ANSWERS, calls, strict=True)
    ]


def eval_case_result(*, with_session: bool) -> Any:
    """The shop run's EvalCaseResult, its actual invocations made by ADK's own EvaluationGenerator."""
    from google.adk.evaluation.eval_metrics import EvalMetricResult, EvalMetricResultPerInvocation, EvalStatus
    from google.adk.evaluation.eval_result import EvalCaseResult
    from google.adk.evaluation.evaluation_generator import EvaluationGenerator

    events, session = run_shop()
    actual = EvaluationGenerator.convert_events_to_eval_invocations(events)
    expected = expected_invocations()
    metrics = [
        EvalMetricResult(metric_name="tool_trajectory_avg_score", threshold=1.0, score=ADK_TRAJECTORY, eval_status=EvalStatus.FAILED),
        EvalMetricResult(metric_name="response_match_score", threshold=0.5, score=ADK_ROUGE, eval_status=EvalStatus.PASSED),
        EvalMetricResult(metric_name="safety_v1", threshold=0.8, score=1.0, eval_status=EvalStatus.PASSED),
    ]
    per_turn = [
        [
            EvalMetricResult(metric_name="tool_trajectory_avg_score", threshold=1.0, score=trajectory, eval_status=EvalStatus.PASSED),
            EvalMetricResult(metric_name="response_match_score", threshold=0.5, score=rouge, eval_status=EvalStatus.PASSED),
        ]
        for trajectory, rouge in zip(ADK_TRAJECTORY_PER_TURN, ADK_ROUGE_PER_TURN, strict=True)
    ]
    return EvalCaseResult(
        eval_set_id="shop_set", eval_id="refund_case", final_eval_status=EvalStatus.FAILED, overall_eval_metric_results=metrics,
        eval_metric_result_per_invocation=[
            EvalMetricResultPerInvocation(actual_invocation=a, expected_invocation=e, eval_metric_results=m)
            for a, e, m in zip(actual, expected, per_turn, strict=True)
        ],
        session_id=session.id, session_details=session if with_session else None, user_id="u",
    )  # fmt: skip


def written_by_adk(agents_dir: Path) -> Path:
    """The eval history of the shop run as the installed ADK's LocalEvalSetResultsManager writes it."""
    from google.adk.evaluation.local_eval_set_results_manager import LocalEvalSetResultsManager

    LocalEvalSetResultsManager(agents_dir=str(agents_dir)).save_eval_set_result(
        app_name="shop", eval_set_id="shop_set", eval_case_results=[eval_case_result(with_session=True)]
    )
    (path,) = (agents_dir / "shop" / ".adk" / "eval_history").glob("*.evalset_result.json")
    return path


def history(path: Path, *, with_session: bool) -> Path:
    """ADK 2.x's eval history of the run, its actual invocations made by ADK's own EvaluationGenerator."""
    from google.adk.evaluation.eval_result import EvalSetResult

    result = EvalSetResult(eval_set_result_id="r1", eval_set_id="shop_set", eval_case_results=[eval_case_result(with_session=with_session)])
    path.write_text(result.model_dump_json(indent=2))
    return path


def old_history(path: Path) -> Path:
    """As older ADK wrote it: bare tool uses, every null Part field written out, ``eval_set_file``,
    the expected invocation's role null, no session, no model calls or token counts anywhere."""

    def part(text: str) -> dict[str, Any]:
        fields = [
            "video_metadata",
            "thought",
            "inline_data",
            "code_execution_result",
            "executable_code",
            "file_data",
            "function_call",
            "function_response",
        ]
        return {**dict.fromkeys(fields), "text": text}

    def invocation(text: str, answer: str, calls: list[dict[str, Any]], role: str | None) -> dict[str, Any]:
        return {
            "invocation_id": f"e-{len(text)}",
            "user_content": {"parts": [part(text)], "role": "user"},
            "final_response": {"parts": [part(answer)], "role": role},
            "intermediate_data": {"tool_uses": calls, "intermediate_responses": []},
            "creation_timestamp": 0.0,
        }

    lookup = {"id": "adk-1", "args": {"order_id": "A1"}, "name": "lookup_order"}
    refund = {"id": "adk-3", "args": {"order_id": "A1", "amount": 10}, "name": "refund"}
    transfer = {"id": "adk-2", "args": {"agent_name": "refunds"}, "name": "transfer_to_agent"}
    pairs = [
        (invocation(INPUTS[0], "shop: where is my order", [lookup], "model"), invocation(INPUTS[0], ANSWERS[0], [lookup], None)),
        (
            invocation(INPUTS[1], "Refunded 10 on order A1.", [transfer, lookup, refund], "model"),
            invocation(INPUTS[1], ANSWERS[1], [transfer, refund], None),
        ),
    ]
    metrics = [
        {"metric_name": "tool_trajectory_avg_score", "threshold": 0.8, "score": ADK_TRAJECTORY, "eval_status": 2},
        {"metric_name": "response_match_score", "threshold": 0.5, "score": ADK_ROUGE, "eval_status": 1},
    ]

    def turn_metrics(trajectory: float, rouge: float) -> list[dict[str, Any]]:
        return [
            {
                "metric_name": "tool_trajectory_avg_score",
                "threshold": 0.8,
                "score": trajectory,
                "eval_status": 1 if trajectory >= 0.8 else 2,
            },
            {"metric_name": "response_match_score", "threshold": 0.5, "score": rouge, "eval_status": 1 if rouge >= 0.5 else 2},
        ]

    case = {
        "eval_set_file": "eval/data/shop.evalset.json",
        "eval_set_id": "eval/data/shop.evalset.json",
        "eval_id": "case0e02e6",
        "final_eval_status": 2,
        "eval_metric_results": [],
        "overall_eval_metric_results": metrics,
        "eval_metric_result_per_invocation": [
            {"actual_invocation": a, "expected_invocation": e, "eval_metric_results": turn_metrics(t, r)}
            for (a, e), t, r in zip(pairs, ADK_TRAJECTORY_PER_TURN, ADK_ROUGE_PER_TURN, strict=True)
        ],
        "session_id": "___eval___session___a5b9345c",
        "session_details": None,
        "user_id": "user",
    }
    path.write_text(json.dumps({"eval_set_result_id": "shop_1", "eval_set_id": "shop", "eval_case_results": [case]}, indent=2))
    return path
