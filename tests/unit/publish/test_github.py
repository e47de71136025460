"""The GitHub REST client (publish/github.py) against the loopback fake of the API: what it
sends, what it reads back, and what it does when GitHub misbehaves (403, 404, 5xx, rate limits,
pagination). The waits are recorded, not slept."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agent_eval_action.publish.github import ACTIONS_BOT, MAX_ATTEMPTS, Comment, GitHubClient, GitHubError
from tests.fakes.github_server import Failure, FakeGitHub

TOKEN = "ghs_unit_token_7"
REPO = "o/r"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    server = FakeGitHub(token=TOKEN)
    yield server
    server.close()


@pytest.fixture
def waits() -> list[float]:
    return []


@pytest.fixture
def client(github: FakeGitHub, waits: list[float]) -> GitHubClient:
    return GitHubClient(github.url + "/", TOKEN, sleep=waits.append, backoff_s=0.5)


def requests_to(github: FakeGitHub, method: str) -> list[tuple[str, int]]:
    return [(path, status) for verb, path, status in github.log if verb == method]


def test_a_comment_is_created_with_the_token_and_read_back(github: FakeGitHub, client: GitHubClient) -> None:
    created = client.create_comment(REPO, 5, "hello")
    assert created == Comment(id=1001, body="hello", url="https://github.com/o/r/pull/5#issuecomment-1001", author=ACTIONS_BOT)
    assert github.seen_tokens == {f"Bearer {TOKEN}"}
    assert [c["body"] for c in github.on(5)] == ["hello"]
    assert client.api_url == github.url  # the trailing slash is dropped: no "//repos" paths


def test_comments_follow_every_page_in_order(github: FakeGitHub, client: GitHubClient) -> None:
    for i in range(250):
        github.add(3, f"c{i}")
    github.add(4, "another PR's")
    bodies = [c.body for c in client.comments(REPO, 3)]
    assert bodies == [f"c{i}" for i in range(250)]
    assert [status for _, status in requests_to(github, "GET")] == [200, 200, 200]  # 100 a page: three pages


def test_upsert_edits_ours_on_a_late_page_and_leaves_the_strangers_alone(github: FakeGitHub, client: GitHubClient) -> None:
    for i in range(120):
        github.add(9, f"chatter {i}")
    github.add(9, "<!-- m --> quoted by someone", author="someone")
    ours = github.add(9, "<!-- m --> old", author=ACTIONS_BOT)
    posted = client.upsert_comment(REPO, 9, "<!-- m -->", "<!-- m --> new")
    assert posted.id == ours["id"] and posted.body == "<!-- m --> new"
    assert github.comments[ours["id"]]["body"] == "<!-- m --> new"
    assert [c["body"] for c in github.on(9) if c["author"] == "someone"][-1] == "<!-- m --> quoted by someone"
    assert requests_to(github, "POST") == []  # never a second comment


def test_upsert_creates_when_none_is_ours(github: FakeGitHub, client: GitHubClient) -> None:
    github.add(2, "<!-- m --> a stranger's", author="someone")
    posted = client.upsert_comment(REPO, 2, "<!-- m -->", "<!-- m --> ours")
    assert posted.author == ACTIONS_BOT
    assert [(c["author"], c["body"]) for c in github.on(2)] == [("someone", "<!-- m --> a stranger's"), (ACTIONS_BOT, "<!-- m --> ours")]


def test_a_comment_deleted_between_listing_and_editing_is_posted_again(github: FakeGitHub, client: GitHubClient) -> None:
    ours = github.add(2, "<!-- m --> old", author=ACTIONS_BOT)
    github.delete_on_patch.add(ours["id"])
    posted = client.upsert_comment(REPO, 2, "<!-- m -->", "<!-- m --> again")
    assert posted.id != ours["id"]
    assert [c["body"] for c in github.on(2)] == ["<!-- m --> again"]
    assert requests_to(github, "PATCH") == [(f"/repos/o/r/issues/comments/{ours['id']}", 404)]


def test_5xx_is_retried_with_growing_waits_then_succeeds(github: FakeGitHub, client: GitHubClient, waits: list[float]) -> None:
    github.failures.append(Failure("POST", 503, times=2))
    assert client.create_comment(REPO, 1, "x").body == "x"
    assert waits == [0.5, 1.0]  # backoff_s * 2**attempt
    assert [status for _, status in requests_to(github, "POST")] == [503, 503, 201]


def test_5xx_every_time_gives_up_after_the_last_attempt(github: FakeGitHub, client: GitHubClient, waits: list[float]) -> None:
    github.failures.append(Failure("GET", 502, times=MAX_ATTEMPTS))
    with pytest.raises(GitHubError) as raised:
        list(client.comments(REPO, 1))
    assert raised.value.status == 502
    assert str(raised.value) == "listing PR comments: HTTP 502 scripted 502"
    assert len(waits) == MAX_ATTEMPTS - 1 and len(requests_to(github, "GET")) == MAX_ATTEMPTS


def test_403_without_rate_limit_headers_is_final_and_names_the_call(github: FakeGitHub, client: GitHubClient, waits: list[float]) -> None:
    github.failures.append(Failure("POST", 403))
    with pytest.raises(GitHubError) as raised:
        client.create_comment(REPO, 1, "x")
    assert (raised.value.status, str(raised.value)) == (403, "creating the PR comment: HTTP 403 scripted 403")
    assert waits == [] and github.on(1) == []


def test_a_rate_limited_403_waits_as_retry_after_says(github: FakeGitHub, client: GitHubClient, waits: list[float]) -> None:
    github.failures.append(Failure("POST", 403, headers={"Retry-After": "7"}))
    assert client.create_comment(REPO, 1, "x").body == "x"
    assert waits == [7.0]


def test_429_waits_out_the_reset_time(github: FakeGitHub, client: GitHubClient, waits: list[float]) -> None:
    github.failures.append(Failure("GET", 429, headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "0"}))
    assert list(client.comments(REPO, 1)) == []
    assert waits == [1.0]  # a reset in the past: one second more


def test_a_wait_longer_than_a_minute_is_not_waited(github: FakeGitHub, client: GitHubClient, waits: list[float]) -> None:
    github.failures.append(Failure("POST", 429, headers={"Retry-After": "3600"}))
    with pytest.raises(GitHubError) as raised:
        client.create_comment(REPO, 1, "x")
    assert raised.value.status == 429 and waits == []


def test_404_on_an_edit_is_an_error_with_its_status(github: FakeGitHub, client: GitHubClient) -> None:
    with pytest.raises(GitHubError) as raised:
        client.update_comment(REPO, 4242, "x")
    assert (raised.value.status, str(raised.value)) == (404, "updating the PR comment: HTTP 404 Not Found")


def test_a_bad_token_is_401_and_never_in_the_message(github: FakeGitHub, waits: list[float]) -> None:
    client = GitHubClient(github.url, "ghs_wrong", sleep=waits.append)
    github.failures.append(Failure("POST", 500, body="ghs_wrong was refused", content_type="text/plain"))
    with pytest.raises(GitHubError) as raised:
        client.create_comment(REPO, 1, "x")
    assert raised.value.status == 401 and "ghs_wrong" not in str(raised.value)
    assert str(raised.value) == "creating the PR comment: HTTP 401 Bad credentials"


def test_an_installation_token_posts_as_the_actions_bot_and_a_personal_one_as_its_login(waits: list[float]) -> None:
    installation, personal = FakeGitHub(token=TOKEN), FakeGitHub(token=TOKEN, login="octocat")
    try:
        assert GitHubClient(installation.url, TOKEN, sleep=waits.append).login() == ACTIONS_BOT
        client = GitHubClient(personal.url, TOKEN, sleep=waits.append)
        assert (client.login(), client.login()) == ("octocat", "octocat")
        assert len(requests_to(personal, "GET")) == 1  # asked once
    finally:
        installation.close()
        personal.close()


def test_the_pull_requests_of_a_commit_are_read_with_their_head(github: FakeGitHub, client: GitHubClient) -> None:
    sha = "a" * 40
    github.pulls = [
        {"number": 7, "state": "open", "head_sha": sha, "head_repo": "fork/r"},
        {"number": 8, "state": "closed", "head_sha": "b" * 40, "head_repo": "o/r"},
    ]
    (pull,) = client.pulls_of_commit(REPO, sha)
    assert (pull.number, pull.state, pull.head_sha, pull.head_repository) == (7, "open", sha, "fork/r")


def test_an_answer_of_the_wrong_shape_is_retried_then_named(github: FakeGitHub, client: GitHubClient, waits: list[float]) -> None:
    github.failures.append(Failure("POST", 201, body='{"no": "id"}', times=MAX_ATTEMPTS))
    with pytest.raises(GitHubError) as raised:
        client.create_comment(REPO, 1, "x")
    assert str(raised.value) == (
        "creating the PR comment: GitHub answered with JSON of an unexpected shape: an object without an id (HTTP 201)"
    )
    assert len(waits) == MAX_ATTEMPTS - 1 and github.on(1) == []
