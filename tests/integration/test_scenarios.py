"""Conversation scenarios played out by ADK's own user simulator: a real Runner with the shop
app's scripted models, the simulator's model a scripted one in ADK's model registry (no network),
in this process and through the agent worker's files run on their own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_eval_action.config import Config, UserSimulatorConfig
from agent_eval_action.models.results import DatasetResult
from agent_eval_action.service.evaluation import Evaluation
from tests.apps import simulated_user  # registers scripted-user in ADK's model registry
from tests.helpers.commands import run_cli
from tests.helpers.workshop import scenario_case

# Inputs must lie inside the working directory's repository: work in tmp_path, as a user would.
pytestmark = pytest.mark.usefixtures("in_tmp")


ROOT = Path(__file__).resolve().parents[2]
APPS = ROOT / "tests" / "apps"

PLAN = "Ask where your order is: SAY[where is my order] When it has shipped, SAY[I want a refund] and stop once refunded."
NO_KEYS = ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT")


def static_case() -> dict[str, Any]:
    return {
        "eval_id": "static",
        "conversation": [
            {
                "user_content": {"role": "user", "parts": [{"text": "where is my order"}]},
                "final_response": {"role": "model", "parts": [{"text": "shop: where is my order"}]},
                "intermediate_data": {"tool_uses": [{"name": "lookup_order", "args": {"order_id": "A1"}}]},
            }
        ],
        "session_input": {"app_name": "shop", "user_id": "u"},
    }


def eval_set(directory: Path, *cases: dict[str, Any], **extra: Any) -> Path:
    path = directory / "shop_scenarios.evalset.json"
    path.write_text(json.dumps({"eval_set_id": "shop_scenarios", "eval_cases": list(cases), **extra}, indent=2))
    return path


def evaluate(path: Path, simulator: UserSimulatorConfig, monkeypatch: pytest.MonkeyPatch) -> DatasetResult:
    # The shop app beside the dataset (inputs must lie inside the working directory); in this
    # process, where the scripted user is registered in ADK's model registry.
    shutil.copytree(APPS / "shop", path.parent / "shop", dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.chdir(path.parent)
    config = Config(agent="shop", user_simulator=simulator, capture_spans=False, progress="never", in_process=True)
    evaluation = Evaluation(config)
    try:
        done = evaluation.evaluate(str(path))
    finally:
        evaluation.close()
    assert done.result is not None, [p.message for p in done.problems]
    assert not done.problems, [p.message for p in done.problems]
    return done.result


def scenario(state: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    case = scenario_case("refund_scenario", "hello", PLAN, **extra)
    case["session_input"] = {"app_name": "shop", "user_id": "u", "state": state or {}}
    return case


def test_a_scenario_is_played_out_by_adks_user_simulator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_eval_action.datasets import Record, load_dataset
    from agent_eval_action.run.agent.in_process import AdkRunner
    from agent_eval_action.run.agent.loader import load_agent
    from agent_eval_action.run.run_pool import RunSettings, run_records

    simulated_user.PROMPTS.clear()
    path = eval_set(tmp_path, scenario(state={"lookups": 5}))
    (record,) = [r for r in load_dataset(str(path)).records if isinstance(r, Record)]
    runner = AdkRunner(load_agent("shop", cwd=APPS), capture_spans=True, user_simulator={"model": "scripted-user"})
    import asyncio

    (done,) = asyncio.run(run_records([record], runner, RunSettings(timeout_s=120)))
    trace = done.trace
    assert trace is not None and trace.error is None and trace.skipped is None
    assert [t.user_input for t in trace.turns] == ["hello", "where is my order", "I want a refund"]
    from agent_eval_action.run.judges.prompts import judge_context

    assert judge_context(record.question, trace)["user_inputs"] == ["hello", "where is my order", "I want a refund"]  # judges see them too
    assert [t.response for t in trace.turns] == ["shop: hello", "shop: where is my order", "Refunded 10 on order A1."]
    assert all(t.duration_s is not None and t.duration_s > 0 for t in trace.turns)
    assert [(c.tool_name, c.turn) for c in trace.tool_interactions or []] == [
        ("lookup_order", 1), ("transfer_to_agent", 2), ("lookup_order", 2), ("refund", 2)
    ]  # fmt: skip
    assert trace.final_state == {"lookups": 7, "last_order": "A1", "refund": {"order_id": "A1", "amount": 10}}
    assert trace.spans and any(s.name.startswith("invoke_agent shop") for s in trace.spans)
    # ADK's simulator asked its model three times (after each of the agent's answers), with the plan.
    assert len(simulated_user.PROMPTS) == 3 and all(PLAN in prompt for prompt in simulated_user.PROMPTS)
    assert "user: where is my order" in simulated_user.PROMPTS[2] and "shop: shop: where is my order" in simulated_user.PROMPTS[2]


def test_scenarios_and_static_cases_of_one_file_are_scored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = eval_set(tmp_path, static_case(), scenario())
    result = evaluate(path, UserSimulatorConfig(model="scripted-user"), monkeypatch)
    by_id = {q.id: q for q in result.questions}
    assert by_id["static"].status == "ok" and by_id["static"].scores["tool_trajectory_avg_score"].value == 1.0
    played = by_id["refund_scenario"]
    assert played.status == "ok" and played.scores["llm_calls"].value == 7.0
    assert played.scores["tool_calls"].value == 3.0  # transfer_to_agent is an agent step
    assert played.scores["tool_trajectory_avg_score"].explanation == "no reference tool calls"


def test_turn_limit_from_the_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = eval_set(tmp_path, scenario())
    result = evaluate(path, UserSimulatorConfig(model="scripted-user", turn_limit=2), monkeypatch)
    (played,) = result.questions
    assert played.scores["turn_latency"].details["per_turn"].__len__() == 2
    assert played.scores["tool_calls"].value == 1.0  # stopped before the refund


def test_settings_from_the_dataset_files_under_the_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "test_config.json").write_text(
        json.dumps({"criteria": {"safety_v1": 0.8}, "user_simulator_config": {"model": "scripted-user", "max_allowed_invocations": 2}})
    )
    path = eval_set(tmp_path, scenario())
    (played,) = evaluate(path, UserSimulatorConfig(), monkeypatch).questions
    assert len(played.scores["turn_latency"].details["per_turn"]) == 2  # test_config.json's limit
    (played,) = evaluate(path, UserSimulatorConfig(turn_limit=1), monkeypatch).questions
    assert len(played.scores["turn_latency"].details["per_turn"]) == 1  # ours over it
    # The eval set's own settings (a key ADK ignores) are used for its scenarios too.
    own = eval_set(tmp_path, scenario(), user_simulator={"user_simulator_config": {"max_allowed_invocations": 3}})
    result = evaluate(own, UserSimulatorConfig(), monkeypatch)
    assert len(result.questions[0].scores["turn_latency"].details["per_turn"]) == 3
    assert result.warnings[-1] == (
        f"{own}: 'user_simulator' is not part of ADK's EvalSet (ADK ignores it); its user_simulator_config is used "
        "for this file's conversation scenarios"
    )


def test_without_credentials_scenarios_are_skipped_and_static_cases_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in NO_KEYS:
        monkeypatch.delenv(key, raising=False)
    path = eval_set(tmp_path, static_case(), scenario())
    result = evaluate(path, UserSimulatorConfig(model="gemini-2.5-flash"), monkeypatch)
    by_id = {q.id: q for q in result.questions}
    reason = (
        "no credentials for the user simulator's model gemini-2.5-flash: set GOOGLE_API_KEY (or GOOGLE_GENAI_USE_VERTEXAI=true "
        "with GOOGLE_CLOUD_PROJECT), or name another model in [user-simulator]"
    )
    skipped = by_id["refund_scenario"]
    assert (skipped.status, skipped.skip_reason, skipped.error) == ("skipped", reason, None)
    assert {s.value for s in skipped.scores.values()} == {None}
    assert skipped.scores["llm_calls"].explanation == f"skipped: {reason}"
    assert result.summary["llm_calls"].unscored_reasons == {f"skipped: {reason}": 1}
    assert by_id["static"].status == "ok" and by_id["static"].scores["tool_trajectory_avg_score"].value == 1.0
    from xml.etree import ElementTree

    from agent_eval_action.models.results import Results
    from agent_eval_action.views.junit import write_junit

    suite = ElementTree.parse(write_junit(Results(datasets=[result]), tmp_path / "junit.xml", {})).getroot()[0]
    # The static run has a case per metric with a pass threshold (recorded in the summary); the scenario one skipped case.
    thresholded = [m for m, s in result.summary.items() if s.pass_threshold is not None and by_id["static"].scores[m].value is not None]
    assert (suite.get("tests"), suite.get("skipped"), suite.get("errors")) == (str(1 + len(thresholded)), "1", "0")
    (case,) = [c for c in suite if c.get("name") == "refund_scenario"]
    assert case[0].tag == "skipped" and case[0].get("message") == reason


WORKER_SCRIPT = """
import asyncio, importlib.abc, json, sys

