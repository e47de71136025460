"""The action's image, built from the Dockerfile and run as the runner runs it.

Needs podman and the local base image that ``scripts/container-test.sh`` prepares; that script
runs this test (``pytest -m container``). Skipped elsewhere.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.fakes.github_server import FakeGitHub
from tests.helpers.drifting import drifting_repo
from tests.helpers.factories import runs, write_dataset
from tests.helpers.repos import commit, git

pytestmark = pytest.mark.container
IMAGE = os.environ.get("AGENT_EVAL_IMAGE", "localhost/agent-eval-action:test")
TOKEN = "ghs_container_secret"


@pytest.fixture(scope="module")
def podman() -> str:
    path = shutil.which("podman")
    if path is None or not os.environ.get("AGENT_EVAL_IMAGE"):
        pytest.skip("run through scripts/container-test.sh (needs podman and the built image)")
    return path


def test_the_image_evaluates_a_pr_against_the_loopback_github(podman: str, tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "config", "user.email", "dev@example.com")
    git(workspace, "config", "user.name", "Dev")
    (workspace / "agent-eval.toml").write_text('datasets = ["evaluation/datasets/*.csv"]\n')
    write_dataset(workspace / "evaluation" / "datasets" / "cs_runs.csv", runs())
    commit(workspace, "datasets")
    baseline = subprocess.run(
        [podman, "run", "--rm", "--network", "host", "-v", f"{workspace}:/github/workspace", "-e", "GITHUB_WORKSPACE=/github/workspace",
         "--entrypoint", "sh", IMAGE, "-c", "cd /github/workspace && python -m agent_eval_action baseline update"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert baseline.returncode == 0, baseline.stdout + baseline.stderr
    commit(workspace, "baselines")
    git(workspace, "checkout", "-q", "-b", "pr")
    write_dataset(workspace / "evaluation" / "datasets" / "cs_runs.csv", runs(broken=set(range(0, 24, 2))))
    git(workspace, "commit", "-qam", "regress")
    files = tmp_path / "file_commands"
    files.mkdir()
    (files / "output").touch()
    (files / "summary").touch()
    workflow = tmp_path / "workflow"
    workflow.mkdir()
    (workflow / "event.json").write_text(json.dumps({"pull_request": {"number": 11, "head": {"sha": "cafef00d"}}}))
    server = FakeGitHub(token=TOKEN)
    env = {
        "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": "/github/workspace", "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": "/github/workflow/event.json", "GITHUB_REPOSITORY": "o/r", "GITHUB_API_URL": server.url,
        "GITHUB_BASE_REF": "main", "GITHUB_OUTPUT": "/github/file_commands/output", "GITHUB_STEP_SUMMARY": "/github/file_commands/summary",
        "INPUT_GITHUB-TOKEN": TOKEN, "INPUT_COMMENT": "true", "INPUT_FAIL-ON-REGRESSION": "true", "INPUT_OUTPUT-DIR": "agent-eval-results",
        "HOME": "/github/home",
    }  # fmt: skip
    args = [podman, "run", "--rm", "--network", "host", "--workdir", "/github/workspace"]
    for host, target in (
        (workspace, "/github/workspace"),
        (files, "/github/file_commands"),
        (workflow, "/github/workflow"),
        (tmp_path, "/github/home"),
    ):
        args += ["-v", f"{host}:{target}"]
    for key, value in env.items():
        args += ["-e", f"{key}={value}"]
    try:
        for _ in range(2):
            done = subprocess.run([*args, IMAGE], capture_output=True, text=True, timeout=600)
            assert done.returncode == 1, done.stdout + done.stderr
        (comment,) = server.on(11)
        assert "## ❌ Agent evaluation failed" in comment["body"]
        assert "passed<<" in (files / "output").read_text() and "false" in (files / "output").read_text()
        assert "Every metric, every dataset" in (files / "summary").read_text()
        assert TOKEN not in (files / "output").read_text() + (files / "summary").read_text() + done.stderr
    finally:
        server.close()


def test_the_image_compares_a_pr_with_the_base_run_now(podman: str, tmp_path: Path) -> None:
    """compare-with = base in the container: the merge-base's agent checked out and run beside the
    PR's, in the image's own Python. The model moved (v1 -> v2) since the baseline; the PR changes
    no agent code: it passes, and the drift is reported apart."""
    workspace = drifting_repo(tmp_path / "workspace")
    (workspace / "README.md").write_text("docs only\n")
    git(workspace, "add", "README.md")
    git(workspace, "commit", "-qm", "docs")
    files = tmp_path / "file_commands"
    files.mkdir()
    (files / "output").touch()
    (files / "summary").touch()
    env = {
        "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": "/github/workspace", "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_REPOSITORY": "o/r", "GITHUB_BASE_REF": "main", "GITHUB_OUTPUT": "/github/file_commands/output",
        "GITHUB_STEP_SUMMARY": "/github/file_commands/summary", "INPUT_COMMENT": "false", "INPUT_COMPARE-WITH": "base",
        "INPUT_OUTPUT-DIR": "agent-eval-results", "MODEL_VERSION": "v2", "HOME": "/github/home",
    }  # fmt: skip
    args = [podman, "run", "--rm", "--network", "host", "--workdir", "/github/workspace"]
    for host, target in ((workspace, "/github/workspace"), (files, "/github/file_commands"), (tmp_path, "/github/home")):
        args += ["-v", f"{host}:{target}"]
    for key, value in env.items():
        args += ["-e", f"{key}={value}"]
    done = subprocess.run([*args, IMAGE], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((workspace / "agent-eval-results" / "results.json").read_text())
    assert results["compare_with"] == "base" and results["gate"]["outcome"] == "passed"
    assert results["base_run"]["commit"] == git(workspace, "rev-parse", "main").strip()
    (line,) = results["drift_notes"]
    assert "answer differently than the stored baseline with the same code" in line
    assert "base re-run:" in (files / "summary").read_text() + done.stdout
