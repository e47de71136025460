"""ADK's LLM-judged criteria computed here as ``adk eval`` computes them: one eval set of eight
cases (three multi-turn; rubrics at the criterion, case and turn level, typed and untyped) with a
``test_config.json`` naming the five criteria ADK computes locally, run by ADK's own
``AgentEvaluator`` (its LocalEvalService, in this process) and by our command line, both against
the same loopback judge (``tests/fakes/adk_judge.py``, answering from the prompts' content).
Every case's score on every criterion is ADK's to 1e-6, with ADK's pass/fail; the judge calls
are counted where they arrive: ours make no more than ADK's, and a second run none."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.adk_judge import AdkJudge
from tests.fakes.gemini_server import FakeGemini
from tests.fakes.vertex_server import FakeVertex
from tests.helpers.commands import cli

ROOT = Path(__file__).resolve().parents[2]
JUDGED = (
    "final_response_match_v2",
    "rubric_based_final_response_quality_v1",
    "rubric_based_tool_use_quality_v1",
    "rubric_based_multi_turn_trajectory_quality_v1",
    "hallucinations_v1",
)


def rubric(rubric_id: str, text: str, kind: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"rubric_id": rubric_id, "rubric_content": {"text_property": text}}
    if kind:
        out["type"] = kind
    return out


CRITERIA: dict[str, Any] = {
    "final_response_match_v2": 0.6,  # ADK's defaults: gemini-2.5-flash, 5 samples a turn
    "rubric_based_final_response_quality_v1": {
        "threshold": 0.7,
        "judge_model_options": {"num_samples": 3},
        "rubrics": [rubric("has_price", "The answer states a price with '$'.")],
        "include_intermediate_responses_in_final": True,
    },
    "rubric_based_tool_use_quality_v1": {
        "threshold": 0.5,
        "judge_model_options": {"num_samples": 1},
        "rubrics": [rubric("uses_price", "The agent calls the 'price' tool.")],
    },
    "rubric_based_multi_turn_trajectory_quality_v1": {
        "threshold": 0.5,
        "judge_model_options": {"num_samples": 3},
        "rubrics": [rubric("looked_up", "The agent looks prices up with 'price'.")],
    },
    # The words said with a tool call (the seeds' guess) are judged too.
    "hallucinations_v1": {"threshold": 0.8, "evaluate_intermediate_nl_responses": True},
}


def turn(user: str, reference: str, rubrics: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "invocation_id": f"t-{abs(hash(user)) % 10_000}",
        "user_content": {"role": "user", "parts": [{"text": user}]},
        "final_response": {"role": "model", "parts": [{"text": reference}]},
    }
    if rubrics:
        out["rubrics"] = rubrics
    return out


CASES: list[dict[str, Any]] = [
    {"eval_id": "soil", "conversation": [turn("How much is the soil?", "The soil costs $12.")]},
    {"eval_id": "rake", "conversation": [turn("How much is the rake?", "The rake costs $25.")]},
    {"eval_id": "hose_about", "conversation": [turn("What does a hose cost?", "It is about $30.")]},
    {
        "eval_id": "greet_seeds_thanks",
        "conversation": [
            turn("hello", "Hello! How can I help?"),
            turn("how much are the seeds?", "The seeds cost $4."),
            turn("thanks", "You are welcome."),
        ],
    },
    {"eval_id": "tractor", "conversation": [turn("Do you sell tractors?", "Sorry, we do not sell tractors.")]},
    {
        "eval_id": "soil_then_rake",
        "conversation": [turn("price of the soil?", "The soil costs $12."), turn("and the rake?", "The rake costs $25.")],
    },
    {
        "eval_id": "turn_rubrics",
        "conversation": [
            turn(
                "what is the hose price?",
                "The hose costs $30.",
                [
                    rubric("names_hose", "The answer names the 'hose'.", "FINAL_RESPONSE_QUALITY"),
                    rubric("asks_hose", "The tool call asks for 'hose'.", "TOOL_USE_QUALITY"),
                    rubric("says_zebra", "The answer says 'zebra'."),  # untyped: ADK never applies it
                ],
            ),
            turn("thanks", "You are welcome.", [rubric("welcome", "The answer says 'welcome'.", "FINAL_RESPONSE_QUALITY")]),
        ],
    },
    {
        "eval_id": "case_rubrics",
        "rubrics": [
            rubric("anything_else", "The answer asks 'anything else'.", "FINAL_RESPONSE_QUALITY"),
            rubric("mentions_rake", "The conversation mentions the 'rake'.", "TRAJECTORY_QUALITY"),
            rubric("item_arg", "The tool call passes an 'item'.", "TOOL_USE_QUALITY"),
            rubric("zebra_case", "The answer says 'zebra'."),  # untyped
        ],
        "conversation": [turn("how much is the rake?", "The rake costs $25.")],
    },
]


@pytest.fixture(scope="module")
def judge() -> Iterator[tuple[AdkJudge, FakeGemini]]:
    answers = AdkJudge()
    server = FakeGemini(reply=answers)
    yield answers, server
    server.close()


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("desk")
    shutil.copytree(ROOT / "tests" / "apps" / "judged", root / "judged")
    (root / "evals").mkdir()
    (root / "evals" / "desk.evalset.json").write_text(json.dumps({"eval_set_id": "desk", "eval_cases": CASES}))
    (root / "evals" / "test_config.json").write_text(json.dumps({"criteria": CRITERIA}))
    return root


def adk_eval(url: str) -> dict[str, dict[str, tuple[float | None, str]]]:
    """ADK's AgentEvaluator on the eval set: each case's score and status on each criterion."""
    import logging

    from google.adk.evaluation.agent_evaluator import AgentEvaluator
    from google.adk.evaluation.eval_config import EvalConfig, get_eval_metrics_from_config
    from google.adk.evaluation.eval_set import EvalSet
    from google.adk.evaluation.metric_evaluator_registry import DEFAULT_METRIC_EVALUATOR_REGISTRY
    from google.adk.evaluation.simulation.user_simulator_provider import UserSimulatorProvider

    config = EvalConfig.model_validate({"criteria": CRITERIA})
    failures: list[str] = []

    class Failures(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            failures.append(record.getMessage()[:300])

    handler = Failures(logging.WARNING)
    logging.getLogger("google_adk").addHandler(handler)
    saved = {name: os.environ.get(name) for name in ("GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_GENAI_USE_VERTEXAI")}
    os.environ.update(GOOGLE_API_KEY="loopback", GOOGLE_GEMINI_BASE_URL=url, GOOGLE_GENAI_USE_VERTEXAI="false")
    try:

        async def run() -> dict[str, list[Any]]:
            agent, app = await AgentEvaluator._get_agent_for_eval(module_name="tests.apps.judged.agent")
            return await AgentEvaluator._get_eval_results_by_eval_id(
                agent_for_eval=agent,
                eval_set=EvalSet.model_validate({"eval_set_id": "desk", "eval_cases": CASES}),
                eval_metrics=[m for m in get_eval_metrics_from_config(config) if m.metric_name in JUDGED],
                num_runs=1,
                user_simulator_provider=UserSimulatorProvider(),
                app=app,
                app_name="desk",
                metric_evaluator_registry=DEFAULT_METRIC_EVALUATOR_REGISTRY.fork(),
            )

        results = asyncio.run(run())
    finally:
        logging.getLogger("google_adk").removeHandler(handler)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    out: dict[str, dict[str, tuple[float | None, str]]] = {}
    for eval_id, (case,) in results.items():
        out[eval_id] = {r.metric_name: (r.score, r.eval_status.name) for r in case.overall_eval_metric_results}
        # ADK leaves a turn whose judge call failed NOT_EVALUATED and scores the others: that
        # would be the loopback's failure, not ADK's reading, so it is said as such.
        for turn in case.eval_metric_result_per_invocation:
            for result in turn.eval_metric_results:
                judged = (
                    result.metric_name != "rubric_based_multi_turn_trajectory_quality_v1"
                    or turn is case.eval_metric_result_per_invocation[-1]
                )
                assert not judged or result.score is not None, (eval_id, result.metric_name, "ADK's judge call failed", failures)
    return out


def ours(project: Path, url: str, *args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any], str]:
    env = {"AGENT_EVAL_JUDGE_API_KEY": "loopback", "AGENT_EVAL_JUDGE_BASE_URL": url, **(env or {})}
    done = cli(project, "evaluate", "evals/desk.evalset.json", "--agent", "judged", "--output-dir", "out", *args, env=env)
    results = json.loads((project / "out" / "results.json").read_text()) if (project / "out" / "results.json").is_file() else {}
    return done.returncode, results, done.stderr


def test_every_case_scores_as_adks_agent_evaluator(judge: tuple[AdkJudge, FakeGemini], project: Path) -> None:
    answers, server = judge
    answers.reset()
    before = len(server.prompts)
    theirs = adk_eval(server.url)
    adk_calls = len(server.prompts) - before
    answers.reset()
    before = len(server.prompts)
    code, results, stderr = ours(project, server.url)
    our_calls = len(server.prompts) - before
    assert code in (0, 1), stderr
    (dataset,) = results["datasets"]
    mine = {q["id"]: q["scores"] for q in dataset["questions"]}
    assert set(mine) == set(theirs) == {c["eval_id"] for c in CASES}
    for eval_id, by_metric in theirs.items():
        for name in JUDGED:
            adk_score, adk_status = by_metric[name]
            score = mine[eval_id][name]
            assert adk_score is not None, (eval_id, name, adk_status)
            assert score["value"] == pytest.approx(adk_score, abs=1e-6), (eval_id, name, score)
            assert score["details"]["adk_status"] == adk_status, (eval_id, name)
            ours_pass = score["value"] >= dataset["summary"][name]["pass_threshold"]
            assert ours_pass == (adk_status == "PASSED"), (eval_id, name)
    # What the eval set exercises: a majority against 2 of 5 valid samples, a turn that falls,
    # rubrics of every level with the untyped ones never applied, a contradicted price.
    assert theirs["hose_about"]["final_response_match_v2"][0] == 0.0
    assert theirs["greet_seeds_thanks"]["final_response_match_v2"][0] == 1.0  # "Hello" valid on 3 of 5
    assert theirs["soil_then_rake"]["final_response_match_v2"][0] == 0.5
    assert theirs["rake"]["hallucinations_v1"][1] == "FAILED"
    # The seeds' guess said with the tool call ("$3", the tool says 4) is an intermediate response:
    # judged by hallucinations_v1 (evaluate_intermediate_nl_responses) as ADK judges it.
    guessed = theirs["greet_seeds_thanks"]["hallucinations_v1"][0]
    assert guessed is not None and guessed < 1.0, theirs["greet_seeds_thanks"]
    # The opening hours are in the agent's instruction only: ADK's judge reads them in app_details,
    # and so does ours (from the spans' requests), or the hours would read as contradicted.
    assert theirs["tractor"]["hallucinations_v1"] == (1.0, "PASSED")
    # ADK formats every turn's prompt before it parses any answer, and parses each against the
    # last turn's rubrics: a rubric of an earlier turn only (names_hose) is asked and never
    # counted. As ADK does, so do we (the equality above holds either way).
    quality = mine["turn_rubrics"]["rubric_based_final_response_quality_v1"]["details"]
    assert {r["rubric_id"] for r in quality["rubric_scores"]} == {"has_price", "welcome"}
    case_level = mine["case_rubrics"]["rubric_based_final_response_quality_v1"]["details"]["rubric_scores"]
    assert {r["rubric_id"] for r in case_level} == {"has_price", "anything_else"}  # the untyped one never applied
    # The judge's samples are kept: each verdict and the majority, and the rationale of a fall.
    about = mine["hose_about"]["final_response_match_v2"]
    (turn,) = about["details"]["samples"]
    assert sorted(s["score"] for s in turn["samples"]) == [0.0, 0.0, 0.0, 1.0, 1.0] and turn["majority"]["score"] == 0.0
    assert "unsure whether an approximate price matches" in about["explanation"]
    # The judge's calls: ADK's own count, no more. 12 turns: 5 samples a turn for
    # final_response_match_v2, 3 for the final-response rubrics, 1 for tool use, 3 for the last
    # turn of each of the 8 cases for the trajectory rubrics, 2 a response for hallucinations_v1.
    # Ours can be fewer: a request another case already made (the same "thanks" turn) is answered
    # from the judge cache once that answer is in it.
    # and 2 more for the one intermediate response (the seeds' guess).
    assert 0 < our_calls <= adk_calls == 12 * 5 + 12 * 3 + 12 * 1 + 8 * 3 + 12 * 2 + 2, (our_calls, adk_calls)
    # A second run asks the judge nothing: every answer is in the judge cache.
    before = len(server.prompts)
    code_again, again, stderr = ours(project, server.url)
    assert code_again == code, stderr
    assert len(server.prompts) == before
    (dataset_again,) = again["datasets"]
    for question in dataset_again["questions"]:
        for name in JUDGED:
            assert question["scores"][name]["value"] == mine[question["id"]][name]["value"], (question["id"], name)


def gated(project: Path) -> tuple[int, dict[str, Any], str]:
    """The gate over the run (``compare``, the one compare-and-gate of every check), its own
    results as the baseline: what the check's verdict would be."""
    done = cli(project, "compare", "out/results.json", "out/results.json", "--output-dir", "gated")
    return done.returncode, json.loads((project / "gated" / "results.json").read_text()), done.stdout + done.stderr


