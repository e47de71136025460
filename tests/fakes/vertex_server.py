"""A loopback Vertex AI evaluation service: ``:evaluateInstances`` answered as the service
answers it (``metricResults``), from the request's content (``answer``), with failures on
demand; every request kept, counted where it arrives."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _default(spec: str, body: dict[str, Any]) -> dict[str, Any]:
    return {"score": 0.75 if spec.startswith("general") else 1.0, "explanation": f"{spec} ok"}


class FakeVertex:
    """``answer(spec, body)``: one metric result (``score``, ``explanation``, ``rubricVerdicts``)
    for the metric spec named and the request's body; ``failures``: HTTP statuses to answer the
    next requests with, in turn."""

    def __init__(self, answer: Callable[[str, dict[str, Any]], dict[str, Any]] = _default) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.failures: list[int] = []
        self.answer = answer
        outer = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                if outer.failures:
                    status = outer.failures.pop(0)
                    data = json.dumps({"error": {"code": status, "message": "busy", "status": "UNAVAILABLE"}}).encode()
                else:
                    status = 200
                    outer.bodies.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
                    spec = body["metrics"][0]["predefined_metric_spec"]["metric_spec_name"]
                    data = json.dumps({"metricResults": [outer.answer(spec, body)]}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
