"""Nothing the agent starts outlives the run.

Each agent worker runs in a session of its own, killed whole when the worker ends
(``run.workers.start.kill_session``); a process that starts a session of its own (``setsid``, a
daemon's double fork) leaves it. So the command line makes its process the *child subreaper*
(Linux ``prctl(PR_SET_CHILD_SUBREAPER)``): whatever is orphaned below it is re-parented to it,
not to init, and stays its descendant, where :func:`reap` finds and kills it when the run's
agent processes are closed (before any output is written) and again before the process exits.
A background process can then never rewrite results.json, comment.md or ``$GITHUB_OUTPUT``
after the verdict.

The flag is process-wide, so only the command line sets it, for the command's time
(:func:`subreaping`, which puts it back as it was): a library call leaves its caller as it found
it, and :func:`reap` does nothing there; even under the command line it spares the descendants
the process had before the command began (a caller's own, when ``main()`` is called in-process).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterator

PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
PR_GET_CHILD_SUBREAPER = 37
_ROUNDS = 200  # scans until every descendant is gone (a process may fork while we kill)

# While the command line runs: the descendants this process had before (a caller's own, which
# are not ours to kill). None: no command runs here, and reap() does nothing.
_before: frozenset[int] | None = None


def _prctl(option: int, value: object) -> bool:
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(option, value, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


@contextlib.contextmanager
def subreaping() -> Iterator[bool]:
    """This process as the subreaper of what starts below it while the block runs (Linux;
    elsewhere nothing): at the end, :func:`reap`, and the flag as it was before. Yields whether
    this process is the subreaper now. For the command line only (see the module's docstring)."""
    global _before
    if _before is not None or not sys.platform.startswith("linux"):
        yield _before is not None
        return
    import ctypes

    previous = ctypes.c_int(0)
    _prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(previous))
    if not _prctl(PR_SET_CHILD_SUBREAPER, 1):
        yield False
        return
    _before = frozenset(descendants(os.getpid()))
    try:
        yield True
    finally:
        try:
            reap()
        finally:
            _before = None
            _prctl(PR_SET_CHILD_SUBREAPER, previous.value)


def reap() -> list[int]:
    """SIGKILL to every living descendant of this process that came since :func:`subreaping`
    began (outside it, nothing): called once the run's own children are closed, so whatever is
    left is the agent's. Returns the process ids killed."""
    if _before is None:
        return []
    killed: list[int] = []
    for _ in range(_ROUNDS):
        living = [pid for pid in descendants(os.getpid()) if pid not in _before]
        if not living:
            break
        for pid in living:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
            if pid not in killed:
                killed.append(pid)
        time.sleep(0.01)  # let the kernel end them (and re-parent their children to us)
    return killed


def process_table() -> dict[int, tuple[bytes, int, int]]:
    """Every process's state, parent and session, by process id, from /proc (elsewhere: none)."""
    table: dict[int, tuple[bytes, int, int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return table
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # pid (comm) state ppid pgrp session ...: comm may hold spaces and parentheses.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 3:
            table[int(entry)] = (fields[0], int(fields[1]), int(fields[3]))
    return table


def descendants(root: int) -> list[int]:
    """The living (not zombie) processes below ``root``, from /proc."""
    table = process_table()
    children: dict[int, list[int]] = {}
    for pid, (_, parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    out, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        if table[pid][0] not in (b"Z", b"X"):
            out.append(pid)
        todo += children.get(pid, [])
    return out
