"""The warm start: the agent's workers forked by a zygote that imported ADK and loaded the agent
once (``agent_worker/zygote.py``), instead of each spawned to import them again.

:class:`Zygote` adopts that process, started as a worker would be started (the same
interpreter, folder and environment) with a Unix socket for its stdin (``launch.py``: without an
event loop, so the command line's early start launches it before asyncio is imported), and
:meth:`Zygote.fork` passes it the new worker's three pipes and returns a :class:`ForkedProcess`,
which the pool uses as it uses a spawned worker's ``asyncio.subprocess.Process``. The worker is
the zygote's child, not ours: the zygote says when it ends (and with what code); should the
zygote itself end first, a ``pidfd`` says when each worker it had does.

:meth:`Zygote.fork` returns None when the zygote forks nothing: it found forking unsafe after
loading the agent (a thread or a socket it started: ``zygote.unsafe``), the agent did not load
(the spawned worker says why, with its output), or the zygote is gone. The pool then spawns,
and the reason is logged once.

Only the standard library, the worker's protocol, ``start`` and ``launch`` are imported here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import subprocess
import threading
from typing import Any

from agent_eval_action.agent_worker import protocol
from agent_eval_action.run.workers.launch import Launched, launch_zygote
from agent_eval_action.run.workers.start import LINE_LIMIT, WorkerSettings, kill_session

log = logging.getLogger(__name__)
# A worker whose end the zygote could not report (it was gone first): its exit code is unknown.
UNKNOWN_EXIT = 1


class Forked:
    """What is used of ``asyncio.subprocess.Process`` for a process another one forked (a zygote's
    worker; a zygote a template forked, ``template.py``): not our child, so the forker says when it
    ends, or a pidfd does (its code then unknown)."""

    def __init__(self, pid: int, stdout: asyncio.StreamReader, ended: asyncio.Future[int]):
        self.pid = pid
        self.stdout = stdout
        self._ended = ended

    @property
    def returncode(self) -> int | None:
        return self._ended.result() if self._ended.done() else None

    async def wait(self) -> int:
        return await asyncio.shield(self._ended)


class ForkedProcess(Forked):
    """What the pool uses of ``asyncio.subprocess.Process``, for a worker the zygote forked."""

    def __init__(
        self, pid: int, stdin: asyncio.StreamWriter, stdout: asyncio.StreamReader, stderr: asyncio.StreamReader, ended: asyncio.Future[int]
    ):
        super().__init__(pid, stdout, ended)
        self.stdin = stdin
        self.stderr = stderr

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self.pid, signal.SIGKILL)


class Zygote:
    """One zygote process and the workers it forked."""

    def __init__(self, process: Forked, control: socket.socket):
        self.process = process
        self.control = control
        loop = asyncio.get_running_loop()
        # True once it can fork; else why not (said once).
        self.state: asyncio.Future[bool | str] = loop.create_future()
        self.forks: dict[int, asyncio.Future[int]] = {}
        self.ends: dict[int, asyncio.Future[int]] = {}
        self.numbers = 0
        self.stopping = False
        self.ended = False  # its output closed: it forks no more
        self.reader = asyncio.ensure_future(self._read())

    @classmethod
    async def start(cls, settings: WorkerSettings, files: Any) -> Zygote:
        """The zygote of ``settings``'s workers, started (raises OSError as spawning does)."""
        return await cls.adopt(launch_zygote(settings, files))

    @classmethod
    async def adopt(cls, launched: Launched) -> Zygote:
        """The zygote ``launch.launch_zygote`` started (before this loop was there, maybe), on the
        running loop: its output read, its end seen (with its code when it is our child). Killed
        when that fails, or the caller is cancelled meanwhile."""
        if launched.refused is not None:
            log.debug("the zygote is started fresh: %s", launched.refused)
        loop = asyncio.get_running_loop()
        # The reader's file object owns the descriptor from here, and closes it, whatever happens.
        stdout_fd, launched.stdout = launched.stdout, -1
        try:
            stdout = await _reader(loop, stdout_fd)
            ended: asyncio.Future[int] = loop.create_future()
            _watch_end(launched.pid, ended, launched.popen)
            return cls(Forked(launched.pid, stdout, ended), launched.control)
        except BaseException:
            launched.kill()
            raise

    async def warm(self, timeout_s: float | None = None) -> bool:
        """Whether the zygote forks (waits until it has loaded the agent); raises TimeoutError,
        and kills it, when loading takes longer than ``timeout_s``."""
        try:
            return (await asyncio.wait_for(asyncio.shield(self.state), timeout_s)) is True
        except TimeoutError:
            self.kill_now()
            raise

    async def fork(self, timeout_s: float | None = None) -> ForkedProcess | None:
        """A new worker, or None when the zygote forks none (spawn one instead); TimeoutError
        when it did not load the agent within ``timeout_s``."""
        if not await self.warm(timeout_s) or self.stopping or self.ended:
            return None
        loop = asyncio.get_running_loop()
        pipes = [os.pipe() for _ in range(3)]  # stdin, stdout, stderr
        theirs = [pipes[0][0], pipes[1][1], pipes[2][1]]
        number, self.numbers = self.numbers, self.numbers + 1
        forked = self.forks[number] = loop.create_future()
        try:
            socket.send_fds(self.control, [protocol.encode(protocol.fork(number)).encode()], theirs)
        except OSError:
            self.forks.pop(number, None)
            for fd in (*pipes[0], *pipes[1], *pipes[2]):
                os.close(fd)
            return None
        for fd in theirs:
            os.close(fd)
        ours = [pipes[0][1], pipes[1][0], pipes[2][0]]
        try:
            pid = await forked
        except (ConnectionError, asyncio.CancelledError) as error:
            for fd in ours:
                os.close(fd)
            if isinstance(error, asyncio.CancelledError):
                raise
            return None
        try:
            return await _process(loop, pid, ours, self.ends.setdefault(pid, loop.create_future()))
        except BaseException:
            kill_session(pid)
            raise

    async def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        why = "the warm-start process ended before it loaded the agent"
        # A load that failed is the spawned worker's to say, with its output: no warning of ours.
        unsafe = False
        while True:
            try:
                line = await stream.readline()
            except ValueError:
                break
            if not line:
                break
            message = protocol.decode(line)
            if message is None:
                continue
            if protocol.WARM in message and not self.state.done():
                self.state.set_result(True)
            elif protocol.COLD in message:
                why, unsafe = str(message[protocol.COLD]), True
                break
            elif protocol.FATAL in message:
                why = "the agent did not load in the warm-start process"
                break
            elif protocol.FORKED in message:
                number, pid = message[protocol.FORKED]
                self.ends.setdefault(pid, asyncio.get_running_loop().create_future())
                waiter = self.forks.pop(number, None)
                if waiter is not None and not waiter.done():
                    waiter.set_result(pid)
                if self.stopping:
                    kill_session(pid)
            elif protocol.EXITED in message:
                pid, code = message[protocol.EXITED]
                ended = self.ends.pop(pid, None)
                if ended is not None and not ended.done():
                    ended.set_result(int(code))
        self.ended = True
        if not self.state.done():
            self.state.set_result(why)
            log.log(
                logging.WARNING if unsafe else logging.INFO,
                "the agent's workers are spawned, not forked: %s (warm-start = false says so without trying)",
                why,
            )
        elif not self.stopping:
            log.warning("the warm-start process ended: the agent's workers are spawned from now on")
        for waiter in self.forks.values():
            if not waiter.done():
                waiter.set_exception(ConnectionError("the warm-start process ended"))
                waiter.exception()
        self.forks.clear()
        for pid, ended in self.ends.items():
            if not ended.done():
                _watch_end(pid, ended)

    def kill_now(self) -> None:
        """Kills the zygote at once (from a signal handler too); workers it forks later are killed."""
        self.stopping = True
        kill_session(self.process.pid)

    async def close(self) -> None:
        """Ends the zygote (its workers are the pool's to end first)."""
        self.stopping = True
        self.control.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.process.wait(), 5)
        kill_session(self.process.pid)
        await asyncio.gather(self.reader, return_exceptions=True)


