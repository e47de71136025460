"""GitHub misbehaving, against the loopback fake: HTML pages and JSON of the wrong shape, a
stranger quoting our marker, our comment deleted under us. Publishing falls back to the comment
file or posts in the right place; it never crashes and never changes what the gate said."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_eval_action.metrics import default_pass_thresholds
from agent_eval_action.publish.github import GitHubClient
from agent_eval_action.publish.publisher import Published, PublishSettings, publish
from agent_eval_action.repo.results_io import write_results
from tests.fakes.github_server import PROXY_PAGE, Failure, FakeGitHub
from tests.helpers.publishing import TOKEN, context, outputs, sample_results

MARKER = "<!-- agent-eval-action:default -->"
BOT = "github-actions[bot]"
LIST = "/repos/o/r/issues/7/comments"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    server = FakeGitHub(token=TOKEN)
    yield server
    server.close()


def run(server: FakeGitHub, tmp_path: Path, sleeps: list[float] | None = None) -> tuple[Published, str]:
    """Publishes a failing run (the gate says no) with a client whose waits are recorded, not slept."""
    waits = sleeps if sleeps is not None else []
    results = sample_results()
    assert results.gate is not None and not results.gate.passed
    write_results(results, tmp_path / "out" / "results.json")
    (tmp_path / "github_output").unlink(missing_ok=True)
    out = io.StringIO()
    published = publish(
        results,
        tmp_path / "out",
        PublishSettings(thresholds=default_pass_thresholds({})),
        context(server, tmp_path),
        client_factory=lambda api, token: GitHubClient(api, token, sleep=waits.append),
        out=out,
    )
    return published, out.getvalue()


def requests_to(server: FakeGitHub, method: str, path: str) -> list[int]:
    return [status for m, p, status in server.log if m == method and p.split("?")[0] == path]


def assert_fell_back(published: Published, printed: str, tmp_path: Path, reason: str) -> None:
    comment_file = tmp_path / "out" / "comment.md"
    assert published.comment_url is None and published.comment_file == str(comment_file)
    assert comment_file.read_text().startswith(MARKER + "\n## ❌ Agent evaluation failed")
    values = outputs(tmp_path)
    assert values["comment-file"] == str(comment_file) and "comment-url" not in values
    assert values["passed"] == "false"  # what the gate said, publishing or not
    (warning,) = [line for line in printed.splitlines() if line.startswith("::warning")]
    assert warning == (
        f"::warning::could not post the PR comment ({reason}); it was written to {comment_file}; "
        "the results are in the step summary and results.json"
    )
    assert "proxy error" not in printed and "<html" not in printed and "Traceback" not in printed and TOKEN not in printed


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        (200, "listing PR comments: GitHub answered with text/html instead of JSON (HTTP 200)"),
        (502, "listing PR comments: HTTP 502 (GitHub answered with text/html instead of JSON)"),
    ],
)
def test_an_html_page_for_the_listing_is_retried_then_falls_back(github: FakeGitHub, tmp_path: Path, status: int, reason: str) -> None:
    github.failures = [Failure("GET", status, times=99, body=PROXY_PAGE, content_type="text/html")]
    sleeps: list[float] = []
    published, printed = run(github, tmp_path, sleeps)
    assert requests_to(github, "GET", LIST) == [status] * 5  # five attempts, then it gives up
    assert sleeps == [1.0, 2.0, 4.0, 8.0]  # the same backoff as a 5xx
    assert github.on(7) == [] and requests_to(github, "POST", LIST) == []
    assert_fell_back(published, printed, tmp_path, reason)


def test_an_html_page_once_then_json_posts_normally(github: FakeGitHub, tmp_path: Path) -> None:
    github.failures = [Failure("GET", 200, body=PROXY_PAGE, content_type="text/html; charset=utf-8")]
    sleeps: list[float] = []
    published, printed = run(github, tmp_path, sleeps)
    assert [(m, s) for m, _, s in github.log] == [("GET", 200), ("GET", 200), ("POST", 201)] and sleeps == [1.0]
    (comment,) = github.on(7)
    assert comment["author"] == BOT and comment["body"].startswith(MARKER)
    assert published.comment_url == outputs(tmp_path)["comment-url"] == f"https://github.com/o/r/pull/7#issuecomment-{comment['id']}"
    assert "::warning" not in printed and "comment-file" not in outputs(tmp_path)


@pytest.mark.parametrize(
    ("method", "body", "reason"),
    [
        ("GET", '{"message": "moved"}', "listing PR comments: GitHub answered with JSON of an unexpected shape: an object where a list was expected (HTTP 200)"),
        ("GET", '[{"id": 1}, "x"]', "listing PR comments: GitHub answered with JSON of an unexpected shape: a list holding a string where an object was expected (HTTP 200)"),
        ("GET", '[{"body": "no id"}]', "listing PR comments: GitHub answered with JSON of an unexpected shape: a list holding an object without an id (HTTP 200)"),
        ("POST", "[]", "creating the PR comment: GitHub answered with JSON of an unexpected shape: a list where an object was expected (HTTP 201)"),
        ("POST", '{"id": "12"}', "creating the PR comment: GitHub answered with JSON of an unexpected shape: an object without an id (HTTP 201)"),
        ("POST", '{"id": 1', "creating the PR comment: GitHub answered with a body that is not JSON (HTTP 201)"),
        ("POST", "", "creating the PR comment: GitHub answered with an empty body instead of JSON (HTTP 201)"),
    ],
)  # fmt: skip
def test_json_of_the_wrong_shape_is_a_failed_call(github: FakeGitHub, tmp_path: Path, method: str, body: str, reason: str) -> None:
    github.failures = [Failure(method, 200 if method == "GET" else 201, times=99, body=body)]
    published, printed = run(github, tmp_path)
    assert len(requests_to(github, method, LIST)) == 5
    assert_fell_back(published, printed, tmp_path, reason)


def test_an_error_message_never_carries_the_token(github: FakeGitHub, tmp_path: Path) -> None:
    github.failures = [Failure("GET", 401, body=json.dumps({"message": f"token {TOKEN} is revoked"}))]
    published, printed = run(github, tmp_path)
    assert published.comment_url is None and "listing PR comments: HTTP 401 token *** is revoked" in printed
    assert TOKEN not in printed and TOKEN not in (tmp_path / "github_output").read_text()


def test_a_strangers_comment_quoting_our_marker_is_left_alone(github: FakeGitHub, tmp_path: Path) -> None:
    quoted = f"> {MARKER}\n> ## ❌ Agent evaluation failed\nWhy did this fail?"
    stranger = github.add(7, quoted, author="octocat")
    published, printed = run(github, tmp_path)
    assert (
        github.comments[stranger["id"]]["body"] == quoted
        and requests_to(github, "PATCH", f"/repos/o/r/issues/comments/{stranger['id']}") == []
    )
    assert requests_to(github, "GET", "/user") == [403]  # a workflow token: it posts as the Actions bot
    ours = [c for c in github.on(7) if c["id"] != stranger["id"]]
    assert len(ours) == 1 and ours[0]["author"] == BOT and ours[0]["body"].startswith(MARKER + "\n## ❌")
    assert published.comment_url == outputs(tmp_path)["comment-url"] and published.comment_url.endswith(f"-{ours[0]['id']}")
    assert "::warning" not in printed
    run(github, tmp_path)  # the next run finds ours beside the stranger's: no duplicate
    assert len(github.on(7)) == 2 and github.comments[stranger["id"]]["body"] == quoted


def test_with_a_personal_token_the_bots_comment_is_not_ours(tmp_path: Path) -> None:
    server = FakeGitHub(token=TOKEN, login="octo-bot")
    try:
        bots = server.add(7, f"{MARKER}\nan older run, posted with the workflow token", author=BOT)
        published, _ = run(server, tmp_path)
        assert requests_to(server, "GET", "/user") == [200]
        assert server.comments[bots["id"]]["body"].endswith("posted with the workflow token")
        (mine,) = [c for c in server.on(7) if c["author"] == "octo-bot"]
        assert published.comment_url is not None and published.comment_url.endswith(f"-{mine['id']}")
        run(server, tmp_path)
        assert len(server.on(7)) == 2 and requests_to(server, "PATCH", f"/repos/o/r/issues/comments/{mine['id']}") == [200]
    finally:
        server.close()


def test_of_several_of_ours_the_most_recent_is_updated(github: FakeGitHub, tmp_path: Path) -> None:
    older = github.add(7, f"{MARKER}\nolder", author=BOT)
    newer = github.add(7, f"{MARKER}\nnewer", author=BOT)
    github.add(7, f"{MARKER}\nquoted later", author="octocat")
    published, _ = run(github, tmp_path)
    assert github.comments[older["id"]]["body"] == f"{MARKER}\nolder"
    assert "## ❌ Agent evaluation failed" in github.comments[newer["id"]]["body"]
    assert len(github.on(7)) == 3 and published.comment_url is not None and published.comment_url.endswith(f"-{newer['id']}")


def test_our_comment_deleted_before_the_edit_is_posted_again(github: FakeGitHub, tmp_path: Path) -> None:
    ours = github.add(7, f"{MARKER}\nold results", author=BOT)
    github.delete_on_patch.add(ours["id"])
    published, printed = run(github, tmp_path)
    assert [(m, s) for m, _, s in github.log] == [("GET", 200), ("GET", 403), ("PATCH", 404), ("POST", 201)]
    (new,) = github.on(7)
    assert new["id"] != ours["id"] and new["author"] == BOT and "## ❌ Agent evaluation failed" in new["body"]
    url = f"https://github.com/o/r/pull/7#issuecomment-{new['id']}"
    assert published.comment_url == outputs(tmp_path)["comment-url"] == url
    assert "comment-file" not in outputs(tmp_path) and "::warning" not in printed


def test_an_html_page_for_who_we_are_falls_back(github: FakeGitHub, tmp_path: Path) -> None:
    ours = github.add(7, f"{MARKER}\nold results", author=BOT)
    github.failures = [Failure("GET", 200, times=99, body=PROXY_PAGE, content_type="text/html", path="/user")]
    published, printed = run(github, tmp_path)
    assert requests_to(github, "GET", "/user") == [200] * 5 and github.on(7) == [ours]
    assert github.comments[ours["id"]]["body"] == f"{MARKER}\nold results"
    assert_fell_back(
        published, printed, tmp_path, "finding who the token posts as: GitHub answered with text/html instead of JSON (HTTP 200)"
    )


@pytest.mark.parametrize(
    ("link", "reason"),
    [
        ("{api}/repos/o/r/issues/7/comments?per_page=100", "a page already read"),
        ("http://elsewhere.invalid/repos/o/r/issues/7/comments?page=2", "outside the API"),
    ],
)
def test_a_next_link_that_loops_or_leaves_the_api_is_not_followed(github: FakeGitHub, tmp_path: Path, link: str, reason: str) -> None:
    next_page = {"Link": f'<{link.format(api=github.url)}>; rel="next"'}
    github.failures = [Failure("GET", 200, next_page, times=99, body="[]")]
    published, printed = run(github, tmp_path)
    assert requests_to(github, "GET", LIST) == [200] and github.on(7) == []
    assert_fell_back(published, printed, tmp_path, f"listing PR comments: the next page's link points {reason}")
