"""The model-call cache with ``AgentTool`` sub-agents, which ADK runs in a ``Runner`` of their own
(``tests/apps/advisor``), against the loopback Gemini stand-in reached through google-genai's
``GOOGLE_GEMINI_BASE_URL``: the requests are counted where they arrive, at the endpoint."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.apps.advisor.agent import model
from tests.fakes.gemini_server import FakeGemini
from tests.helpers.commands import run_cli

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = 4
CALLS = 5  # per question: the advisor three times (researcher, writer, answer), each sub-agent once


def advisor_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    shutil.copytree(ROOT / "tests" / "apps" / "advisor", path / "advisor", ignore=shutil.ignore_patterns("__pycache__"))
    golden = [
        {
            "id": f"q{i}",
            "user_inputs": [f"should I buy share {i}?"],
            "agents_evaluated": ["advisor"],
            "reference_data": {"reference_tool_interactions": [{"tool_name": "researcher"}, {"tool_name": "writer"}]},
        }
        for i in range(QUESTIONS)
    ]
    (path / "questions.json").write_text(json.dumps({"golden_questions": golden}, indent=1))
    return path


def evaluate(repo: Path, out: str, endpoint: FakeGemini, key: str | None, *flags: str) -> tuple[int, str, dict[str, Any]]:
    """``evaluate`` with the cache; returns the requests the endpoint received, what the tool printed, the dataset."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_"))}
    env.update(PYTHONPATH=str(ROOT / "src"), GOOGLE_GEMINI_BASE_URL=endpoint.url)
    if key is not None:
        env["GOOGLE_API_KEY"] = key
    before = endpoint.requests
    args = ("evaluate", "questions.json", "--agent", "advisor", "--model-cache", ".cache/models", "--output-dir", out, *flags)
    done = run_cli(args, cwd=repo, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    (dataset,) = json.loads((repo / out / "results.json").read_text())["datasets"]
    return endpoint.requests - before, done.stdout + done.stderr, dataset


@pytest.mark.parametrize("flags", [(), ("--no-warm-start",)], ids=["forked-workers", "spawned-workers"])
def test_a_second_run_asks_the_endpoint_nothing_agent_tools_included_and_says_so(tmp_path: Path, flags: tuple[str, ...]) -> None:
    """Spawned workers too: the agent names its model by a string, so ADK imports ``Gemini`` while
    the first questions run (a zygote imported it before forking): its calls were neither counted
    nor cached nor paced until the door was put on each model class as it is defined."""
    repo = advisor_repo(tmp_path / "repo")
    endpoint = FakeGemini(parts=model)
    try:
        requests, printed, first = evaluate(repo, "first", endpoint, "k", *flags)
        assert requests == QUESTIONS * CALLS
        assert f"model calls: {requests} to the model, 0 replayed from the cache" in printed, printed
        assert first["model_calls"] == {"live": requests, "replayed": 0}
        assert all(q["status"] == "ok" and q["scores"]["tool_usage_accuracy"]["value"] == 1.0 for q in first["questions"]), first
        # llm_calls counts each question's calls as the endpoint did, the sub-agents' too (their
        # calls are in sessions of their own, shown only by the spans): it counted 3 of 5.
        assert [q["scores"]["llm_calls"]["value"] for q in first["questions"]] == [float(CALLS)] * QUESTIONS

        requests, printed, second = evaluate(repo, "second", endpoint, "k", *flags)
        assert requests == 0  # the sub-agents' requests replayed too
        assert f"model calls: 0 to the model, {QUESTIONS * CALLS} replayed from the cache" in printed, printed
        assert second["model_calls"] == {"live": 0, "replayed": QUESTIONS * CALLS}

        # The README's offline recipe: no API key at all, everything from the cache.
        requests, printed, offline = evaluate(repo, "offline", endpoint, None, *flags)
        assert requests == 0
        assert all(q["status"] == "ok" for q in offline["questions"]), offline
        assert [q["scores"]["tool_usage_accuracy"]["value"] for q in offline["questions"]] == [1.0] * QUESTIONS
    finally:
        endpoint.close()
