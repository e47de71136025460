"""Runs under a model API quota: a loopback Gemini that takes so many requests a "minute" (a
short one, named to the pacer through AGENT_EVAL_QUOTA_MINUTE_S) and answers 429
RESOURCE_EXHAUSTED with RetryInfo beyond it; the real ADK ``Gemini`` model in the agent's worker
processes and the real google-genai client in the judges."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.gemini_server import FakeGemini
from tests.helpers.commands import cli

ROOT = Path(__file__).resolve().parents[2]
MINUTE_S = 2.0
RPM = 30
QUESTIONS = 60  # two turns each: 120 calls, four of the stand-in's minutes at least
JUDGE = json.dumps({"score": 4, "explanation": "mostly right"})


def _reply(prompt: str) -> str:
    return JUDGE if "Expected response" in prompt else "Fine, thanks."


@pytest.fixture
def quota() -> Iterator[FakeGemini]:
    server = FakeGemini(reply=_reply, latency_s=0.01, rpm=RPM, minute_s=MINUTE_S)
    yield server
    server.close()


def _folder(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "tests" / "apps" / "rate_limited", tmp_path / "rate_limited", ignore=shutil.ignore_patterns("__pycache__"))
    questions = [
        {
            "id": f"q{i:03d}",
            "user_inputs": [f"hello {i}", f"and again {i}"],
            "agents_evaluated": ["rate_limited"],
            "reference_data": {"reference_response": "Fine, thanks."},
        }
        for i in range(QUESTIONS)
    ]
    (tmp_path / "many.json").write_text(json.dumps({"golden_questions": questions}))
    return tmp_path


def _evaluate(folder: Path, server: FakeGemini, *args: str, judge: bool = False) -> dict[str, Any]:
    env = {
        "FAKE_GEMINI_URL": server.url,
        "GOOGLE_API_KEY": "loopback-key",
        "GOOGLE_GENAI_USE_VERTEXAI": "false",
        "AGENT_EVAL_QUOTA_MINUTE_S": str(MINUTE_S),
    }
    if judge:
        (folder / "agent-eval.toml").write_text('[judges.response_correctness]\n[judge]\ncache-dir = ""\n')
        env["AGENT_EVAL_JUDGE_BASE_URL"] = server.url  # the same model, the same key: the same quota
    done = cli(folder, "evaluate", "many.json", "--agent", "rate_limited.agent:root_agent", "--output-dir", "out", *args, env=env)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    return dict(json.loads((folder / "out" / "results.json").read_text()))


def _turns_asked(server: FakeGemini) -> list[str]:
    """Every agent request the API answered, by the user turns it carried."""
    return [prompt for prompt in server.prompts if "Expected response" not in prompt]


def _no_turn_replayed(server: FakeGemini) -> None:
    asked = _turns_asked(server)
    assert len(asked) == 2 * QUESTIONS, "a question was run again from its first turn"
    assert len(set(asked)) == len(asked)


def test_a_learnt_quota_loses_no_question_and_replays_no_turn(tmp_path: Path, quota: FakeGemini) -> None:
    results = _evaluate(_folder(tmp_path), quota, "--concurrency", "8")
    questions = results["datasets"][0]["questions"]
    assert [q["status"] for q in questions] == ["ok"] * QUESTIONS
    _no_turn_replayed(quota)  # each throttled call was asked again inside its turn
    assert quota.over_quota > 0, "the quota was never reached: nothing was tested"
    # Past the first burst (the 8 in flight when the quota first filled), the rate was learnt and kept to.
    assert quota.throttled <= 0.1 * quota.requests, (quota.throttled, quota.requests)
    run = results["run"]
    assert run["throttled"] == quota.throttled  # every 429 was heard by the pacing, none by the question
    assert "gemini-2.5-flash: " in run["paced"] and "(learnt from 429s)" in run["paced"]


def test_a_known_quota_is_kept_to_from_the_first_call(tmp_path: Path, quota: FakeGemini) -> None:
    results = _evaluate(_folder(tmp_path), quota, "--quota", f"gemini-2.5-flash={RPM}rpm")
    assert [q["status"] for q in results["datasets"][0]["questions"]] == ["ok"] * QUESTIONS
    _no_turn_replayed(quota)
    assert quota.throttled <= 0.1 * quota.requests, (quota.throttled, quota.requests)
    assert results["run"]["paced"] == f"gemini-2.5-flash: {RPM} requests/min"


def test_the_judges_share_the_agents_quota(tmp_path: Path, quota: FakeGemini) -> None:
    results = _evaluate(_folder(tmp_path), quota, "--quota", f"gemini-2.5-flash={RPM}rpm", judge=True)
    dataset = results["datasets"][0]
    assert [q["status"] for q in dataset["questions"]] == ["ok"] * QUESTIONS
    summary = dataset["summary"]["response_correctness"]
    assert summary["n"] == QUESTIONS and summary["unscored"] == 0  # no judge call was lost to the quota
    assert dataset["judge_usage"]["calls"] == QUESTIONS and dataset["judge_usage"]["failed"] == 0
    _no_turn_replayed(quota)
    # The judges began inside the agent's last minute: alone, they would have filled it again at once.
    assert len(quota.prompts) == 3 * QUESTIONS
    assert quota.throttled <= 0.1 * quota.requests, (quota.throttled, quota.requests)
