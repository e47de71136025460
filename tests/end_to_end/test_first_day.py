"""A real team's first day with its own agent, offline: a fresh repository holding a copy of a
public ADK sample pinned to google-adk 1.x, its own .venv with google-adk 1.39.1, and the tool in
an environment of its own (only its ``agent-eval`` script on PATH, as ``uv tool install`` leaves
it). The README's steps, pasted unchanged, reach a passing baseline and PR; a PR that drops a tool
fails. The model is the loopback Gemini stand-in, reached through google-genai's own
``GOOGLE_GEMINI_BASE_URL``: no credentials, no network but PyPI for the ADK 1.x venv (made once)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.fakes.gemini_server import FakeGemini
from tests.helpers.adk_venvs import ADK_1, adk_venv
from tests.helpers.first_day import AGENT, customer_service_model, questions, sample_repo
from tests.helpers.readme import offline_lines, steps
from tests.helpers.repos import commit, git, stored

ROOT = Path(__file__).resolve().parents[2]


def tool_only_path(tmp_path: Path) -> str:
    """A PATH with the tool's script and the system's commands, none of the tool's Python: as
    after ``uv tool install``, the agent's environment and the tool's never meet."""
    tools = tmp_path / "tool-bin"
    tools.mkdir()
    (tools / "agent-eval").symlink_to(ROOT / ".venv" / "bin" / "agent-eval")
    return os.pathsep.join([str(tools), "/usr/local/bin", "/usr/bin", "/bin"])


def test_a_sample_pinned_to_adk_1_follows_the_readme_to_a_passing_baseline_and_a_failing_pr(tmp_path: Path) -> None:
    venv = adk_venv(ADK_1).parent.parent
    model = FakeGemini(parts=customer_service_model)
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    seed = sample_repo(tmp_path / "seed")
    git(seed, "push", "-q", str(origin), "main")
    git(tmp_path, "clone", "-q", str(origin), "repo")
    repo = tmp_path / "repo"
    git(repo, "config", "user.email", "dev@example.com")
    git(repo, "config", "user.name", "Dev")
    (repo / ".venv").symlink_to(venv)  # the team's own environment (`uv sync`), google-adk 1.x in it

    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GOOGLE_", "INPUT_", "VIRTUAL_ENV", "PYTHON"))}
    env.update(PATH=tool_only_path(tmp_path), GOOGLE_API_KEY="offline", GOOGLE_GEMINI_BASE_URL=model.url)

    def paste(block: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=repo, env=env, capture_output=True, text=True, timeout=600)

    try:
        install, init, validate, baseline, pr = steps()
        assert install.startswith("uv tool install ")  # not run: this checkout is the tool, in its own venv
        started = paste(init)
        assert started.returncode == 0, started.stdout + started.stderr
        # It found the agent and the team's .venv by itself, and said so.
        assert f"found the agent {AGENT}" in started.stdout, started.stdout
        assert "the agent's Python: .venv/bin/python (the repository's .venv, which has google-adk" in started.stderr, started.stderr
        assert "added agent-eval-results/ to .gitignore" in started.stdout
        (drafted,) = (repo / "evaluation" / "datasets").glob("*_golden.json")
        draft = json.loads(drafted.read_text())["golden_questions"]
        assert len(draft) == 6, draft  # a greeting, one question per tool
        # Step 3, by hand: the team writes its questions.
        drafted.write_text(json.dumps(questions(draft[0]["agents_evaluated"][0]), indent=2))

        for block in (validate, baseline, pr):
            done = paste(block)
            assert done.returncode == 0, f"$ {block}{done.stdout}{done.stderr}"
        passed = json.loads((repo / "agent-eval-results" / "results.json").read_text())
        assert passed["gate"]["outcome"] == "passed"
        (written,) = (repo / "evaluation" / "baselines").rglob("*_golden.json")
        recorded = stored(written.read_text())["datasets"][0]["questions"]
        scores = {q["id"]: {m: q["scores"][m]["value"] for m in ("tool_usage_accuracy", "state_management_fidelity")} for q in recorded}
        assert scores == {
            "q_greeting_01": {"tool_usage_accuracy": 1.0, "state_management_fidelity": None},  # no call expected, none made
            "q_cart_01": {"tool_usage_accuracy": 1.0, "state_management_fidelity": None},
            "q_discount_01": {"tool_usage_accuracy": 1.0, "state_management_fidelity": 1.0},
        }, scores
        assert model.clients and all(f"google-adk/{ADK_1}" in client for client in model.clients), set(model.clients)

        # A PR that drops a tool from the agent: the model can no longer call it.
        agent = repo / "customer_service" / "agent.py"
        agent.write_text(agent.read_text().replace("        access_cart_information,\n", "", 1))
        git(repo, "commit", "-qam", "Fewer tools")
        (check,) = [line for line in pr.splitlines() if " check " in line]
        failed = paste(check)
        assert failed.returncode == 1, failed.stdout + failed.stderr
        results = json.loads((repo / "agent-eval-results" / "results.json").read_text())
        assert results["gate"]["outcome"] == "failed"
        assert "q_cart_01" in failed.stdout, failed.stdout
    finally:
        model.close()


def test_the_documented_offline_way_records_once_with_credentials_and_replays_with_none(tmp_path: Path) -> None:
    record, replay = offline_lines()
    assert "GOOGLE_API_KEY=" in record and "GOOGLE_" not in replay
    repo = sample_repo(tmp_path / "repo")
    (repo / ".venv").symlink_to(adk_venv(ADK_1).parent.parent)
    (repo / "agent-eval.toml").write_text(f'datasets = ["evaluation/datasets/*.json"]\nagent = "{AGENT}"\n')
    dataset = repo / "evaluation" / "datasets" / "customer_service_golden.json"
    dataset.parent.mkdir(parents=True)
    dataset.write_text(json.dumps(questions("customer_service_agent")))
    commit(repo, "questions")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GOOGLE_", "INPUT_", "VIRTUAL_ENV", "PYTHON"))}
    env["PATH"] = tool_only_path(tmp_path)

    def paste(line: str, **more: str) -> dict[str, Any]:
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", line], cwd=repo, env={**env, **more}, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, f"$ {line}\n{done.stdout}{done.stderr}"
        results: dict[str, Any] = json.loads((repo / "agent-eval-results" / "results.json").read_text())
        return results

    model = FakeGemini(parts=customer_service_model)
    try:
        # "With credentials": the stand-in takes the key the line gives, where google-genai is told to send it.
        recorded = paste(record, GOOGLE_GEMINI_BASE_URL=model.url)
    finally:
        model.close()
    assert model.prompts and recorded["datasets"][0]["model_calls"] == {"live": len(model.prompts), "replayed": 0}
    replayed = paste(replay)  # no credentials, no model: the stand-in is gone
    assert replayed["datasets"][0]["model_calls"] == {"live": 0, "replayed": len(model.prompts)}

    def scores(results: dict[str, Any]) -> dict[str, Any]:
        summary = results["datasets"][0]["summary"]
        timings = {m for m, s in summary.items() if s.get("unit") == "seconds"}  # the clock's, not the model's
        assert "latency" in timings
        return {q["id"]: {m: s["value"] for m, s in q["scores"].items() if m not in timings} for q in results["datasets"][0]["questions"]}

    assert scores(replayed) == scores(recorded)
    assert scores(replayed)["q_discount_01"]["state_management_fidelity"] == 1.0
