"""Logging: the package logs under ``agent_eval_action``; a library call prints nothing (a
NullHandler), the command line shows warnings and errors (``--quiet``: errors only;
``--verbose``: what it is doing too).

What a run reports (problems, the verdict, the tables) is output, not logging; logs are the
warnings and the diagnostics around it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

LOGGER = "agent_eval_action"
log = logging.getLogger(LOGGER)
log.addHandler(logging.NullHandler())  # a library prints nothing unless its caller asks


class _Prefixed(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        prefix = {logging.WARNING: "warning: ", logging.ERROR: "error: ", logging.DEBUG: "debug: "}.get(record.levelno, "")
        return prefix + super().format(record)


@contextmanager
def cli_logging(stream: TextIO, *, verbose: bool = False, quiet: bool = False) -> Iterator[None]:
    """The command line's handler on ``stream`` for the length of one command; removed after, so
    the process (and a test calling ``cli.main``) is left as found."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(_Prefixed("%(message)s"))
    level = logging.ERROR if quiet else logging.DEBUG if verbose else logging.WARNING
    before = log.level, log.propagate
    log.addHandler(handler)
    log.setLevel(level)
    log.propagate = False
    try:
        yield
    finally:
        log.removeHandler(handler)
        log.setLevel(before[0])
        log.propagate = before[1]
