"""The cyclic garbage collector while scoring: paused, and a large result frozen out of its later
scans only when the process is ours. Who owns the process says which (the command line does; a
library call leaves the caller's collector as it found it)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Collector:
    """``freeze_above``: after scoring that left more new objects than this, they are frozen out
    of the collector's scans (reference counting still frees them); None: never frozen."""

    freeze_above: int | None = None


# A library call: the caller's collector is paused while scoring and handed back as it was.
LIBRARY = Collector()
# The command line's own process: a large result is kept out of every later scan.
OWN_PROCESS = Collector(freeze_above=200_000)
# The collector's thresholds in a process the command line started (``python -m agent_eval_action``,
# ``agent-eval``): young objects scanned a little less often (every 2,000 new ones, not 700), the
# whole heap seldom (after 100 scans of the middle generation, not 10). A PR check of 10,000
# questions holds millions of objects to its end (its baseline parsed, its runs scored, compared
# and shown): with the defaults it scanned them all 34 times, 5.9 s of its 26; now twice, 0.7 s.
COMMAND_LINE_THRESHOLDS = (2_000, 10, 100)


# What a command made, held to the end of a process the command line started: that process ends
# with os._exit once its command is done (``cli.main.entry``), so its memory goes back whole then,
# where freeing it object by object as the command returned cost 0.4 s of a 20,000-row evaluation.
_KEPT: list[object] = []
_EXITS_WHOLE = False


def for_command_line() -> None:
    """The collector of a process the command line started: :data:`COMMAND_LINE_THRESHOLDS`, and
    what :func:`kept_to_exit` is given held to its end. Not for a library call (its caller's
    collector and memory are its own), nor a command run inside another process."""
    global _EXITS_WHOLE
    gc.set_threshold(*COMMAND_LINE_THRESHOLDS)
    _EXITS_WHOLE = True


def kept_to_exit(value: T) -> T:
    """``value``, held to the end of the process when the command line started it
    (:func:`for_command_line`): then it is never freed object by object, only returned whole by
    the exit. Elsewhere (a library call, the tests' in-process commands) nothing is held."""
    if _EXITS_WHOLE:
        _KEPT.append(value)
    return value


@contextmanager
def few_collections(policy: Collector) -> Iterator[None]:
    # Scoring allocates many small objects that all live to the end of the run: the cyclic
    # collector would rescan the growing heap again and again for nothing (3 s of 20 at 20,000
    # rows). It pauses while scoring.
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if policy.freeze_above is not None and gc.get_count()[0] > policy.freeze_above:
                gc.freeze()
            gc.enable()
