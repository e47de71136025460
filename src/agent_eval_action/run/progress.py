"""Progress of a long run: a live line on a terminal, sparse lines in CI logs when asked."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO


class Progress:
    def __init__(self, label: str, total: int, *, stream: TextIO | None = None, mode: str = "auto"):
        """``mode``: ``auto`` (live on a terminal, silent otherwise), ``always`` (lines in logs too), ``never``."""
        self.label, self.total = label, total
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.enabled = mode == "always" or (mode == "auto" and self.tty)
        self.start = time.monotonic()
        self.done = self.errors = 0
        self._last = 0.0
        self._last_logged_tenth = -1
        # More to say on the line, asked each time it is drawn (the concurrency reached).
        self.detail: Callable[[], str] | None = None

    def set_done(self, done: int) -> None:
        self.done = done - 1
        self.update()

    def update(self, *, error: bool = False) -> None:
        self.done += 1
        self.errors += error
        if not self.enabled:
            return
        now = time.monotonic()
        if self.tty:
            if now - self._last >= 0.1 or self.done == self.total:
                self._last = now
                print(f"\r\033[K{self._line(now)}", end="", file=self.stream, flush=True)
        else:
            tenth = self.done * 10 // self.total if self.total else self.done // 1000
            if tenth != self._last_logged_tenth:
                self._last_logged_tenth = tenth
                print(self._line(now), file=self.stream, flush=True)

    def close(self) -> None:
        if self.enabled and self.tty:
            print(f"\r\033[K{self._line(time.monotonic())}", file=self.stream, flush=True)

    def _line(self, now: float) -> str:
        errors = f", {self.errors} error{'s' if self.errors != 1 else ''}" if self.errors else ""
        of = f"/{self.total}" if self.total else ""
        detail = f", {self.detail()}" if self.detail is not None else ""
        runs = "run" if (self.total or self.done) == 1 else "runs"
        return f"{self.label}: {self.done}{of} {runs}{errors}, {now - self.start:.1f}s{detail}"
