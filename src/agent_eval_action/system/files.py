"""Writing what we produce (results, views, baselines, converted datasets) whole or not at all,
and one run at a time per output directory.

Every file goes to a temporary file of its own (a unique name beside the target, so two
processes never share one) that is renamed over the target: a reader, a second run or a
SIGTERM / SIGKILL mid-write sees the old file or the new one, never a 0-byte or half-written one.
"""

from __future__ import annotations

import contextlib
import functools
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from agent_eval_action.system.errors import UsageError

LOCK_NAME = ".agent-eval.lock"


def write_atomic(path: str | Path, content: str | Iterable[str], *, newline: str | None = None) -> Path:
    """Writes ``content`` (text, or pieces of it) to ``path`` through a unique temporary file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path, newline=newline) as handle:
        if isinstance(content, str):
            handle.write(content)
        else:
            handle.writelines(content)
    return path


@contextlib.contextmanager
def atomic_file(path: Path, *, newline: str | None = None) -> Iterator[IO[str]]:
    """A text file to write that becomes ``path`` when the block ends without an error."""
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name[:100]}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp makes it private (0600); the file is for others too (a later step of the job
        # running as another user reads what the container wrote), as open() would have made it.
        os.chmod(descriptor, 0o666 & ~_umask())
        with open(descriptor, "w", encoding="utf-8", newline=newline) as handle:
            yield handle
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


@functools.cache
def _umask() -> int:
    """This process's umask, read where it can be read without setting it (Linux), else set and
    put back once."""
    with contextlib.suppress(OSError, ValueError, StopIteration), open("/proc/self/status", encoding="ascii") as status:
        return int(next(line for line in status if line.startswith("Umask:")).split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class OutputDirInUse(UsageError):
    """Another run writes the same output directory now."""


@contextlib.contextmanager
def output_lock(folder: str | Path) -> Iterator[None]:
    """Holds ``folder`` (made if missing) for this run: a second run that asks for it while this
    one holds it is refused (:class:`OutputDirInUse`, exit 2), rather than both writing the same
    files. The lock (``flock`` on a file in the folder) ends with the process, however it ends."""
    try:
        import fcntl
    except ImportError:  # not on POSIX: no lock to take
        yield
        return
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    handle = open(folder / LOCK_NAME, "a+", encoding="utf-8")  # noqa: SIM115 - held until the block ends
    try:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            raise OutputDirInUse(
                f"--output-dir {folder}: another run (process {holder}) is writing there now; "
                "give this run an output directory of its own, or wait for that one to finish"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        yield
    finally:
        handle.close()  # the lock goes with it; the file stays (removing it would race a new holder)


def read_only(top: Path) -> None:
    """Every file and folder under ``top`` (and ``top``) without write permission: what a
    process of ours does not change by mistake (the same user can put it back: callers that
    must know hash what is there too)."""
    for root, dirs, files in os.walk(top):
        for name in [*files, *dirs]:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                os.chmod(path, os.lstat(path).st_mode & ~0o222)
    os.chmod(top, os.lstat(top).st_mode & ~0o222)


def writable(top: Path) -> None:
    """The folders under ``top`` (and ``top``) writable again by their owner, so they can be removed."""
    for root, dirs, _ in os.walk(top):
        for name in dirs:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                os.chmod(path, os.lstat(path).st_mode | 0o700)
    if top.exists():
        os.chmod(top, os.lstat(top).st_mode | 0o700)
