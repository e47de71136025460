"""The cyclic garbage collector while scoring: paused, and a large result frozen out of its later
scans only when the process is ours. Who owns the process says which (the command line does; a
library call leaves the caller's collector as it found it)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


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


def for_command_line() -> None:
    """The collector of a process the command line started: :data:`COMMAND_LINE_THRESHOLDS`. Not
    for a library call (its caller's collector is its own), nor a command run inside another process."""
    gc.set_threshold(*COMMAND_LINE_THRESHOLDS)


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
