"""The zygote's process started without an event loop (``zygote.py`` adopts it into one): the
command line's early start launches it before ``asyncio`` is imported (some 20 ms a process, which
the zygote's own start then no longer waits behind), and the pool's own start the same way.

The zygote is forked by the template ``AGENT_EVAL_ZYGOTE_TEMPLATE`` names where that one can
start it as a fresh interpreter would (``template.py``; the test suite's), else started fresh
with ``subprocess``, as ``python -m agent_eval_worker`` in a session of its own. Either way its
stdin is one end of a Unix socket pair (the other end, ours, carries the fork requests) and its
stdout a pipe whose read end is ours.

Only the standard library, the worker's protocol, ``start`` and ``template`` are imported here.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from agent_eval_action.agent_worker import protocol
from agent_eval_action.run.workers.start import PACKAGE, WorkerSettings, kill_session, worker_env
from agent_eval_action.run.workers.template import ENV_TEMPLATE, close_ends, ignored_signals

# A template answers at once (it forks and says so); beyond this the zygote is started fresh.
TEMPLATE_TIMEOUT_S = 10.0


@dataclass
class Launched:
    """A zygote's process, started: its id, the read end of its stdout, our end of its control
    socket, ``popen`` when it is our child (None: the template forked it, and is its parent), and
    why the template named in the environment did not fork it (logged where it is adopted: no
    logging is imported here)."""

    pid: int
    stdout: int
    control: socket.socket
    popen: subprocess.Popen[bytes] | None
    refused: str | None = None

    def kill(self) -> None:
        """Ends it and closes our ends (a launch nobody adopted, or whose adoption failed)."""
        kill_session(self.pid)
        close_ends(self.control, self.stdout)
        if self.popen is not None:
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                self.popen.wait(5)


def launch_zygote(settings: WorkerSettings, files: Path) -> Launched:
    """The zygote of ``settings``'s workers, its files in ``files`` (``start.worker_files``);
    raises OSError as starting a process does."""
    env = worker_env(settings, files)
    env[protocol.ENV_ZYGOTE] = "1"
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    read = write = -1
    try:
        read, write = os.pipe()
        pid, refused = _from_template(settings, env, theirs, write)
        if pid is not None:
            return Launched(pid, read, ours, None)
        if os.environ.get(ENV_TEMPLATE):
            # The template may have forked one after all (its answer late): that one holds this
            # pair's end and this pipe's, and ends when ours close; the fresh zygote gets its own.
            close_ends(ours, theirs, read, write)
            read = write = -1
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            read, write = os.pipe()
        popen = subprocess.Popen(
            [settings.python, "-m", PACKAGE],
            stdin=theirs.fileno(),
            stdout=write,
            stderr=subprocess.DEVNULL,  # the agent's import output: each worker's own start says it again if it fails
            cwd=settings.cwd,
            env=env,
            start_new_session=True,  # a Ctrl-C in the terminal is ours to handle, not the agent's
        )
    except BaseException:
        close_ends(ours, read)
        raise
    finally:
        close_ends(theirs, write)
    return Launched(popen.pid, read, ours, popen, refused)


def _from_template(settings: WorkerSettings, env: dict[str, str], stdin: socket.socket, stdout: int) -> tuple[int | None, str | None]:
    """The process id of the zygote the template forked, or None and why (none is named: no
    reason; it is gone, or it cannot start this zygote as a fresh interpreter would start)."""
    path = os.environ.get(ENV_TEMPLATE)
    if not path:
        return None, None
    request = json.dumps({"python": settings.python, "cwd": str(settings.cwd), "env": env, "ignored": ignored_signals()}).encode()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as connection:
            connection.settimeout(TEMPLATE_TIMEOUT_S)
            connection.connect(path)
            socket.send_fds(connection, [request], [stdin.fileno(), stdout])
            answer = json.loads(connection.recv(4096) or b"{}")
    except (OSError, ValueError) as error:
        answer = {"refused": f"the template did not answer ({error})"}
    pid = answer.get("pid")
    if not isinstance(pid, int):
        return None, str(answer.get("refused") or "it forked none")
    return pid, None
