"""The HTTP runner against a real ADK API server on 127.0.0.1, and against a small fake one
for the failure cases a real server can't be made to show on demand."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agent_eval_action.datasets import Record, load_dataset
from agent_eval_action.run.agent.in_process import AdkRunner
from agent_eval_action.run.agent.loader import load_agent
from agent_eval_action.run.http_runner import HttpAgentRunner
from agent_eval_action.run.run_pool import RunSettings, run_records

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "customer_service"
# A generous timeout: nothing here asserts on it, and a busy machine must not turn a slow answer into an error.
FAST = RunSettings(concurrency=4, timeout_s=60, retries=3, backoff_initial_s=0.01, backoff_max_s=0.05)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def adk_server() -> Iterator[str]:
    """`adk api_server` for the example app, in this process, on a loopback port."""
    import uvicorn
    from google.adk.cli.fast_api import get_fast_api_app

    port = _free_port()
    app = get_fast_api_app(agents_dir=str(EXAMPLE), web=False, host="127.0.0.1", port=port, use_local_storage=False)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120  # a wait for the server's start, not a limit: generous on a busy machine
    while not server.started:
        assert time.monotonic() < deadline, "ADK API server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


def _golden() -> list[Record]:
    items = list(load_dataset(str(EXAMPLE / "evaluation" / "datasets" / "customer_service_golden.json")).records)
    return [item for item in items if isinstance(item, Record)]


def test_real_api_server_gives_the_same_traces_as_in_process(adk_server: str) -> None:
    records = _golden()
    over_http = asyncio.run(run_records(records, HttpAgentRunner(adk_server, concurrency=4), FAST))
    in_process = asyncio.run(run_records(records, AdkRunner(load_agent("customer_service", cwd=EXAMPLE), capture_spans=False), FAST))
    for remote, local in zip(over_http, in_process, strict=True):
        assert remote.trace is not None and local.trace is not None
        assert remote.trace.error is None, remote.trace.error
        assert remote.trace.tool_interactions == local.trace.tool_interactions
        assert remote.trace.trajectory == local.trace.trajectory
        assert remote.trace.final_state == local.trace.final_state
        assert remote.trace.final_response == local.trace.final_response
        assert [t.response for t in remote.trace.turns] == [t.response for t in local.trace.turns]
        assert remote.trace.latency_source == "measured"
        assert len(remote.trace.llm_calls or []) == len(local.trace.llm_calls or [])


class FakeServer:
    """Answers like the ADK API server; scripted failures by user text."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, str], Any]] = []
        self.failures: dict[str, list[int]] = {}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True  # headers and body are separate writes: no 40 ms delayed-ACK stall

            def log_message(self, *args: object) -> None:
                pass

            def _send(self, code: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _body(self) -> Any:
                length = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(length)) if length else None

            def do_POST(self) -> None:
                body = self._body()
                outer.requests.append(("POST", self.path, dict(self.headers), body))
                if self.path.endswith("/sessions"):
                    self._send(200, {"id": "s1", "appName": "app", "userId": "u", "state": body.get("state") or {}, "events": []})
                    return
                text = body["newMessage"]["parts"][0]["text"]
                codes = outer.failures.get(text, [])
                if codes:
                    self._send(codes.pop(0), {"detail": "try later"})
                    return
                self._send(
                    200,
                    [
                        {
                            "author": "app_agent",
                            "invocationId": "e-1",
                            "content": {
                                "role": "model",
                                "parts": [{"functionCall": {"id": "adk-1", "name": "lookup", "args": {"q": text}}}],
                            },
                        },
                        {
                            "author": "app_agent",
                            "invocationId": "e-1",
                            "content": {
                                "role": "user",
                                "parts": [{"functionResponse": {"id": "adk-1", "name": "lookup", "response": {"ok": True}}}],
                            },
                            "actions": {"stateDelta": {"seen": text}},
                        },
                        {
                            "author": "app_agent",
                            "invocationId": "e-1",
                            "content": {"role": "model", "parts": [{"text": f"answer to {text}"}]},
                        },
                    ],
                )

            def do_GET(self) -> None:
                outer.requests.append(("GET", self.path, dict(self.headers), None))
                self._send(200, {"id": "s1", "state": {"seen": "final"}})

            def do_DELETE(self) -> None:
                outer.requests.append(("DELETE", self.path, dict(self.headers), None))
                self._send(200, None)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    server = FakeServer()
    yield server
    server.httpd.shutdown()


def _one(text: str) -> list[Record]:
    from agent_eval_action.models.questions import Question

    return [Record(question=Question(id="q", user_inputs=[text], agents_evaluated=["app"], initial_state={"tier": "gold"}))]


def test_routes_auth_and_state(fake: FakeServer) -> None:
    (done,) = asyncio.run(run_records(_one("hello"), HttpAgentRunner(fake.url, token="s3cr3t-token"), FAST))
    assert done.trace is not None and done.trace.error is None
    methods = [(m, p) for m, p, _, _ in fake.requests]
    assert methods == [
        ("POST", "/apps/app/users/agent-eval/sessions"),
        ("POST", "/run"),
        ("GET", "/apps/app/users/agent-eval/sessions/s1"),
        ("DELETE", "/apps/app/users/agent-eval/sessions/s1"),
    ]
    assert all(h.get("Authorization") == "Bearer s3cr3t-token" for _, _, h, _ in fake.requests)
    assert fake.requests[0][3] == {"state": {"tier": "gold"}}
    assert done.trace.final_state == {"seen": "final"}
    assert [c.tool_name for c in done.trace.tool_interactions or []] == ["lookup"]
    assert done.trace.final_response == "answer to hello"


def test_503_then_success_and_400_not_retried(fake: FakeServer) -> None:
    fake.failures = {"busy": [503, 429], "bad": [400, 400, 400, 400]}
    runner = HttpAgentRunner(fake.url, app_name="app", token="s3cr3t-token")
    (busy,) = asyncio.run(run_records(_one("busy"), runner, FAST))
    assert busy.trace is not None and busy.trace.error is None
    (bad,) = asyncio.run(run_records(_one("bad"), runner, FAST))
    assert bad.trace is not None and "HTTP 400" in (bad.trace.error or "")
    assert "s3cr3t" not in (bad.trace.error or "")
    assert fake.failures["bad"] == [400, 400, 400]  # one attempt only


def test_unreachable_server_is_an_error_per_question() -> None:
    runner = HttpAgentRunner(f"http://127.0.0.1:{_free_port()}", app_name="app")
    (done,) = asyncio.run(run_records(_one("x"), runner, RunSettings(retries=0, timeout_s=60)))
    assert done.trace is not None and "ConnectionError" in (done.trace.error or "")
