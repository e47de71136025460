"""Outages by where they were raised, never by their text, through `check` on a real ADK agent
(ADK's ``Gemini`` model, the real google-genai client and its httpx transport) against a loopback
Gemini API that misbehaves on a seeded schedule (tests/fakes/gemini_server.py).

A clean baseline first; then an unchanged PR checked with every question run again. A fault of
the model call (a stall past --timeout, a body cut short, a JSON reply cut short, a 503) is the
API's: retried, and the gate passes. A tool's own "Connection refused" is the PR's, whatever its
text. A worker killed from outside with one question in flight is run again."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.gemini_server import FakeGemini
from tests.helpers.commands import run_cli
from tests.helpers.repos import commit, git, new_repo

ROOT = Path(__file__).resolve().parents[2]
ITEMS = ("apple", "pear", "plum", "apple", "pear", "plum")


def _parts(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The agent's model: looks the item up, then says its price (from the tool's answer)."""
    last = body["contents"][-1]["parts"]
    answer = next((p["functionResponse"]["response"] for p in last if "functionResponse" in p), None)
    if answer is None:
        item = "".join(p.get("text", "") for p in last).split()[-1]
        return [{"functionCall": {"name": "lookup", "args": {"item": item}}}]
    price = answer.get("price", answer.get("result", {}).get("price") if isinstance(answer.get("result"), dict) else None)
    return [{"text": f"It costs {price}."}]


@pytest.fixture
def gemini() -> Any:
    server = FakeGemini(parts=_parts)
    yield server
    server.close()


def _cli(repo: Path, server: FakeGemini, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "FAULTY_"))}
    full.update(
        {
            "PYTHONPATH": str(ROOT / "src"),
            "FAKE_GEMINI_URL": server.url,
            "GOOGLE_API_KEY": "loopback-key",
            "GOOGLE_GENAI_USE_VERTEXAI": "false",
            **(env or {}),
        }
    )
    return run_cli(args, cwd=repo, env=full)


def _record(tmp_path: Path, server: FakeGemini) -> Path:
    """A repository whose baseline was recorded against a well-behaved API, on branch pr, unchanged."""
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copytree(ROOT / "tests" / "apps" / "faulty", repo / "faulty", ignore=shutil.ignore_patterns("__pycache__"))
    (repo / "agent-eval.toml").write_text(
        'datasets = ["evaluation/datasets/*.json"]\nagent = "faulty.agent:root_agent"\nbaseline-runs = 2\n'
    )
    (repo / ".gitignore").write_text("agent-eval-results/\n__pycache__/\n")
    questions = [
        {
            "id": f"q{i}",
            "user_inputs": [f"price of {item}"],
            "agents_evaluated": ["faulty"],
            "reference_data": {
                "reference_tool_interactions": [{"tool_name": "lookup", "input_arguments": {"item": item}}],
                "reference_response": f"It costs {i % 3 + 1}.",
            },
        }
        for i, item in enumerate(ITEMS)
    ]
    (repo / "evaluation" / "datasets").mkdir(parents=True)
    (repo / "evaluation" / "datasets" / "prices.json").write_text(json.dumps({"golden_questions": questions}))
    new_repo(repo)
    commit(repo, "agent and dataset")
    update = _cli(repo, server, "baseline", "update")
    assert update.returncode == 0, update.stdout + update.stderr
    commit(repo, "baseline")
    git(repo, "checkout", "-q", "-b", "pr")
    return repo


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The baselined repository, recorded once for the module against an API of its own."""
    server = FakeGemini(parts=_parts)
    try:
        return _record(tmp_path_factory.mktemp("recorded"), server)
    finally:
        server.close()


@pytest.fixture
def repo(tmp_path: Path, recorded: Path) -> Path:
    """A copy of the baselined repository for one test (each test's checks change its files)."""
    return Path(shutil.copytree(recorded, tmp_path / "repo", symlinks=True))


def _check(repo: Path, server: FakeGemini, *args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any], str]:
    done = _cli(repo, server, "check", "--base", "main", "--all", "--no-reuse", "--no-comment", *args, env=env)
    results = json.loads((repo / "agent-eval-results" / "results.json").read_text())
    return done.returncode, results, done.stdout + done.stderr


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed when the block ends: nothing listens there


