"""ADK's efficiency reports (tool_call_count_v1, inference_call_count_v1, token_usage_v1,
invocation_duration_v1) computed here as ADK's own evaluator classes compute them, on a real
three-turn run of a scripted ADK app (tests/apps/efficiency): our runner's trace against ADK's
``EvaluationGenerator`` invocations of the same conversation, run by ADK's Runner. The durations
are the ones our run measured, given to ADK's invocations too: what is compared is how ADK
aggregates them, not two clocks."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agent_eval_action.datasets import Record
from agent_eval_action.metrics import REGISTRY, MetricContext
from agent_eval_action.models.questions import Question
from agent_eval_action.models.traces import Trace
from agent_eval_action.run.agent.in_process import AdkRunner
from agent_eval_action.run.agent.loader import load_agent
from agent_eval_action.run.run_pool import RunSettings, run_records
from tests.helpers.commands import cli

ROOT = Path(__file__).resolve().parents[2]
APPS = ROOT / "tests" / "apps"
INPUTS = ["where is my order", "I want a refund", "thanks"]
QUESTION = Question(id="q", user_inputs=INPUTS, agents_evaluated=["front"])
SETTINGS = RunSettings(concurrency=2, timeout_s=60, retries=0, backoff_initial_s=0.01, backoff_max_s=0.05)


@pytest.fixture(scope="module")
def ours() -> Trace:
    (done,) = asyncio.run(run_records([Record(question=QUESTION)], AdkRunner(load_agent("efficiency", cwd=APPS)), SETTINGS))
    assert done.trace is not None and done.trace.error is None
    return done.trace


def adk_invocations(durations: list[float | None]) -> list[Any]:
    """The conversation run by ADK's Runner, as ADK's eval makes invocations of its events."""
    from google.adk.evaluation.evaluation_generator import EvaluationGenerator
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    from tests.apps.efficiency.agent import root_agent

    async def run() -> list[Any]:
        runner = InMemoryRunner(agent=root_agent, app_name="efficiency")
        session = await runner.session_service.create_session(app_name="efficiency", user_id="u")
        for text in INPUTS:
            message = types.Content(role="user", parts=[types.Part(text=text)])
            async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
                pass
        done = await runner.session_service.get_session(app_name="efficiency", user_id="u", session_id=session.id)
        assert done is not None
        return list(done.events)

    events = asyncio.run(run())
    order = list(dict.fromkeys(e.invocation_id for e in events))
    timed = {invocation: seconds for invocation, seconds in zip(order, durations, strict=True) if seconds is not None}
    return EvaluationGenerator.convert_events_to_eval_invocations(events, durations_per_invocation=timed)


def test_each_report_equals_adks_evaluator_per_turn_and_overall(ours: Trace) -> None:
    from google.adk.evaluation import _efficiency_evaluators as adk
    from google.adk.evaluation.evaluator import EvaluationResult

    invocations = adk_invocations([turn.duration_s for turn in ours.turns])
    assert len(invocations) == len(ours.turns) == 3
    evaluators = {
        "tool_call_count_v1": adk._ToolCallCountV1Evaluator(),
        "inference_call_count_v1": adk._InferenceCallCountV1Evaluator(),
        "token_usage_v1": adk._TokenUsageV1Evaluator(),
        "invocation_duration_v1": adk._InvocationDurationV1Evaluator(),
    }
    for name, evaluator in evaluators.items():
        theirs = evaluator.evaluate_invocations(invocations)
        assert isinstance(theirs, EvaluationResult)  # these evaluators answer at once, not awaitably
        score = REGISTRY[name].score(QUESTION, ours, MetricContext())
        assert score.value is not None and theirs.overall_score is not None, (name, score)
        assert score.value == pytest.approx(theirs.overall_score, abs=1e-6), name
        per_turn = [r.score for r in theirs.per_invocation_results]
        assert score.details["per_turn"] == pytest.approx(per_turn, abs=1e-6), name
    # What the case exercises: 1, 2 (the transfer and the refund) and 0 tool calls; a turn whose
    # model reported no usage (counted as a model call, its tokens n/a, and still in the mean).
    assert REGISTRY["tool_call_count_v1"].score(QUESTION, ours, MetricContext()).details["per_turn"] == [1, 2, 0]
    tokens = REGISTRY["token_usage_v1"].score(QUESTION, ours, MetricContext())
    assert tokens.details["per_turn"][2] is None and tokens.value == pytest.approx(sum(tokens.details["per_turn"][:2]) / 3)


def test_ours_are_per_question_sums_beside_adks_per_turn_means(ours: Trace) -> None:
    """The issue's 432 against 144 for three turns: ours sum the question, ADK's are per turn."""
    ctx = MetricContext()

    def per_turn(name: str) -> list[Any]:
        return list(REGISTRY[name].score(QUESTION, ours, ctx).details["per_turn"])

    assert REGISTRY["llm_calls"].score(QUESTION, ours, ctx).value == sum(per_turn("inference_call_count_v1")) == 6
    # A call that reported no usage: ours leaves the question's total unscored and says so; ADK's
    # report reads that turn's tokens as n/a and still averages over every turn.
    total = REGISTRY["total_tokens"].score(QUESTION, ours, ctx)
    assert total.value is None and total.explanation == "token usage not recorded for 1 of 6 model call(s)"
    assert per_turn("token_usage_v1")[2] is None
    # ADK counts the transfer as a tool call; our tool_calls only where the reference names it.
    assert REGISTRY["tool_calls"].score(QUESTION, ours, ctx).value == sum(per_turn("tool_call_count_v1")) - 1


def test_a_threshold_on_a_report_is_a_config_error_naming_the_setting(tmp_path: Path) -> None:
    from tests.helpers import seed_pipeline as seed

    rows = seed.write_jsonl(tmp_path / "runs.jsonl", [seed.sim_row()])
    (tmp_path / "agent-eval.toml").write_text("[gate.metrics.token_usage_v1]\nmax = 5000\n")
    done = cli(tmp_path, "evaluate", str(rows), "--output-dir", "out")
    assert done.returncode == 2, done.stderr
    assert "[gate.metrics.token_usage_v1]" in done.stderr and "take no threshold" in done.stderr
    # In ADK's test_config.json beside an eval set, as ADK refuses it.
    (tmp_path / "agent-eval.toml").unlink()
    evalset = tmp_path / "set" / "cases.evalset.json"
    evalset.parent.mkdir()
    evalset.write_text(json.dumps({"eval_set_id": "s", "eval_cases": [{"eval_id": "c", "conversation": [
        {"invocation_id": "i", "user_content": {"role": "user", "parts": [{"text": "hi"}]}}]}]}))  # fmt: skip
    (evalset.parent / "test_config.json").write_text(json.dumps({"criteria": {"tool_call_count_v1": 2}}))
    refused = cli(tmp_path, "validate", str(evalset))
    assert refused.returncode == 2
    assert "$.criteria.tool_call_count_v1" in refused.stderr and "takes no threshold" in refused.stderr, refused.stderr


def test_reports_of_a_recorded_run_from_its_session(tmp_path: Path) -> None:
    """The seed pipeline's simulated row: its session's events, read as ADK's eval reads them."""
    from tests.helpers import seed_pipeline as seed

    rows = seed.write_jsonl(tmp_path / "runs.jsonl", [seed.sim_row()])
    done = cli(tmp_path, "evaluate", str(rows), "--output-dir", "out")
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    (question,) = results["datasets"][0]["questions"]
    # The simulated row: turn 1 a tool call and two model calls, turn 2 one model call.
    assert question["scores"]["tool_call_count_v1"]["details"]["per_turn"] == [1, 0]
    assert question["scores"]["inference_call_count_v1"]["value"] == 1.5
    used = seed.sim_usages()
    assert question["scores"]["token_usage_v1"]["value"] == pytest.approx(
        sum(u.prompt + u.tool_use + u.candidates + u.thoughts for u in used) / 2
    )
    assert question["scores"]["invocation_duration_v1"]["value"] is not None  # the turns' invocation spans
