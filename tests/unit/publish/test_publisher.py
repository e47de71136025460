"""What publish/publisher.py reads from the runner (GITHUB_* variables, the event payload) and the
fork PR's comment posted from a ``workflow_run`` job, against the loopback fake of GitHub."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_eval_action.publish.github import ACTIONS_BOT, GitHubClient
from agent_eval_action.publish.publisher import GitHubContext, post_fork_comment, read_event
from agent_eval_action.system.errors import ConfigError
from tests.fakes.github_server import FakeGitHub

TOKEN = "ghs_unit_token_8"
SHA = "c" * 40
MARKER = "<!-- agent-eval-action:default -->"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    server = FakeGitHub(token=TOKEN)
    yield server
    server.close()


@pytest.fixture
def client(github: FakeGitHub) -> GitHubClient:
    return GitHubClient(github.url, TOKEN, sleep=lambda _: None)


def workflow_run(head_repository: str = "fork/r") -> dict[str, object]:
    return {"workflow_run": {"event": "pull_request", "head_sha": SHA, "head_repository": {"full_name": head_repository}}}


def test_the_context_of_a_pull_request_event(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 12, "head": {"sha": SHA}}, "repository": {"default_branch": "trunk"}}))
    env = {
        "GITHUB_ACTIONS": "true", "GITHUB_EVENT_PATH": str(event), "GITHUB_EVENT_NAME": "pull_request", "GITHUB_REPOSITORY": "o/r",
        "GITHUB_RUN_ID": "99", "GITHUB_API_URL": "http://127.0.0.1:1", "GITHUB_OUTPUT": "/out", "GITHUB_STEP_SUMMARY": "/sum",
        "INPUT_GITHUB-TOKEN": "from-input", "GITHUB_SHA": "d" * 40,
    }  # fmt: skip
    context = GitHubContext.from_env(env)
    assert context == GitHubContext(
        in_actions=True,
        api_url="http://127.0.0.1:1",
        repository="o/r",
        event_name="pull_request",
        pr_number=12,
        sha=SHA,  # the PR's head, not the merge commit GITHUB_SHA names
        run_url="https://github.com/o/r/actions/runs/99",
        token="from-input",
        output_path="/out",
        summary_path="/sum",
        default_branch="trunk",
    )
    assert "from-input" not in repr(context)
    assert GitHubContext.from_env({**env, "GITHUB_TOKEN": "from-env"}).token == "from-env"
    assert GitHubContext.from_env(env, token="given").token == "given"


def test_outside_actions_every_field_has_its_default() -> None:
    assert GitHubContext.from_env({}) == GitHubContext()
    assert GitHubContext().api_url == "https://api.github.com"


@pytest.mark.parametrize("content", ["not json {", "[1, 2]", ""])
def test_an_unreadable_or_odd_event_payload_is_an_empty_event(tmp_path: Path, content: str) -> None:
    event = tmp_path / "event.json"
    event.write_text(content)
    assert read_event({"GITHUB_EVENT_PATH": str(event)}) == {}
    assert read_event({"GITHUB_EVENT_PATH": str(tmp_path / "missing.json")}) == {}
    assert GitHubContext.from_env({"GITHUB_EVENT_PATH": str(event)}).pr_number is None


def test_a_fork_comment_goes_to_the_open_pr_whose_head_is_the_runs_head(github: FakeGitHub, client: GitHubClient) -> None:
    github.pulls = [
        {"number": 4, "state": "closed", "head_sha": SHA, "head_repo": "fork/r"},
        {"number": 5, "state": "open", "head_sha": SHA, "head_repo": "someone-else/r"},  # not the run's head repository
        {"number": 6, "state": "open", "head_sha": SHA, "head_repo": "fork/r"},
    ]
    posted = post_fork_comment(f"{MARKER}\n## from the fork\n@octocat <!-- hidden -->", workflow_run(), "o/r", "default", client)
    assert posted is not None and posted.author == ACTIONS_BOT
    (comment,) = github.on(6)
    # The fork's own marker is dropped (ours heads it), nobody is pinged, no HTML comment hides anything.
    assert comment["body"] == f"{MARKER}\n## from the fork\n@\u200boctocat &lt;!-- hidden -->"
    again = post_fork_comment("second", workflow_run(), "o/r", "default", client)
    assert again is not None and again.id == comment["id"] and [c["body"] for c in github.on(6)] == [f"{MARKER}\nsecond"]


def test_no_open_pr_with_that_head_posts_nothing(github: FakeGitHub, client: GitHubClient) -> None:
    github.pulls = [{"number": 4, "state": "closed", "head_sha": SHA, "head_repo": "fork/r"}]
    assert post_fork_comment("text", workflow_run(), "o/r", "default", client) is None
    assert github.comments == {}


def test_two_open_prs_with_that_head_are_refused_by_name(github: FakeGitHub, client: GitHubClient) -> None:
    github.pulls = [{"number": n, "state": "open", "head_sha": SHA, "head_repo": "fork/r"} for n in (8, 3)]
    with pytest.raises(ConfigError) as raised:
        post_fork_comment("text", workflow_run(), "o/r", "default", client)
    assert str(raised.value) == f"workflow_run: the run's head commit {SHA[:12]} heads several open PRs (#3, #8): nothing posted"
    assert github.comments == {}


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        ({}, "not a workflow_run event of a pull_request run"),
        ({"workflow_run": {"event": "push", "head_sha": SHA}}, "not a workflow_run event of a pull_request run"),
        ({"workflow_run": {"event": "pull_request", "head_sha": "HEAD"}}, "the workflow_run event has no head_sha"),
    ],
)
def test_an_event_that_is_not_a_prs_workflow_run_is_a_config_error(event: dict[str, object], reason: str, client: GitHubClient) -> None:
    with pytest.raises(ConfigError) as raised:
        post_fork_comment("text", event, "o/r", "default", client)
    assert raised.value.setting == "GITHUB_EVENT_PATH" and raised.value.reason.startswith(reason)
