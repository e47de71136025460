"""LLM judges through the real google-genai client, pointed at a loopback Gemini API."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_eval_action.config import Config, load_config
from agent_eval_action.datasets import Record
from agent_eval_action.models.questions import Question, ReferenceData
from agent_eval_action.models.scores import Score
from agent_eval_action.models.traces import Trace
from agent_eval_action.run.judges.client import NO_CREDENTIALS, JudgeClient, judge_from_env
from agent_eval_action.run.judges.engine import JudgeEngine, JudgeMetric, JudgeSettings
from agent_eval_action.run.judges.setup import judge_metrics
from agent_eval_action.system.errors import ConfigError
from tests.fakes.gemini_server import FakeGemini
from tests.fakes.vertex_server import FakeVertex
from tests.helpers.commands import run_cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "customer_service"


@pytest.fixture
def gemini() -> Iterator[FakeGemini]:
    server = FakeGemini()
    yield server
    server.close()


def client_for(server: FakeGemini) -> JudgeClient | None:
    return judge_from_env({"GOOGLE_API_KEY": "k", "AGENT_EVAL_JUDGE_BASE_URL": server.url})


def records(n: int = 3) -> list[Record]:
    return [
        Record(
            question=Question(
                id=f"q{i}",
                user_inputs=["What's in my cart?"],
                agents_evaluated=["cs"],
                reference_data=ReferenceData(reference_response=f"Two bags of soil #{i}.", custom={"policy": "cap 10%"}),
            ),
            trace=Trace(final_response="You have two bags."),
        )
        for i in range(n)
    ]


def run(engine: JudgeEngine, items: list[Record]) -> dict[tuple[str, int], dict[str, Score]]:
    return asyncio.run(engine.score(items))


def builtin(**kwargs: object) -> list[JudgeMetric]:
    return judge_metrics(Config.model_validate({"judges": {"response_correctness": {}}, **kwargs}))


def test_reference_reaches_the_prompt_and_scores_normalize(gemini: FakeGemini) -> None:
    gemini.reply = lambda prompt: json.dumps({"score": 5, "explanation": "matches the reference"})
    engine = JudgeEngine(builtin(), JudgeSettings(), client_for(gemini))
    scores = run(engine, records())
    assert scores[("q1", 0)]["response_correctness"].value == 1.0
    details = scores[("q1", 0)]["response_correctness"].details
    assert details["raw_score"] == 5 and details["range"] == [1.0, 5.0]
    assert any("Expected response: Two bags of soil #1." in p and "cap 10%" in p for p in gemini.prompts)
    assert set(gemini.models) == {"gemini-2.5-flash"}
    assert engine.usage.calls == 3 and engine.usage.input_tokens > 0 and engine.usage.cost_usd > 0


def test_malformed_out_of_range_and_429_then_success(gemini: FakeGemini) -> None:
    answers = iter(["not json at all", json.dumps({"score": 9, "explanation": "x"}), json.dumps({"score": 2, "explanation": "weak"})])
    gemini.reply = lambda prompt: next(answers)
    engine = JudgeEngine(builtin(), JudgeSettings(concurrency=1, backoff_initial_s=0.01), client_for(gemini))
    scores = run(engine, records())
    values = [scores[(f"q{i}", 0)]["response_correctness"] for i in range(3)]
    assert values[0].value is None and "not JSON" in values[0].explanation
    assert values[1].value is None and "outside 1..5" in values[1].explanation
    assert values[2].value == 0.25
    gemini.failures = [429, 429]
    gemini.reply = lambda prompt: json.dumps({"score": 3, "explanation": "ok"})
    (score,) = run(JudgeEngine(builtin(), JudgeSettings(backoff_initial_s=0.01), client_for(gemini)), records(1)).values()
    assert score["response_correctness"].value == 0.5


def test_api_error_after_retries_is_unscored_never_zero(gemini: FakeGemini) -> None:
    gemini.failures = [503] * 10
    engine = JudgeEngine(builtin(), JudgeSettings(retries=1, backoff_initial_s=0.01), client_for(gemini))
    (score,) = run(engine, records(1)).values()
    assert score["response_correctness"].value is None and "judge call failed" in score["response_correctness"].explanation
    assert engine.usage.failed == 1


def test_samples_take_the_median_and_the_cache_saves_calls(gemini: FakeGemini, tmp_path: Path) -> None:
    seen: dict[str, int] = {}

    def reply(prompt: str) -> str:
        seen[prompt] = seen.get(prompt, 0) + 1
        return json.dumps({"score": [1, 5, 3][(seen[prompt] - 1) % 3], "explanation": f"sample {seen[prompt]}"})

    gemini.reply = reply
    settings = JudgeSettings(cache_dir=tmp_path / "cache", concurrency=1)
    engine = JudgeEngine(builtin(judge={"samples": 3}), settings, client_for(gemini))
    (score,) = run(engine, records(1)).values()
    assert score["response_correctness"].value == 0.5 and sorted(score["response_correctness"].details["samples"]) == [1, 3, 5]
    again = JudgeEngine(builtin(judge={"samples": 3}), settings, client_for(gemini))
    (cached,) = run(again, records(1)).values()
    assert cached == score and again.usage.calls == 0 and again.usage.cached == 3


def test_no_credentials_means_skipped_with_the_reason() -> None:
    assert judge_from_env({}) is None
    assert judge_from_env({"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_CLOUD_PROJECT": "p"}) is None  # no ADC probing
    (score,) = run(JudgeEngine(builtin(), JudgeSettings(), None), records(1)).values()
    assert score["response_correctness"].value is None and score["response_correctness"].explanation == NO_CREDENTIALS


@pytest.mark.usefixtures("in_tmp")  # the definitions file is an input: it must lie inside the working directory
def test_metric_definitions_of_the_seed_pipeline(tmp_path: Path, gemini: FakeGemini) -> None:
    definitions = tmp_path / "metric_definitions.json"
    definitions.write_text(json.dumps({
        "metrics": {
            "tone": {"metric_type": "llm", "is_managed": False, "agents": ["cs"], "score_range": {"min": 0, "max": 10},
                     "template": "Rate the tone of {response} to {prompt}. JSON please.",
                     "dataset_mapping": {"response": {"source_column": "final_response"}, "prompt": {"source_column": "user_inputs"}}},
            "other_agent": {"agents": ["billing"], "template": "{response}"},
        }
    }))  # fmt: skip
    config = load_config(None, tmp_path).with_overrides(metric_definitions=[str(definitions)])
    metrics = judge_metrics(config)
    assert [m.name for m in metrics] == ["tone", "other_agent"] and metrics[0].high == 10
    gemini.reply = lambda prompt: json.dumps({"score": 7, "explanation": "polite"})
    (scores,) = run(JudgeEngine(metrics, JudgeSettings(), client_for(gemini)), records(1)).values()
    assert scores["tone"].value == 0.7 and "other_agent" not in scores  # agents filter
    prompt = gemini.prompts[0]
    assert prompt.startswith("Rate the tone of You have two bags. to What's in my cart?")
    assert "Expected response: Two bags of soil #0." in prompt  # the reference always reaches the judge
    managed = tmp_path / "managed.json"
    managed.write_text(json.dumps([{"name": "safety", "is_managed": True, "managed_metric_name": "safety", "template": "x"}]))
    (metric,) = judge_metrics(config.with_overrides(metric_definitions=[str(managed)]))
    assert metric.managed == "safety_v3"  # the latest spec of the managed metric


def test_managed_metrics_through_the_aiplatform_client_on_loopback(tmp_path: Path) -> None:
    from google.genai import types
    from google.oauth2.credentials import Credentials

    from agent_eval_action.run.judges.managed import ManagedJudge, managed_from_env, vertex_client

    server = FakeVertex()
    try:
        client = vertex_client(
            "proj", "us-central1", credentials=Credentials(token="test-token"), http_options=types.HttpOptions(base_url=server.url)
        )
        config = load_config(None, tmp_path).with_overrides(managed_metrics=["general_quality", "safety"])
        metrics = judge_metrics(config)
        assert [m.managed for m in metrics] == ["general_quality_v2", "safety_v3"]
        server.failures = [503]
        engine = JudgeEngine(metrics, JudgeSettings(backoff_initial_s=0.01, cache_dir=tmp_path / "cache"), None, ManagedJudge(client))
        (scores,) = run(engine, records(1)).values()
        assert scores["general_quality"].value == 0.75 and scores["general_quality"].explanation == "general_quality_v2 ok"
        assert scores["safety"].value == 1.0
        sent = server.bodies[0]
        assert sent["path"] == "/v1beta1/projects/proj/locations/us-central1/:evaluateInstances" and sent["auth"] == "Bearer test-token"
        assert sent["instance"] == {"prompt": {"text": "What's in my cart?"}, "response": {"text": "You have two bags."}}
        again = JudgeEngine(metrics, JudgeSettings(cache_dir=tmp_path / "cache"), None, ManagedJudge(client))
        assert run(again, records(1)) == run(engine, records(1)) and again.usage.calls == 0
    finally:
        server.httpd.shutdown()
    assert managed_from_env({"GOOGLE_CLOUD_PROJECT": "p"}) is None
    (skipped,) = run(JudgeEngine(metrics, JudgeSettings(), None, None), records(1)).values()
    assert skipped["safety"].value is None and "GOOGLE_APPLICATION_CREDENTIALS" in skipped["safety"].explanation
    with pytest.raises(ConfigError, match="not a Vertex AI predefined metric"):
        judge_metrics(config.with_overrides(managed_metrics=["vibes"]))


def test_cli_mixes_deterministic_and_judge_metrics(gemini: FakeGemini, tmp_path: Path) -> None:
    (tmp_path / "agent-eval.toml").write_text('[judges.response_correctness]\n[judge]\ncache-dir = ""\n')
    gemini.reply = lambda prompt: json.dumps({"score": 4 if "Expected response: (none given)" in prompt else 5, "explanation": "fine"})
    env = {k: v for k, v in os.environ.items() if k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY")}
    env |= {"AGENT_EVAL_JUDGE_API_KEY": "k", "AGENT_EVAL_JUDGE_BASE_URL": gemini.url}  # the agent itself stays scripted
    dataset = Path(shutil.copy(EXAMPLE / "evaluation" / "datasets" / "customer_service_golden.json", tmp_path))  # inside the cwd
    done = run_cli(["run", "--datasets", str(dataset), "--agent", "customer_service", "--output-dir", str(tmp_path / "out"), "--no-comment"], cwd=tmp_path, env={**env, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(EXAMPLE)])})  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads((tmp_path / "out" / "results.json").read_text())["datasets"][0]
    assert result["summary"]["response_correctness"]["n"] == 8 and result["summary"]["tool_usage_accuracy"]["n"] == 8
    assert result["judge_usage"]["calls"] == 8 and result["judge_usage"]["input_tokens"] > 0
    comment = (tmp_path / "out" / "comment.md").read_text()
    assert "response\\_correctness" in comment
    without = run_cli(["run", "--datasets", str(dataset), "--agent", "customer_service", "--output-dir", str(tmp_path / "nokey"), "--no-comment"], cwd=tmp_path, env={k: v for k, v in env.items() if k != "AGENT_EVAL_JUDGE_API_KEY"} | {"PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(EXAMPLE)])})  # fmt: skip
    assert without.returncode == 0, without.stderr
    summary = json.loads((tmp_path / "nokey" / "results.json").read_text())["datasets"][0]["summary"]
    assert summary["response_correctness"]["n"] == 0 and summary["response_correctness"]["unscored_reasons"] == {NO_CREDENTIALS: 8}
    assert summary["tool_usage_accuracy"]["n"] == 8


def test_a_managed_metric_without_the_vertex_extra_is_bad_config_naming_the_extra(tmp_path: Path) -> None:
    """The core install leaves the Vertex AI SDK out: the command line, in a process where
    ``vertexai`` cannot be imported, says which extra to install, and nothing else needs it."""
    (tmp_path / "agent-eval.toml").write_text('managed-metrics = ["general_quality"]\n')
    dataset = ROOT / "examples" / "recorded" / "customer_service_runs.csv"
    without = "import sys; sys.modules['vertexai'] = None; from agent_eval_action.cli.main import main; raise SystemExit(main())"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GITHUB_", "INPUT_"))}
    env["PYTHONPATH"] = str(ROOT / "src")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", without, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)

    done = cli("evaluate", str(dataset), "--output-dir", "out")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "managed metric 'general_quality'" in done.stderr and 'pip install "agent-eval-action[vertex]"' in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    (tmp_path / "agent-eval.toml").write_text("")
    plain = cli("evaluate", str(dataset), "--output-dir", "out")
    assert plain.returncode == 0, plain.stdout + plain.stderr  # no managed metric: the SDK is never asked for
