"""A small GitHub REST client on ``requests``: issue comments, with pagination, retries on 5xx
and rate limits. The token lives only in the session's headers, never in a message."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

RETRY_STATUS = {500, 502, 503, 504}
MAX_ATTEMPTS = 5
MAX_WAIT_S = 60.0


class GitHubError(Exception):
    def __init__(self, status: int, what: str, message: str):
        self.status = status
        super().__init__(f"{what}: HTTP {status} {message}".strip())


@dataclass(frozen=True)
class Comment:
    id: int
    body: str
    url: str


@dataclass
class GitHubClient:
    api_url: str
    token: str = field(repr=False)
    sleep: Callable[[float], None] = time.sleep
    backoff_s: float = 1.0

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

    def request(self, method: str, path_or_url: str, what: str, **kwargs: Any) -> Any:
        import requests

        url = path_or_url if path_or_url.startswith("http") else self.api_url + path_or_url
        for attempt in range(MAX_ATTEMPTS):
            try:
                response = self.http.request(method, url, timeout=30, **kwargs)
            except requests.RequestException as error:
                if attempt == MAX_ATTEMPTS - 1:
                    raise GitHubError(0, what, f"no answer ({type(error).__name__})") from None
                self.sleep(self.backoff_s * 2**attempt)
                continue
            wait = self._wait(response, attempt)
            if wait is None or attempt == MAX_ATTEMPTS - 1 or wait > MAX_WAIT_S:
                if response.status_code >= 400:
                    raise GitHubError(response.status_code, what, _message(response))
                return response
            self.sleep(wait)
        raise GitHubError(0, what, "gave up")  # pragma: no cover - the loop returns or raises

    def comments(self, repository: str, number: int) -> Iterator[Comment]:
        """Every comment of the PR, following the Link header across all pages."""
        url: str | None = f"{self.api_url}/repos/{repository}/issues/{number}/comments?per_page=100"
        while url:
            response = self.request("GET", url, "listing PR comments")
            for item in response.json():
                yield Comment(id=int(item["id"]), body=item.get("body") or "", url=item.get("html_url") or "")
            url = response.links.get("next", {}).get("url")

    def find_comment(self, repository: str, number: int, marker: str) -> Comment | None:
        return next((c for c in self.comments(repository, number) if marker in c.body), None)

    def create_comment(self, repository: str, number: int, body: str) -> Comment:
        data = self.request("POST", f"/repos/{repository}/issues/{number}/comments", "creating the PR comment", json={"body": body}).json()
        return Comment(id=int(data["id"]), body=data.get("body") or "", url=data.get("html_url") or "")

    def update_comment(self, repository: str, comment_id: int, body: str) -> Comment:
        data = self.request(
            "PATCH", f"/repos/{repository}/issues/comments/{comment_id}", "updating the PR comment", json={"body": body}
        ).json()
        return Comment(id=int(data["id"]), body=data.get("body") or "", url=data.get("html_url") or "")

    def upsert_comment(self, repository: str, number: int, marker: str, body: str) -> Comment:
        """Updates our comment (found by its marker on any page) or creates it: never a duplicate."""
        existing = self.find_comment(repository, number, marker)
        if existing is not None:
            return self.update_comment(repository, existing.id, body)
        return self.create_comment(repository, number, body)


def _message(response: Any) -> str:
    try:
        return str(response.json().get("message", ""))[:200]
    except ValueError:
        return str(response.text)[:200]
