"""Real renderers for tests and screenshots: GitHub's markdown renderer (cmark-gfm) and a
headless Chromium driven over the DevTools protocol (websockets, which google-genai installs).

Tests that need them skip locally with a message saying how to install them, and fail on CI
(``CI=true``), where ``.ci/run`` installs both.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# How long to wait for Chromium's start and its answers: waits for events, never a limit a test
# sits out, so generous for a busy machine with two test workers beside the browser.
WAIT_S = 120.0
INSTALL = "apt-get install -y cmark-gfm chromium (Debian/Ubuntu)"
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--remote-debugging-port=0",
)


def cmark_gfm() -> str | None:
    return shutil.which("cmark-gfm")


def chromium() -> str | None:
    return next((found for name in CHROMIUM_NAMES if (found := shutil.which(name))), None)


def require(tool: str, path: str | None, what: str, install: str = INSTALL) -> str:
    """``path``, else skip the test saying what is skipped and how to install it (fail on CI)."""
    import pytest

    if path:
        return path
    message = f"{tool} is not installed, so {what} is skipped; install it with: {install}"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message} (CI must run this: .ci/run installs it)")
    raise pytest.skip.Exception(message)


def markdown_to_html(markdown: str, binary: str) -> str:
    """The comment as GitHub renders it: cmark-gfm with GitHub's extensions, raw HTML kept
    (GitHub's sanitizer runs after; ``--unsafe`` shows what would reach it)."""
    done = subprocess.run(
        [binary, "--unsafe", "-e", "table", "-e", "strikethrough", "-e", "autolink", "-e", "tagfilter", "-t", "html"],
        input=markdown,
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return done.stdout


class Page:
    """One browser tab: send DevTools commands, read the events they cause."""

    def __init__(self, socket: Any, session: str, counter: Iterator[int]):
        self.socket = socket
        self.session = session
        self.counter = counter
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, timeout: float = WAIT_S, **params: Any) -> dict[str, Any]:
        ident = next(self.counter)
        self.socket.send(json.dumps({"id": ident, "sessionId": self.session, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while True:
            message: dict[str, Any] = json.loads(self.socket.recv(timeout=max(deadline - time.monotonic(), 0.01)))
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))
            if "method" in message:
                self.events.append(message)

    def wait_for(self, method: str, timeout: float = WAIT_S) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        for event in self.events:
            if event["method"] == method:
                return event
        while True:
            message: dict[str, Any] = json.loads(self.socket.recv(timeout=max(deadline - time.monotonic(), 0.01)))
            if "method" in message:
                self.events.append(message)
                if message["method"] == method:
                    return message

    def open(self, url: str, width: int = 1280, height: int = 900) -> None:
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        # A URL differing only in its fragment would not load the page again: leave it first.
        self.events.clear()
        self.call("Page.navigate", url="about:blank")
        self.wait_for("Page.loadEventFired")
        self.events.clear()
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")
        self.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result.get("result", {}).get("value")

    def problems(self) -> list[str]:
        """Console errors and warnings, uncaught exceptions, and browser log errors (CSP refusals among them)."""
        found = []
        for event in self.events:
            params = event.get("params", {})
            if event["method"] == "Runtime.exceptionThrown":
                found.append(f"exception: {params.get('exceptionDetails', {}).get('text')}")
            elif event["method"] == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning", "assert"):
                found.append(f"console.{params['type']}: {[a.get('value', a.get('description')) for a in params.get('args', [])]}")
            elif event["method"] == "Log.entryAdded" and params.get("entry", {}).get("level") in ("error", "warning"):
                found.append(f"log: {params['entry'].get('text')}")
        return found

    def requests(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events if e["method"] == "Network.requestWillBeSent"]

    def screenshot(self, path: Path, width: int, selector: str | None = None, max_height: int = 2400) -> Path:
        """A PNG of the page (or of one element) at ``width`` CSS pixels."""
        if selector:
            box = self.evaluate(
                f"(() => {{ const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
                " return [r.x + scrollX, r.y + scrollY, r.width, r.height]; })()"
            )
        else:
            box = [0, 0, width, self.evaluate("document.documentElement.scrollHeight")]
        x, y, w, h = box
        h = min(h, max_height)
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=int(y + h) + 1, deviceScaleFactor=1, mobile=False)
        shot = self.call(
            "Page.captureScreenshot", format="png", clip={"x": x, "y": y, "width": w, "height": h, "scale": 1}, captureBeyondViewport=True
        )
        path.write_bytes(base64.b64decode(shot["data"]))
        return path


@contextmanager
def browser(binary: str) -> Iterator[Page]:
    """A headless Chromium with a fresh profile and no network of its own; yields one tab."""
    from websockets.sync.client import connect

    profile = tempfile.mkdtemp(prefix="agent-eval-chromium-")
    process = subprocess.Popen(
        [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        port_file = Path(profile) / "DevToolsActivePort"
        deadline = time.monotonic() + WAIT_S
        while not (port_file.is_file() and port_file.read_text().count("\n") >= 1):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{binary} did not start its DevTools endpoint (exit {process.poll()})")
            time.sleep(0.05)
        port, path = port_file.read_text().split("\n")[:2]
        with connect(f"ws://127.0.0.1:{port}{path}", max_size=64 * 2**20, open_timeout=WAIT_S) as socket:
            counter = itertools.count(1)

            def send(method: str, **params: Any) -> dict[str, Any]:
                ident = next(counter)
                socket.send(json.dumps({"id": ident, "method": method, "params": params}))
                while True:
                    message = json.loads(socket.recv(timeout=WAIT_S))
                    if message.get("id") == ident:
                        return dict(message.get("result", {}))

            target = send("Target.createTarget", url="about:blank")["targetId"]
            session = send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
            yield Page(socket, session, counter)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(profile, ignore_errors=True)
