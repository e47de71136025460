"""Stopping a run on Ctrl-C (SIGINT) or SIGTERM (what GitHub sends when a job is cancelled).

The command line installs :func:`handling_signals` around a command. The first signal does not
raise anything into the code that happens to run: it kills the agent's workers at once (the
callbacks given to :func:`on_stop`), wakes the event loops waiting on :func:`stopped`, and lets
the run finish what it holds: the questions that finished are scored and written, the rest are
skipped as "interrupted" (``run_pool`` and ``evaluation`` ask :func:`requested`). A second signal
ends the process at once. Without the command line's handlers (the Python API), Ctrl-C raises
KeyboardInterrupt as usual: nothing here is switched on.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable, Iterator
from types import FrameType

REASON = "interrupted"
SIGNALS = (signal.SIGINT, signal.SIGTERM)

_received: list[int] = []
_callbacks: list[Callable[[], None]] = []


def requested() -> int | None:
    """The signal that asked this process to stop, if one did."""
    return _received[0] if _received else None


def exit_code(signum: int) -> int:
    """The shell's convention: 128 + the signal's number (130 for SIGINT, 143 for SIGTERM)."""
    return 128 + signum


def on_stop(callback: Callable[[], None]) -> Callable[[], None]:
    """Calls ``callback`` when a stop is requested (at once if one was), from the signal handler:
    it must not block or await. Returns the function that takes the callback back."""
    _callbacks.append(callback)
    if _received:
        callback()

    def forget() -> None:
        with contextlib.suppress(ValueError):
            _callbacks.remove(callback)

    return forget


def stopped() -> asyncio.Future[int]:
    """A future of the running loop, done (with the signal's number) once a stop is requested."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[int] = loop.create_future()

    def wake() -> None:
        def settle() -> None:
            if not future.done():
                future.set_result(_received[0])

        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits on it
            loop.call_soon_threadsafe(settle)

    forget = on_stop(wake)
    future.add_done_callback(lambda _: forget())
    return future


def _handle(signum: int, frame: FrameType | None) -> None:
    if os.getpid() != _owner[0]:
        return  # a forked child of ours (the scoring pool): the parent decides
    if _received:
        os._exit(exit_code(_received[0]))  # the second signal: at once, nothing more is written
    _received.append(signum)
    for callback in list(_callbacks):
        with contextlib.suppress(Exception):
            callback()


_owner = [0]


@contextlib.contextmanager
def handling_signals() -> Iterator[None]:
    """SIGINT and SIGTERM stop the run as the module's doc says, until the block ends."""
    _owner[0] = os.getpid()
    _received.clear()
    before = {signum: signal.signal(signum, _handle) for signum in SIGNALS}
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
        _callbacks.clear()
