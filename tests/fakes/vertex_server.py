"""A loopback Vertex AI evaluation service: ``:evaluateInstances`` answered as the service
answers it (``metricResults``), from the request's content (``answer``), with failures on
demand; every request kept, counted where it arrives."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
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
        self.tokens = 0  # access tokens handed out
        self.answer = answer
        outer = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path.endswith("/token"):  # an OAuth token endpoint (a credentials file's token_uri)
                    outer.tokens += 1
                    self._send(200, json.dumps({"access_token": "test-token", "expires_in": 3600, "token_type": "Bearer"}).encode())
                    return
                body = json.loads(raw)
                if outer.failures:
                    status = outer.failures.pop(0)
                    data = json.dumps({"error": {"code": status, "message": "busy", "status": "UNAVAILABLE"}}).encode()
                else:
                    status = 200
                    outer.bodies.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
                    spec = body["metrics"][0]["predefined_metric_spec"]["metric_spec_name"]
                    data = json.dumps({"metricResults": [outer.answer(spec, body)]}).encode()
                self._send(status, data)

            def _send(self, status: int, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def credentials(self, folder: Path) -> Path:
        """A service account's key file whose token endpoint is this server (a key made now):
        GOOGLE_APPLICATION_CREDENTIALS for a process that must reach no Google endpoint. (An
        authorized user's file will not do: google-auth always sends it to Google's endpoint.)"""
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        account = {
            "type": "service_account", "project_id": "proj", "private_key_id": "test", "private_key": pem.decode(),
            "client_email": "eval@proj.iam.gserviceaccount.com", "client_id": "1", "token_uri": f"{self.url}/token",
        }  # fmt: skip
        path = folder / "credentials.json"
        path.write_text(json.dumps(account))
        return path

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
