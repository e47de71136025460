"""``per_turn_user_simulator_quality_v1``, ADK's judge of its user simulator, computed as ADK
computes it: ADK's own evaluator (the first turn against the scenario's starting prompt, each
later turn and the stop signal judged against the plan, a majority of samples, the share of good
turns), its judge asked through our judge path. Against one loopback judge, every run's score
and pass/fail equal ADK's evaluator run directly; no more judge calls than ADK's."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Iterator
from typing import Any

import pytest

from agent_eval_action.datasets import Record
from agent_eval_action.models.questions import Question, Turn
from agent_eval_action.models.scores import NOT_COMPUTED
from agent_eval_action.models.traces import Trace
from agent_eval_action.run.judges.adk import AdkJudgeWorker, actual_invocations
from agent_eval_action.run.judges.client import judge_from_env
from agent_eval_action.run.judges.engine import JudgeEngine, JudgeSettings
from tests.fakes.gemini_server import FakeGemini

NAME = "per_turn_user_simulator_quality_v1"
CRITERION: dict[str, Any] = {"threshold": 0.6, "judge_model_options": {"num_samples": 3}}
SCENARIO = {
    "starting_prompt": "where is my order",
    "conversation_plan": "Ask where your order is. When it has shipped, ask for a refund, and stop once refunded.",
}


def judge(prompt: str) -> str:
    """Valid unless the user simulator's generated response strays from the plan (a pony), or it
    stops before the refund (the stop signal said too early)."""
    generated = prompt.rsplit("# Generated User Response", 1)[-1]
    history = prompt.rsplit("# Conversation History", 1)[-1].split("# Persona Description", 1)[0]
    strays = "pony" in generated or ("</finished>" in generated and "refunded" not in history)
    return '```json\n{"reasoning": "checked against the plan", "is_valid": "%s"}\n```' % ("invalid" if strays else "valid")


def run(qid: str, turns: list[tuple[str, str]]) -> Record:
    return Record(
        question=Question(id=qid, user_inputs=[], conversation_scenario=SCENARIO),
        trace=Trace(turns=[Turn(user_input=u, response=r) for u, r in turns], final_response=turns[-1][1], root_agent="shop"),
    )


RUNS = [
    run("on_plan", [("where is my order", "It has shipped."), ("I want a refund", "You are refunded.")]),
    run("pony", [("where is my order", "It has shipped."), ("I want a pony", "We do not sell ponies.")]),
    run("wrong_start", [("hello", "Hi!"), ("where is my order", "It has shipped.")]),
]


@pytest.fixture
def server() -> Iterator[FakeGemini]:
    fake = FakeGemini(reply=judge)
    yield fake
    fake.close()


def adks(url: str) -> dict[str, tuple[float | None, str]]:
    """ADK's evaluator on each run's invocations, its judge model on the loopback server."""
    from google.adk.evaluation.eval_case import ConversationScenario, Invocation
    from google.adk.evaluation.eval_config import EvalConfig, get_eval_metrics_from_config
    from google.adk.evaluation.metric_evaluator_registry import DEFAULT_METRIC_EVALUATOR_REGISTRY

    saved = {name: os.environ.get(name) for name in ("GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_GENAI_USE_VERTEXAI")}
    os.environ.update(GOOGLE_API_KEY="loopback", GOOGLE_GEMINI_BASE_URL=url, GOOGLE_GENAI_USE_VERTEXAI="false")
    try:
        (metric,) = [
            m for m in get_eval_metrics_from_config(EvalConfig.model_validate({"criteria": {NAME: CRITERION}})) if m.metric_name == NAME
        ]
        out: dict[str, tuple[float | None, str]] = {}
        for item in RUNS:
            assert item.trace is not None
            evaluator: Any = DEFAULT_METRIC_EVALUATOR_REGISTRY.get_evaluator(eval_metric=metric)
            result = asyncio.run(
                evaluator.evaluate_invocations(
                    actual_invocations=[Invocation.model_validate(i) for i in actual_invocations(item.trace)],
                    expected_invocations=None,
                    conversation_scenario=ConversationScenario.model_validate(SCENARIO),
                )
            )
            out[item.question.id] = (result.overall_score, result.overall_eval_status.name)
        return out
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def test_the_user_simulators_judge_scores_as_adks_evaluator(server: FakeGemini) -> None:
    before = len(server.prompts)
    theirs = adks(server.url)
    adk_calls = len(server.prompts) - before
    worker = AdkJudgeWorker()
    try:
        client = judge_from_env({"GOOGLE_API_KEY": "k", "AGENT_EVAL_JUDGE_BASE_URL": server.url})
        engine = JudgeEngine([], JudgeSettings(), client, adk_criteria={NAME: CRITERION}, adk_worker=worker)
        before = len(server.prompts)
        scores = asyncio.run(engine.score(RUNS))
        our_calls = len(server.prompts) - before
    finally:
        worker.close()
    mine = {qid: by_name[NAME] for (qid, _), by_name in scores.items()}
    for qid, (score, status) in theirs.items():
        assert score is not None, (qid, status)
        assert mine[qid].value == pytest.approx(score, abs=1e-6), (qid, mine[qid], score)
        assert mine[qid].details["adk_status"] == status, (qid, mine[qid].details)
    # What the runs exercise: a run on the plan passes; a turn off the plan costs its share; a
    # first turn other than the starting prompt scores 0, and a conversation stopped before the
    # plan's end makes its last turn a fail (the stop signal judged invalid replaces it).
    assert theirs["on_plan"] == (1.0, "PASSED") and theirs["pony"] == (0.5, "FAILED") and theirs["wrong_start"] == (0.0, "FAILED")
    # Two judged turns a run (the second turn and the stop signal), 3 samples each: ADK's count, and ours.
    assert our_calls == adk_calls == len(RUNS) * 2 * 3, (our_calls, adk_calls)
    assert re.search(r"over \d+ judged turn", mine["pony"].explanation)


def test_a_question_without_a_scenario_is_not_judged_for_it(server: FakeGemini) -> None:
    client = judge_from_env({"GOOGLE_API_KEY": "k", "AGENT_EVAL_JUDGE_BASE_URL": server.url})
    static = Record(question=Question(id="static", user_inputs=["hi"]), trace=Trace(turns=[Turn(user_input="hi", response="hello")]))
    engine = JudgeEngine([], JudgeSettings(), client, adk_criteria={NAME: CRITERION}, adk_worker=AdkJudgeWorker())
    score = asyncio.run(engine.score([static]))[("static", 0)][NAME]
    assert score.value is None and "conversation scenarios only" in score.explanation and NOT_COMPUTED not in score.details
    assert server.prompts == []
