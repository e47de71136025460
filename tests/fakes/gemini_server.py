"""A real HTTP server on 127.0.0.1 that answers ``models/*:generateContent`` like the Gemini API,
so the real google-genai client can be pointed at it.

With ``rpm``, each model takes that many requests in any ``minute_s`` (a sliding window, as a
per-minute quota); beyond it a request is answered 429 RESOURCE_EXHAUSTED shaped as the real API
answers it: a ``google.rpc.QuotaFailure`` naming the quota, a ``Help`` link and a
``google.rpc.RetryInfo`` whose ``retryDelay`` is when the window's oldest request leaves it.

With ``faults`` (kind -> share of requests) it misbehaves on a seeded schedule (``seed``), one
kind a request at most: ``stall`` answers after ``stall_s``; ``cut`` sends the headers and half
the body, then closes the connection; ``json`` answers 200 with a JSON body cut short (its length
right); ``503`` answers UNAVAILABLE; ``retry_info`` answers 429 with a RetryInfo ``retryDelay``
of ``retry_delay_s``. ``faulted`` counts each kind made. ``on_request`` hears each request's body
before it is answered."""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeGemini:
    def __init__(
        self,
        reply: Callable[[str], str] | None = None,
        latency_s: float = 0.0,
        limit: int | None = None,
        parts: Callable[[dict[str, Any]], list[dict[str, Any]]] | None = None,
        *,
        rpm: int | None = None,
        minute_s: float = 60.0,
        faults: dict[str, float] | None = None,
        seed: int = 0,
        stall_s: float = 30.0,
        retry_delay_s: float = 2.0,
        on_request: Callable[[dict[str, Any]], None] | None = None,
    ):
        """``limit``: requests in flight above it are answered 429 RESOURCE_EXHAUSTED, as a
        quota would (``in_flight_peak`` records the most ever answered at once). ``parts``: the
        answer's parts made from the whole request body (an agent's model: ``functionCall``
        parts for the tools it declares), instead of one text part from ``reply``. ``rpm``: a
        requests-per-minute quota per model (see the module's doc); ``requests`` counts every
        request, ``throttled`` those answered 429, ``over_quota`` those the quota refused."""
        self.reply = reply or (lambda prompt: json.dumps({"score": 4, "explanation": "mostly right"}))
        self.parts = parts
        self.latency_s = latency_s
        self.prompts: list[str] = []
        self.models: list[str] = []
        self.clients: list[str] = []  # each request's x-goog-api-client header (ADK names itself and its version there)
        self.failures: list[int] = []  # statuses to answer first, one per request
        self.limit = limit
        self.in_flight = self.in_flight_peak = self.throttled = 0
        self.rpm, self.minute_s = rpm, minute_s
        self.accepted: dict[str, deque[float]] = {}  # per model: when the window's requests came
        self.requests = self.over_quota = 0
        self.lock = threading.Lock()
        self.faults = dict(faults or {})
        self.schedule = random.Random(seed)
        self.stall_s, self.retry_delay_s = stall_s, retry_delay_s
        self.faulted: Counter[str] = Counter()
        self.on_request = on_request
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out as separate writes

            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, body: object) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _cut(self, data: bytes) -> None:
                """Headers that promise ``data`` and half of it, then the connection closed."""
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.close_connection = True

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                model = self.path.split("/models/")[-1].split(":")[0]
                retry_in: float | None = None
                if outer.on_request is not None:
                    outer.on_request(body)
                with outer.lock:
                    outer.requests += 1
                    fault = outer._fault()
                if fault == "503":
                    self._send(503, {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}})
                    return
                if fault == "retry_info":
                    delay = f"{outer.retry_delay_s:g}s"
                    details = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}]
                    self._send(429, {"error": {"code": 429, "message": "try later", "status": "RESOURCE_EXHAUSTED", "details": details}})
                    return
                if fault == "stall":
                    time.sleep(outer.stall_s)
                if fault in ("cut", "json"):
                    data = json.dumps(outer._reply(body)).encode()
                    if fault == "cut":
                        self._cut(data)
                    else:
                        cut = data[: len(data) // 2]
                        self.send_response(200)
                        self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", str(len(cut)))
                        self.end_headers()
                        self.wfile.write(cut)
                    return
                with outer.lock:
                    failure = outer.failures.pop(0) if outer.failures else None
                    over = outer.limit is not None and outer.in_flight >= outer.limit
                    if not failure and not over:
                        retry_in = outer._quota_refuses(model)
                        over = retry_in is not None
                    if over:
                        outer.throttled += 1
                        failure = failure or 429
                    elif not failure:
                        outer.in_flight += 1
                        outer.in_flight_peak = max(outer.in_flight_peak, outer.in_flight)
                if not failure:
                    try:
                        self._answer(body)
                    finally:
                        with outer.lock:
                            outer.in_flight -= 1
                    return
                status = {429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}.get(failure, "INTERNAL")
                error: dict[str, Any] = {"code": failure, "message": "try again", "status": status}
                if retry_in is not None:
                    error.update(
                        message="You exceeded your current quota, please check your plan and billing details.",
                        details=outer._quota_details(model, retry_in),
                    )
                self._send(failure, {"error": error})

            def _answer(self, body: Any) -> None:
                if outer.latency_s:
                    time.sleep(outer.latency_s)
                prompt = "".join(p.get("text", "") for c in body.get("contents", []) for p in c.get("parts", []))
                with outer.lock:
                    outer.clients.append(self.headers.get("x-goog-api-client", ""))
                    outer.prompts.append(prompt)
                    outer.models.append(self.path.split("/models/")[-1].split(":")[0])
                self._send(200, outer._reply(body))

        class Server(ThreadingHTTPServer):
            request_queue_size = 256  # a real API takes many connections at once

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def _reply(self, body: Any) -> dict[str, Any]:
        prompt = "".join(p.get("text", "") for c in body.get("contents", []) for p in c.get("parts", []))
        parts = self.parts(body) if self.parts else [{"text": self.reply(prompt)}]
        return {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": len(prompt) // 4, "candidatesTokenCount": 12, "totalTokenCount": len(prompt) // 4 + 12},
        }  # fmt: skip

    def _fault(self) -> str | None:
        """Under the lock: the fault this request gets by the schedule (None: answered as asked)."""
        if not self.faults:
            return None
        draw, edge = self.schedule.random(), 0.0
        for kind, share in self.faults.items():
            edge += share
            if draw < edge:
                self.faulted[kind] += 1
                return kind
        return None

    def _quota_refuses(self, model: str) -> float | None:
        """Under the lock: None when the model's quota takes one more request now (counted),
        else the seconds until it would."""
        if self.rpm is None:
            return None
        now = time.monotonic()
        window = self.accepted.setdefault(model, deque())
        while window and window[0] <= now - self.minute_s:
            window.popleft()
        if len(window) < self.rpm:
            window.append(now)
            return None
        self.over_quota += 1
        return window[0] + self.minute_s - now

    def _quota_details(self, model: str, retry_in: float) -> list[dict[str, Any]]:
        return [
            {
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [{
                    "quotaMetric": "generativelanguage.googleapis.com/generate_content_requests",
                    "quotaId": "GenerateRequestsPerMinutePerProjectPerModel",
                    "quotaDimensions": {"location": "global", "model": model},
                    "quotaValue": str(self.rpm),
                }],
            },
            {"@type": "type.googleapis.com/google.rpc.Help", "links": [{"description": "Learn more about Gemini API quotas", "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]},
            # Protobuf's Duration in JSON: whole seconds as the API writes them ("26s"), finer for a shorter stand-in minute.
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{max(retry_in, 0.001):.3f}".rstrip("0").rstrip(".") + "s"},
        ]  # fmt: skip

    def close(self) -> None:
        self.httpd.shutdown()