def test_a_tools_connection_refused_is_the_prs_error(repo: Path, gemini: FakeGemini) -> None:
    """Before: "the model API could not be reached: not counted", gate passed, exit 0."""
    code, results, output = _check(repo, gemini, env={"FAULTY_TOOL_URL": f"http://127.0.0.1:{_closed_port()}/price"})
    assert code == 1, output
    questions = results["datasets"][0]["questions"]
    errors = [q for q in questions if q["status"] == "error"]
    assert errors and all("Connection refused" in q["error"] for q in errors)
    assert {q["error_origin"] for q in errors} == {"agent"}
    assert results["gate"]["outcome"] == "failed"
    assert "could not reach the model" not in output and "not counted" not in output


@pytest.mark.parametrize(
    ("faults", "extra"),
    [
        ({"cut": 0.1}, ()),
        ({"json": 0.1}, ()),
        ({"503": 0.1}, ()),
        # A time limit no run reaches on a busy machine (the base's runs take 2-4 s at most), and stalls far past it.
        ({"stall": 0.08}, ("--timeout", "12")),
        ({"retry_info": 0.1}, ("--timeout", "20")),
    ],
    ids=["body-cut-short", "json-cut-short", "503", "stall-past-timeout", "429-retry-info"],
)
def test_model_call_faults_on_an_unchanged_pr_are_retried_and_pass(
    repo: Path, gemini: FakeGemini, faults: dict[str, float], extra: tuple[str, ...]
) -> None:
    """Before: none of these (but the 503) was retried or an outage, and a 429's RetryInfo taught
    the pacing a rate of a few requests a minute for good: exit 1 on an unchanged PR."""
    gemini.faults, gemini.stall_s = faults, 30.0
    code, results, output = _check(repo, gemini, "--runs", "3", *extra)
    assert sum(gemini.faulted.values()) > 0, f"no fault was made in {gemini.requests} requests: nothing was tested\n{output}"
    assert code == 0, output
    questions = results["datasets"][0]["questions"]
    assert [q["status"] for q in questions] == ["ok"] * (3 * len(ITEMS)), [q.get("error") for q in questions]
    assert results["gate"]["outcome"] == "passed"


def test_a_worker_killed_from_outside_with_one_question_in_flight_is_run_again(tmp_path: Path, repo: Path, gemini: FakeGemini) -> None:
    """Before: "1 question ended in an error … killed by signal SIGKILL", exit 1."""
    pid_file = tmp_path / "pid"
    killed: list[int] = []

    def kill_once(body: dict[str, Any]) -> None:
        # The model's second call of the first question (after its tool ran): its worker is killed
        # while it waits for this reply, with nothing else in flight (--concurrency 1).
        answered = any("functionResponse" in p for c in body["contents"] for p in c["parts"])
        if answered and not killed and pid_file.exists():
            killed.append(int(pid_file.read_text()))
            os.kill(killed[0], signal.SIGKILL)

    gemini.on_request = kill_once
    code, results, output = _check(repo, gemini, "--concurrency", "1", env={"FAULTY_PID_FILE": str(pid_file)})
    assert killed, "no worker was killed: nothing was tested"
    assert code == 0, output
    questions = results["datasets"][0]["questions"]
    assert [q["status"] for q in questions] == ["ok"] * len(ITEMS), [q.get("error") for q in questions]


def test_a_total_outage_is_recognised_within_a_few_calls(repo: Path, gemini: FakeGemini) -> None:
    """Every model call answered 503: before, each question was tried 4-19 times before "could not be checked"."""
    gemini.faults = {"503": 1.0}
    before = gemini.requests
    code, results, output = _check(repo, gemini, "--runs", "3", "--concurrency", "2")
    asked = gemini.requests - before
    assert code == 3, output
    assert results["gate"]["outcome"] == "unchecked" and results["gate"]["infrastructure"], results["gate"]
    questions = results["datasets"][0]["questions"]
    assert {q["error_origin"] for q in questions} == {"model"}
    # 18 question runs: before, 72 calls (each run tried 4 times); now the first attempts trip
    # the breaker (28 calls measured: six attempts of 4 calls each, and those in flight).
    assert asked <= 40, asked
