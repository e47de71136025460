"""The fork-safe pair's second half (examples/workflows/agent-eval-fork-comment.yml), run as the
CLI against the loopback GitHub with artifacts a hostile fork wrote."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from tests.fakes.github_server import ACTIONS_BOT, FakeGitHub
from tests.helpers.commands import run_cli

ROOT = Path(__file__).resolve().parents[2]
REPO = "o/r"
SHA = "a" * 40
MARKER = "<!-- agent-eval-action:default -->"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    server = FakeGitHub()
    # The fork's PR #7 is the open one headed by the run's commit; #3 is someone else's PR.
    server.pulls = [
        {"number": 7, "state": "open", "head_sha": SHA, "head_repo": "evil/r"},
        {"number": 2, "state": "closed", "head_sha": SHA, "head_repo": "evil/r"},
    ]
    yield server
    server.close()


def post(github: FakeGitHub, tmp_path: Path, body: str, *, run: Mapping[str, object] | None = None) -> subprocess.CompletedProcess[str]:
    """The workflow_run job: the artifact (comment.md and the pr-number an old artifact carried) as the fork wrote it."""
    (tmp_path / "comment.md").write_text(body, encoding="utf-8")
    (tmp_path / "pr-number").write_text("3\n")
    event = {"workflow_run": run or {"event": "pull_request", "head_sha": SHA, "head_repository": {"full_name": "evil/r"}}}
    (tmp_path / "event.json").write_text(json.dumps(event))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env.update(
        PYTHONPATH=str(ROOT / "src"),
        GITHUB_API_URL=github.url,
        GITHUB_REPOSITORY=REPO,
        GITHUB_TOKEN=github.token,
        GITHUB_EVENT_NAME="workflow_run",
        GITHUB_EVENT_PATH=str(tmp_path / "event.json"),
    )
    return run_cli(["fork-comment", "comment.md"], cwd=tmp_path, env=env)


def test_a_forged_artifact_chooses_neither_the_pr_the_comment_nor_the_marker(github: FakeGitHub, tmp_path: Path) -> None:
    victim = github.add(3, "an unrelated review on PR 3", author="maintainer")
    quoted = github.add(7, f"{MARKER}\nI quote the bot's marker", author="maintainer")
    forged = (
        "<!-- agent-eval-action:release -->\n## ✅ Agent evaluation passed\n"
        f"ping @maintainer\n{MARKER}\n<!-- hidden -->\n<details><summary>more</summary>\n" + "x" * 100 + "\n" * 2000 + "y\n" * 100_000
    )
    done = post(github, tmp_path, forged)
    assert done.returncode == 0, done.stdout + done.stderr
    assert github.comments[victim["id"]]["body"] == "an unrelated review on PR 3"  # pr-number is never read
    assert github.comments[quoted["id"]]["body"] == f"{MARKER}\nI quote the bot's marker"  # not ours to edit
    (ours,) = [c for c in github.on(7) if c["author"] == ACTIONS_BOT]
    body = ours["body"]
    assert body.startswith(MARKER + "\n## ✅") and body.count("agent-eval-action:") == 1
    assert "&lt;!-- hidden -->" in body and "@\u200bmaintainer" in body
    assert len(body) <= 65_000 and "This comment was cut" in body
    # The cut falls before the <details> the notice would hide in.
    assert body.index("This comment was cut") > len(body) - 200 and body.count("<details>") == body.count("</details>")
    assert github.on(3) == [victim] and github.on(2) == []

    again = post(github, tmp_path, "## second run\n")
    assert again.returncode == 0, again.stderr
    assert [c["body"] for c in github.on(7) if c["author"] == ACTIONS_BOT] == [f"{MARKER}\n## second run\n"]


def test_a_run_whose_head_no_open_pr_has_posts_nothing(github: FakeGitHub, tmp_path: Path) -> None:
    run = {"event": "pull_request", "head_sha": "b" * 40, "head_repository": {"full_name": "evil/r"}}
    done = post(github, tmp_path, "## hello\n", run=run)
    assert done.returncode == 0, done.stderr
    assert "nothing posted" in done.stdout and github.comments == {}


def test_a_run_of_another_repository_head_posts_nothing(github: FakeGitHub, tmp_path: Path) -> None:
    run = {"event": "pull_request", "head_sha": SHA, "head_repository": {"full_name": "someone/else"}}
    done = post(github, tmp_path, "## hello\n", run=run)
    assert done.returncode == 0 and github.comments == {}


def test_a_run_of_a_push_is_bad_input(github: FakeGitHub, tmp_path: Path) -> None:
    done = post(github, tmp_path, "## hello\n", run={"event": "push", "head_sha": SHA})
    assert done.returncode == 2 and "not a workflow_run event of a pull_request run" in done.stderr
    assert github.comments == {}


def test_the_action_posts_it_with_the_fork_comment_input(github: FakeGitHub, tmp_path: Path) -> None:
    (tmp_path / "comment.md").write_text("<!-- agent-eval-action:default -->\n## from the fork\n")
    (tmp_path / "event.json").write_text(
        json.dumps({"workflow_run": {"event": "pull_request", "head_sha": SHA, "head_repository": {"full_name": "evil/r"}}})
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env.update(
        {
            "PYTHONPATH": str(ROOT / "src"),
            "GITHUB_WORKSPACE": str(tmp_path),
            "GITHUB_API_URL": github.url,
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_EVENT_NAME": "workflow_run",
            "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
            "INPUT_GITHUB-TOKEN": github.token,
            "INPUT_FORK-COMMENT": "comment.md",
        }
    )
    done = run_cli(["action"], cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [c["body"] for c in github.on(7)] == [f"{MARKER}\n## from the fork\n"]