def small_project(root: Path, criteria: dict[str, Any], toml: str = "") -> Path:
    shutil.copytree(ROOT / "tests" / "apps" / "judged", root / "judged")
    (root / "evals").mkdir()
    (root / "evals" / "desk.evalset.json").write_text(json.dumps({"eval_set_id": "desk", "eval_cases": CASES[:2]}))
    (root / "evals" / "test_config.json").write_text(json.dumps({"criteria": {"response_match_score": 0.0, **criteria}}))
    (root / "agent-eval.toml").write_text(toml)
    return root


def test_a_judge_that_cannot_be_reached_is_an_outage_not_a_fail(tmp_path: Path) -> None:
    down = FakeGemini(faults={"503": 1.0})  # every request UNAVAILABLE, after every retry
    try:
        project = small_project(tmp_path, {"final_response_match_v2": 0.6}, "[judge]\nretries = 0\n")
        code, results, stderr = ours(project, down.url)
    finally:
        down.close()
    assert code == 0, stderr  # evaluate scores; it does not gate
    (dataset,) = results["datasets"]
    for question in dataset["questions"]:
        score = question["scores"]["final_response_match_v2"]
        assert score["value"] is None and "could not be reached" in score["details"]["not_computed"]
    code, results, said = gated(project)
    assert code == 3, said  # not a fail: the judge was not there
    (line,) = results["gate"]["unchecked"]
    assert line.startswith("final_response_match_v2 could not be computed for 2 of 2 question run(s)"), line
    assert '[gate] skip-criteria = ["final_response_match_v2"]' in line
    # Said whole and once: its first clause is the headline, the rest the line under it.
    first, _, rest = line.partition(";")
    assert f"gate: COULD NOT BE CHECKED - {first}\n" in said and said.count(first) == 1, said
    assert f"  ? {rest.strip()[:1].upper()}{rest.strip()[1:]}\n" in said, said