class NoOurs(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "agent_eval_action":
            raise ImportError("the agent worker may not import agent_eval_action")
        return None

sys.meta_path.insert(0, NoOurs())
import simulated_user  # registers scripted-user in ADK's model registry
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from shop.agent import root_agent
from agent_eval_worker.app_details import AppDetailsRecorder
from agent_eval_worker.scenarios import ScenarioSkipped, run_scenario


async def main():
    service = InMemorySessionService()
    runner = Runner(app_name="shop", agent=root_agent, session_service=service)
    recorder = AppDetailsRecorder()
    recorder.register(runner)
    scenario = json.loads(sys.argv[1])
    done = await run_scenario(runner, service, app_name="shop", user_id="u", scenario=scenario,
                              simulator={"model": "scripted-user", "max_allowed_invocations": 5}, state={"lookups": 1},
                              recorder=recorder)
    try:
        await run_scenario(runner, service, app_name="shop", user_id="u", scenario=scenario, simulator={}, environ={})
    except ScenarioSkipped as skipped:
        reason = skipped.reason
    print(json.dumps({
        "said": [e.content.parts[0].text for e in done.events if e.author == "user"],
        "authors": [e.author for e in done.events],
        "turns": len(done.turn_times), "stop": done.stop, "state": done.final_state, "skipped": reason,
        "sessions_left": len((await service.list_sessions(app_name="shop", user_id="u")).sessions),
        "app_details": [{name: agent["instructions"] for name, agent in (d.get("agent_details") or {}).items()} for d in done.app_details],
    }))

asyncio.run(main())
"""


def test_through_the_agent_workers_own_files(tmp_path: Path) -> None:
    """The worker's files run as ``agent_eval_worker`` on their own, importing nothing of ours."""
    package = tmp_path / "agent_eval_worker"
    package.mkdir()
    for source in (ROOT / "src" / "agent_eval_action" / "agent_worker").glob("*.py"):
        shutil.copy(source, package / source.name)
    (tmp_path / "main.py").write_text(WORKER_SCRIPT)
    env = {k: v for k, v in os.environ.items() if k not in NO_KEYS and k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(APPS)])
    scenario_json = json.dumps({"starting_prompt": "hello", "conversation_plan": PLAN})
    done = subprocess.run(
        [sys.executable, "-P", str(tmp_path / "main.py"), scenario_json], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["said"] == ["hello", "where is my order", "I want a refund"]
    assert out["authors"][:3] == ["user", "shop", "user"] and out["turns"] == 3 and out["stop"] == "stop_signal_detected"
    assert out["state"] == {"lookups": 3, "last_order": "A1", "refund": {"order_id": "A1", "amount": 10}}
    assert out["skipped"].startswith("no credentials for the user simulator's model gemini-2.5-flash")
    assert out["sessions_left"] == 0
    # The agent's instruction as each turn's first model request held it (what ADK's judges read).
    assert len(out["app_details"]) == 3 and all(turn["shop"].startswith("Shop assistant.") for turn in out["app_details"]), out[
        "app_details"
    ]


def test_a_scenario_through_the_agent_worker_process_from_the_command_line(tmp_path: Path) -> None:
    """The default path: the CLI, our worker process under the agent's Python, ADK's simulator there."""
    for name in ("shop", "scenario_shop"):
        shutil.copytree(APPS / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(APPS / "simulated_user.py", tmp_path / "simulated_user.py")
    eval_set(tmp_path, static_case(), scenario())
    (tmp_path / "agent-eval.toml").write_text('agent = "scenario_shop"\n\n[user-simulator]\nmodel = "scripted-user"\n')
    env = {k: v for k, v in os.environ.items() if k not in NO_KEYS and not k.startswith(("GITHUB_", "INPUT_"))}
    done = run_cli(
        ["evaluate", "shop_scenarios.evalset.json", "--workers", "1"], cwd=tmp_path, env={**env, "PYTHONPATH": str(ROOT / "src")}
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (dataset,) = json.loads((tmp_path / "agent-eval-results" / "results.json").read_text())["datasets"]
    by_id = {q["id"]: q for q in dataset["questions"]}
    played = by_id["refund_scenario"]
    assert played["status"] == "ok" and played["scores"]["llm_calls"]["value"] == 7.0
    assert played["scores"]["tool_calls"]["value"] == 3.0
    assert by_id["static"]["scores"]["tool_trajectory_avg_score"]["value"] == 1.0