async def _process(loop: asyncio.AbstractEventLoop, pid: int, fds: list[int], ended: asyncio.Future[int]) -> ForkedProcess:
    stdin_w, stdout_r, stderr_r = fds
    stdout, stderr = await _reader(loop, stdout_r), await _reader(loop, stderr_r)
    transport, flow = await loop.connect_write_pipe(lambda: _Flow(loop), os.fdopen(stdin_w, "wb", 0))
    return ForkedProcess(pid, asyncio.StreamWriter(transport, flow, None, loop), stdout, stderr, ended)


async def _reader(loop: asyncio.AbstractEventLoop, fd: int) -> asyncio.StreamReader:
    """The read end ``fd`` of a pipe as a stream of the loop (lines up to LINE_LIMIT)."""
    reader = asyncio.StreamReader(limit=LINE_LIMIT, loop=loop)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader, loop=loop), os.fdopen(fd, "rb", 0))
    return reader


class _Flow(asyncio.streams.FlowControlMixin):
    """The write side's protocol: ``drain`` waits while the pipe is full."""


def _watch_end(pid: int, ended: asyncio.Future[int], popen: subprocess.Popen[bytes] | None = None) -> None:
    """Sets ``ended`` when ``pid`` ends, as a pidfd says. ``popen``: it is our child, and its code
    is what waiting for it gives (which reaps it); else (a zygote's worker, the zygote being gone;
    a zygote the template forked) its code is unknown. Without a pidfd our child is waited for by
    a thread, and another's end is taken as come. No thread where there is a pidfd: a process with
    one more thread, forked later (the scorer's processes), is what Python 3.12 warns about."""
    loop = asyncio.get_running_loop()

    def settle(code: int) -> None:
        if not ended.done():
            ended.set_result(code)

    try:
        fd = os.pidfd_open(pid)  # a child of ours not waited for yet is there even if it has ended
    except (OSError, AttributeError):
        if popen is None:
            settle(UNKNOWN_EXIT)  # gone already (or no pidfd here)
            return

        def wait() -> None:
            code = popen.wait()
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits for it any more
                loop.call_soon_threadsafe(settle, code)

        threading.Thread(target=wait, name="agent-eval-zygote-end", daemon=True).start()
        return

    def done() -> None:
        loop.remove_reader(fd)
        os.close(fd)
        settle(UNKNOWN_EXIT if popen is None else popen.wait())  # ended: waiting reaps it at once

    loop.add_reader(fd, done)