def test_a_vertex_criterion_that_gates_stops_the_check_until_skipped(tmp_path: Path, judge: tuple[AdkJudge, FakeGemini]) -> None:
    _, server = judge
    project = small_project(tmp_path, {"safety_v1": 0.8})
    ours(project, server.url)
    code, results, said = gated(project)
    assert code == 3, said
    (line,) = results["gate"]["unchecked"]
    assert line.startswith("safety_v1 could not be computed for 2 of 2 question run(s)")
    assert "through the Vertex AI evaluation service" in line and '`[gate] skip-criteria = ["safety_v1"]`' in line
    # Skipped by the config: neither computed nor gated, and said so.
    (project / "agent-eval.toml").write_text('[gate]\nskip-criteria = ["safety_v1"]\n')
    code, results, stderr = ours(project, server.url)
    assert code == 0, stderr
    code, gate, said = gated(project)
    assert code == 0 and gate["gate"]["outcome"] == "passed" and not gate["gate"]["unchecked"], said
    (dataset,) = results["datasets"]
    assert "safety_v1" not in dataset["questions"][0]["scores"]
    assert any("criterion 'safety_v1' is skipped ([gate] skip-criteria)" in w for w in dataset["warnings"])


def test_a_vertex_criterion_is_computed_by_the_service_where_it_is_configured(tmp_path: Path, judge: tuple[AdkJudge, FakeGemini]) -> None:
    """With the Vertex AI SDK and credentials, `safety_v1` is asked of the evaluation service (a
    loopback one here: AGENT_EVAL_VERTEX_BASE_URL, and a credentials file whose token endpoint is
    the same server) through the command line, and gates on what it says."""
    _, server = judge
    verdicts = {"unsafe": False}
    vertex = FakeVertex(lambda spec, body: {"score": 0.0 if verdicts["unsafe"] else 1.0, "explanation": f"{spec}: judged"})
    try:
        project = small_project(tmp_path, {"safety_v1": 0.8})
        env = {
            "GOOGLE_CLOUD_PROJECT": "proj", "GOOGLE_APPLICATION_CREDENTIALS": str(vertex.credentials(tmp_path)),
            "AGENT_EVAL_VERTEX_BASE_URL": vertex.url,
        }  # fmt: skip
        code, results, stderr = ours(project, server.url, env=env)
        assert code == 0, stderr
        assert len(vertex.bodies) == 2 and vertex.tokens >= 1  # one request a question (one turn each), a token fetched here
        assert all(b["metrics"][0]["predefined_metric_spec"]["metric_spec_name"] == "safety_v1" for b in vertex.bodies)
        (dataset,) = results["datasets"]
        for question in dataset["questions"]:
            score = question["scores"]["safety_v1"]
            assert score["value"] == 1.0 and score["details"]["adk_status"] == "PASSED", score
        code, gate, said = gated(project)
        assert code == 0 and gate["gate"]["outcome"] == "passed" and not gate["gate"]["unchecked"], said
        # The service finds every answer unsafe: the criterion fails the gate, from the service's scores.
        verdicts["unsafe"] = True
        (project / "agent-eval.toml").write_text('[judge]\ncache-dir = ""\n')
        code, results, stderr = ours(project, server.url, env=env)
        assert code == 0 and len(vertex.bodies) == 4, stderr
        code, gate, said = gated(project)
        assert code == 1 and "safety_v1" in said, said
    finally:
        vertex.close()


def test_the_judges_budget_leaves_a_gated_criterion_not_computed(tmp_path: Path, judge: tuple[AdkJudge, FakeGemini]) -> None:
    """[judge] max-calls: ADK's judge calls count against the judges' budget; what it leaves
    unasked is not computed (exit 3 when it gates), never a fail."""
    answers, server = judge
    answers.reset()
    project = small_project(tmp_path, {"final_response_match_v2": 0.6}, "[judge]\nmax-calls = 5\n")
    before = len(server.prompts)
    ours(project, server.url)
    assert len(server.prompts) - before == 5  # ten samples wanted, five allowed (in whichever case they fall)
    code, results, said = gated(project)
    assert code == 3, said
    (line,) = results["gate"]["unchecked"]
    assert re.match(r"final_response_match_v2 could not be computed for [12] of 2 question run\(s\)", line) and "max-calls" in line, line
