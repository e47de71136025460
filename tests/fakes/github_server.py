"""A real HTTP server on 127.0.0.1 that answers like the GitHub REST API's issue-comment routes,
``GET /user`` and the pull requests of a commit: pagination with Link headers, bearer-token auth, comment authors (editing
someone else's comment is refused), and failures scripted per test, HTML pages included."""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

LIST = re.compile(r"^/repos/([^/]+/[^/]+)/issues/(\d+)/comments$")
ONE = re.compile(r"^/repos/([^/]+/[^/]+)/issues/comments/(\d+)$")
PULLS_OF_COMMIT = re.compile(r"^/repos/([^/]+/[^/]+)/commits/([0-9a-f]{40})/pulls$")
ACTIONS_BOT = "github-actions[bot]"
PROXY_PAGE = "<html><head><title>502 Bad Gateway</title></head><body><h1>proxy error</h1></body></html>"


@dataclass
class Failure:
    method: str  # "GET", "POST", "PATCH" or "*"
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    times: int = 1
    body: str | None = None  # sent as is instead of a JSON message, e.g. PROXY_PAGE
    content_type: str = "application/json"
    path: str | None = None  # only requests whose path contains this


class FakeGitHub:
    def __init__(self, token: str = "ghs_test_token", max_body: int = 65536, login: str | None = None):
        self.token = token
        self.max_body = max_body
        # GET /user: a personal token's login, or None for an installation token (403, posts as the bot).
        self.login = login
        # Comments deleted by someone else the moment we try to PATCH them (between list and edit).
        self.delete_on_patch: set[int] = set()
        self.comments: dict[int, dict[str, Any]] = {}
        self.next_id = 1000
        self.failures: list[Failure] = []
        self.log: list[tuple[str, str, int]] = []
        self.seen_tokens: set[str] = set()
        # GET /repos/R/commits/SHA/pulls: the pull requests, each {"number", "state", "head_sha", "head_repo"}.
        self.pulls: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True  # headers and body are separate writes: no 40 ms delayed-ACK stall

            def log_message(self, *args: object) -> None:
                pass

            def _reply(self, status: int, body: Any, headers: dict[str, str] | None = None, content_type: str | None = None) -> None:
                data = body.encode() if content_type else json.dumps(body).encode()
                outer.log.append((self.command, self.path, status))  # before the client can read the answer
                self.send_response(status)
                self.send_header("Content-Type", content_type or "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def _handle(self) -> None:
                auth = self.headers.get("Authorization", "")
                outer.seen_tokens.add(auth)
                for failure in outer.failures:
                    if failure.times > 0 and failure.method in (self.command, "*") and (failure.path or "") in self.path:
                        failure.times -= 1
                        if failure.body is not None:
                            self._reply(failure.status, failure.body, failure.headers, failure.content_type)
                        else:
                            self._reply(failure.status, {"message": f"scripted {failure.status}"}, failure.headers)
                        return
                if auth != f"Bearer {outer.token}":
                    self._reply(401, {"message": "Bad credentials"})
                    return
                length = int(self.headers.get("Content-Length") or 0)
                body: dict[str, Any] = json.loads(self.rfile.read(length)) if length else {}
                url = urlparse(self.path)
                if url.path == "/user" and self.command == "GET":
                    if outer.login is None:
                        self._reply(403, {"message": "Resource not accessible by integration"})
                    else:
                        self._reply(200, {"login": outer.login, "id": 1, "type": "User"})
                elif (m := PULLS_OF_COMMIT.match(url.path)) and self.command == "GET":
                    found = [p for p in outer.pulls if p["head_sha"] == m.group(2)]
                    self._reply(
                        200,
                        [
                            {
                                "number": p["number"],
                                "state": p["state"],
                                "head": {"sha": p["head_sha"], "repo": {"full_name": p["head_repo"]}},
                            }
                            for p in found
                        ],
                    )
                elif (m := LIST.match(url.path)) and self.command == "GET":
                    page = int(parse_qs(url.query).get("page", ["1"])[0])
                    per_page = int(parse_qs(url.query).get("per_page", ["30"])[0])
                    items = [c for c in outer.comments.values() if c["issue"] == int(m.group(2))]
                    chunk = items[(page - 1) * per_page : page * per_page]
                    headers = {}
                    if page * per_page < len(items):
                        base = f"http://{self.headers['Host']}{url.path}"
                        headers["Link"] = (
                            f'<{base}?per_page={per_page}&page={page + 1}>; rel="next", <{base}?per_page={per_page}&page={(len(items) - 1) // per_page + 1}>; rel="last"'
                        )
                    self._reply(200, [outer._public(c) for c in chunk], headers)
                elif (m := LIST.match(url.path)) and self.command == "POST":
                    if len(body["body"]) > outer.max_body:
                        self._reply(
                            422, {"message": "Validation Failed", "errors": [{"message": "body is too long (maximum is 65536 characters)"}]}
                        )
                        return
                    comment = outer.add(int(m.group(2)), body["body"], author=outer.poster)
                    self._reply(201, outer._public(comment))
                elif (m := ONE.match(url.path)) and self.command == "PATCH":
                    if int(m.group(2)) in outer.delete_on_patch:
                        outer.delete_on_patch.discard(int(m.group(2)))
                        outer.comments.pop(int(m.group(2)), None)
                    edited = outer.comments.get(int(m.group(2)))
                    if edited is None:
                        self._reply(404, {"message": "Not Found"})
                        return
                    if edited["author"] != outer.poster:
                        self._reply(403, {"message": "Resource not accessible by integration"})
                        return
                    if len(body["body"]) > outer.max_body:
                        self._reply(422, {"message": "Validation Failed"})
                        return
                    edited["body"] = body["body"]
                    self._reply(200, outer._public(edited))
                else:
                    self._reply(404, {"message": "Not Found"})

            do_GET = do_POST = do_PATCH = _handle

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )  # close() waits one poll
        self.thread.start()

    @property
    def poster(self) -> str:
        """Who the token's comments are written by."""
        return self.login or ACTIONS_BOT

    def add(self, issue: int, body: str, author: str = "someone") -> dict[str, Any]:
        self.next_id += 1
        comment = {"id": self.next_id, "issue": issue, "body": body, "author": author}
        self.comments[self.next_id] = comment
        return comment

    def _public(self, comment: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": comment["id"],
            "body": comment["body"],
            "user": {"login": comment["author"], "type": "Bot" if comment["author"].endswith("[bot]") else "User"},
            "html_url": f"https://github.com/o/r/pull/{comment['issue']}#issuecomment-{comment['id']}",
        }

    def on(self, issue: int) -> list[dict[str, Any]]:
        return [c for c in self.comments.values() if c["issue"] == issue]

    def close(self) -> None:
        self.httpd.shutdown()
