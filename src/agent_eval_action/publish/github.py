"""A small GitHub REST client on ``requests``: issue comments, with pagination, retries on 5xx,
rate limits and answers that are not the JSON expected. The token lives only in the session's
headers, never in a message."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

RETRY_STATUS = {500, 502, 503, 504}
MAX_ATTEMPTS = 5
MAX_WAIT_S = 60.0
# A workflow's GITHUB_TOKEN is an installation token: GET /user answers 403, and it posts as this bot.
ACTIONS_BOT = "github-actions[bot]"


class GitHubError(Exception):
    def __init__(self, status: int, what: str, detail: str):
        self.status = status
        super().__init__(f"{what}: {detail}".strip())


@dataclass(frozen=True)
class Comment:
    id: int
    body: str
    url: str
    author: str = ""


@dataclass(frozen=True)
class PullRequest:
    number: int
    state: str
    head_sha: str
    head_repository: str  # owner/name of the head branch's repository (a fork's, for a fork PR)


# What is wrong with a JSON answer, or None when it has the shape expected.
Check = Callable[[Any], str | None]


def _kind(data: Any) -> str:
    names = {list: "a list", dict: "an object", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(data), "a number")


def _not_comment(data: Any) -> str | None:
    if not isinstance(data, dict):
        return f"{_kind(data)} where an object was expected"
    return None if type(data.get("id")) is int else "an object without an id"


def _not_comment_list(data: Any) -> str | None:
    if not isinstance(data, list):
        return f"{_kind(data)} where a list was expected"
    return next((f"a list holding {problem}" for item in data if (problem := _not_comment(item))), None)


def _not_user(data: Any) -> str | None:
    if not isinstance(data, dict):
        return f"{_kind(data)} where an object was expected"
    return None if isinstance(data.get("login"), str) and data["login"] else "an object without a login"


def _not_pull_list(data: Any) -> str | None:
    if not isinstance(data, list):
        return f"{_kind(data)} where a list was expected"
    for item in data:
        if not isinstance(item, dict) or type(item.get("number")) is not int or not isinstance(item.get("head"), dict):
            return "a list holding an item without a number and head"
    return None


def _pull(data: dict[str, Any]) -> PullRequest:
    head = data["head"]
    repo = head.get("repo") if isinstance(head.get("repo"), dict) else {}
    return PullRequest(
        number=int(data["number"]),
        state=str(data.get("state") or ""),
        head_sha=str(head.get("sha") or ""),
        head_repository=str(repo.get("full_name") or ""),
    )


def _comment(data: dict[str, Any]) -> Comment:
    user = data.get("user")
    login = user.get("login") if isinstance(user, dict) else None
    return Comment(
        id=int(data["id"]),
        body=str(data.get("body") or ""),
        url=str(data.get("html_url") or ""),
        author=login if isinstance(login, str) else "",
    )


@dataclass
class GitHubClient:
    api_url: str
    token: str = field(repr=False)
    sleep: Callable[[float], None] = time.sleep
    backoff_s: float = 1.0
    _login: str | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        import requests

        self.api_url = self.api_url.rstrip("/")
        self.http = requests.Session()
        self.http.headers.update(
            {
                "Authorization": f"Bearer {self.token}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": "agent-eval-action",
            }
        )

    def _wait(self, response: Any, attempt: int) -> float | None:
        """Seconds to wait before trying again, or None when this answer is final."""
        headers = response.headers
        rate_limited = response.status_code == 429 or (
            response.status_code == 403 and (headers.get("x-ratelimit-remaining") == "0" or "retry-after" in headers)
        )
        if response.status_code not in RETRY_STATUS and not rate_limited:
            return None
        if "retry-after" in headers:
            try:
                return float(headers["retry-after"])
            except ValueError:
                pass
        if headers.get("x-ratelimit-remaining") == "0" and "x-ratelimit-reset" in headers:
            try:
                return max(float(headers["x-ratelimit-reset"]) - time.time(), 0.0) + 1.0
            except ValueError:
                pass
        return float(self.backoff_s * 2**attempt)

    def request(self, method: str, path_or_url: str, what: str, check: Check, **kwargs: Any) -> tuple[Any, Any]:
        """The response and its JSON, which ``check`` accepts. A body that is not that JSON is a
        failed call, retried like a 5xx; the last failure raises GitHubError."""
        import requests

        url = path_or_url if path_or_url.startswith("http") else self.api_url + path_or_url
        for attempt in range(MAX_ATTEMPTS):
            last = attempt == MAX_ATTEMPTS - 1
            try:
                response = self.http.request(method, url, timeout=30, **kwargs)
            except requests.RequestException as error:
                if last:
                    raise GitHubError(0, what, f"no answer ({type(error).__name__})") from None
                self.sleep(self.backoff_s * 2**attempt)
                continue
            wait = self._wait(response, attempt)
            if wait is not None and not last and wait <= MAX_WAIT_S:
                self.sleep(wait)
                continue
            if response.status_code >= 400:
                raise GitHubError(response.status_code, what, self._message(response))
            data, problem = _json(response, check)
            if problem is None:
                return response, data
            if last:
                raise GitHubError(response.status_code, what, f"GitHub answered with {problem} (HTTP {response.status_code})")
            self.sleep(self.backoff_s * 2**attempt)
        raise GitHubError(0, what, "gave up")  # pragma: no cover - the loop returns or raises

    def _message(self, response: Any) -> str:
        data, problem = _json(response, _not_message)
        text = f"HTTP {response.status_code} " + (data["message"][:200] if problem is None else f"(GitHub answered with {problem})")
        return text.replace(self.token, "***") if self.token else text

    def login(self) -> str:
        """Who this token posts as: GET /user once; an installation token (403) posts as the Actions bot."""
        if self._login is None:
            try:
                _, data = self.request("GET", "/user", "finding who the token posts as", _not_user)
                self._login = str(data["login"])
            except GitHubError as error:
                if error.status not in (401, 403):
                    raise
                self._login = ACTIONS_BOT
        return self._login

    def comments(self, repository: str, number: int) -> Iterator[Comment]:
        """Every comment of the PR, following the Link header across all pages."""
        url: str | None = f"{self.api_url}/repos/{repository}/issues/{number}/comments?per_page=100"
        read: set[str] = set()
        while url:
            # A next page elsewhere would get our token; one already read would never end.
            if not url.startswith(self.api_url + "/") or url in read:
                where = "a page already read" if url in read else "outside the API"
                raise GitHubError(0, "listing PR comments", f"the next page's link points {where}")
            read.add(url)
            response, items = self.request("GET", url, "listing PR comments", _not_comment_list)
            yield from (_comment(item) for item in items)
            url = response.links.get("next", {}).get("url")

    def find_comment(self, repository: str, number: int, marker: str) -> Comment | None:
        """Our comment: it carries the marker and we wrote it (a stranger may quote the marker).
        The most recent one when there are several."""
        candidates = [c for c in self.comments(repository, number) if marker in c.body]
        if not candidates:
            return None
        login = self.login()
        return max((c for c in candidates if c.author == login), key=lambda c: c.id, default=None)

    def pulls_of_commit(self, repository: str, sha: str) -> list[PullRequest]:
        """The pull requests of ``repository`` whose head or history holds the commit ``sha``."""
        path = f"/repos/{repository}/commits/{sha}/pulls?per_page=100"
        _, data = self.request("GET", path, "finding the pull request of the run's head commit", _not_pull_list)
        return [_pull(item) for item in data]

    def create_comment(self, repository: str, number: int, body: str) -> Comment:
        path = f"/repos/{repository}/issues/{number}/comments"
        _, data = self.request("POST", path, "creating the PR comment", _not_comment, json={"body": body})
        return _comment(data)

    def update_comment(self, repository: str, comment_id: int, body: str) -> Comment:
        path = f"/repos/{repository}/issues/comments/{comment_id}"
        _, data = self.request("PATCH", path, "updating the PR comment", _not_comment, json={"body": body})
        return _comment(data)

    def upsert_comment(self, repository: str, number: int, marker: str, body: str) -> Comment:
        """Updates our comment (found by its marker and author on any page) or creates it: never a
        duplicate. If ours was deleted between listing and editing (404), a new one is created."""
        existing = self.find_comment(repository, number, marker)
        if existing is not None:
            try:
                return self.update_comment(repository, existing.id, body)
            except GitHubError as error:
                if error.status != 404:
                    raise
        return self.create_comment(repository, number, body)


def _not_message(data: Any) -> str | None:
    return None if isinstance(data, dict) and isinstance(data.get("message"), str) else f"{_kind(data)} without a message"


def _json(response: Any, check: Check) -> tuple[Any, str | None]:
    """The body as JSON and None, or None and what was wrong with it (never the body itself)."""
    kind = str(response.headers.get("content-type") or "").split(";")[0].strip().lower()[:60]
    try:
        data = response.json()
    except (ValueError, RecursionError):
        if kind and "json" not in kind:
            return None, f"{kind} instead of JSON"
        return None, "a body that is not JSON" if response.content else "an empty body instead of JSON"
    problem = check(data)
    return (data, None) if problem is None else (None, f"JSON of an unexpected shape: {problem}")
