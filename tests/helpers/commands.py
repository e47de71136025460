"""The command line and the action's entrypoint run as subprocesses, as a user and the runner start them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.fakes.github_server import FakeGitHub
from tests.helpers.repos import ROOT


def cli(repo: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **(env or {})}
    full.pop("GITHUB_BASE_REF", None)
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "agent_eval_action", *args], cwd=repo, env=full, capture_output=True, text=True, timeout=180
    )


TOKEN = "ghs_action_secret_42"


def action(workspace: Path, env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    full.update({"PYTHONPATH": str(ROOT / "src"), "HOME": str(workspace.parent / "home"), **env})
    (workspace.parent / "home").mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "agent_eval_action", "action"],
        cwd=cwd or workspace.parent,
        env=full,
        capture_output=True,
        text=True,
        timeout=300,
    )


def base_env(tmp_path: Path, workspace: Path, event: dict, name: str, server: FakeGitHub | None = None) -> dict[str, str]:
    (tmp_path / "event.json").write_text(json.dumps(event))
    # The runner's temp dir, per test: the install input makes its venv there, and runs that
    # overlap (xdist workers, other checkouts) must not clear each other's in the shared /tmp.
    (tmp_path / "runner-temp").mkdir(exist_ok=True)
    return {
        "RUNNER_TEMP": str(tmp_path / "runner-temp"),
        "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(workspace), "GITHUB_EVENT_NAME": name, "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
        "GITHUB_REPOSITORY": "o/r", "GITHUB_API_URL": server.url if server else "http://127.0.0.1:9", "GITHUB_RUN_ID": "77",
        "GITHUB_OUTPUT": str(tmp_path / "output"), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"), "INPUT_GITHUB-TOKEN": TOKEN,
        "INPUT_COMMENT": "true", "INPUT_FAIL-ON-REGRESSION": "true", "INPUT_UPDATE-BASELINE": "true", "INPUT_OUTPUT-DIR": "agent-eval-results",
    }  # fmt: skip


def calls(repo: Path, *args: str, cwd: Path | None = None) -> int:
    """Runs the CLI (exit 0) and returns how many model calls it made."""
    counter = repo / "calls.txt"
    counter.write_text("")
    done = cli(cwd or repo, *args, env={"CALLS_FILE": str(counter)})
    assert done.returncode == 0, done.stdout + done.stderr
    return len(counter.read_text().splitlines())
