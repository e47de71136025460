"""One agent worker as the pool sees it: its process, the questions in flight on it, the JSON
lines it answers with (read as they come), its model calls' permits, and one question asked with
its time counted from when the worker starts it, cancelled, or the worker killed.

Which worker runs what, and starting and replacing them, is the pool's (``pool.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agent_eval_action.agent_worker import protocol
from agent_eval_action.run.pacing import Pacer
from agent_eval_action.run.workers.start import kill_session
from agent_eval_action.run.workers.zygote import ForkedProcess

STDERR_LINES = 20
# How long a worker whose question's time ran out has to confirm it cancelled it; one that
# cannot is stuck (a blocking call in its event loop) and is killed. A worker that said its loop
# is stalled gets no grace: it cannot read the cancel. Nothing is decided by a race of these
# with another timer: a worker killed too early only makes its questions run again alone.
CANCEL_GRACE_S = 5.0


class WorkerDied(Exception):
    """The agent's process ended (or was stopped) while a question was in flight."""

    plain = True  # its message is the question's error as it stands


class NotStarted(Exception):
    """The worker ended before it read the question: another worker can take it."""


class Suspect(Exception):
    """The worker died with several questions in flight: this one runs again alone to find out."""


class RemoteError(Exception):
    """What the agent raised in the worker, carried over: type name, message, status code, and
    where it was raised (``protocol.ORIGINS``; an older worker's error, which says none: the agent's)."""

    def __init__(self, type_name: str, message: str, code: int | None, origin: str = protocol.AGENT):
        super().__init__(message)
        self.remote_type = type_name
        self.code = code
        setattr(self, protocol.ORIGIN_ATTRIBUTE, origin if origin in protocol.ORIGINS else protocol.AGENT)


def remote_error(error: dict[str, Any]) -> RemoteError:
    return RemoteError(
        str(error.get(protocol.TYPE, "Error")),
        str(error.get(protocol.MESSAGE, "")),
        error.get(protocol.CODE),
        str(error.get(protocol.ORIGIN, protocol.AGENT)),
    )


def timed_out(origin: str) -> TimeoutError:
    """A question's time ran out: in a model call waiting for its reply (``protocol.MODEL``), or
    in the agent (``protocol.AGENT``)."""
    error = TimeoutError()
    setattr(error, protocol.ORIGIN_ATTRIBUTE, origin)
    return error


# Exit codes of a worker killed by a signal a process sends (a crash signals SIGSEGV or SIGABRT).
OUTSIDE_SIGNALS = frozenset(-s for s in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT))


def _exit_reason(code: int | None) -> str:
    if code is None:
        return "ended"
    if code < 0:
        try:
            return f"was killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


@dataclass(eq=False)
class _Call:
    """One question sent to a worker: ``started`` when the worker read it, ``answer`` when done."""

    started: asyncio.Future[None]
    answer: asyncio.Future[dict[str, Any]]


@dataclass(eq=False, kw_only=True)
class Worker:
    process: asyncio.subprocess.Process | ForkedProcess
    # The run's pacing of model calls, which the worker's calls ask for permits.
    pacer: Pacer
    # What it loads, for the message when it ends while loading: "AGENT (with PYTHON)".
    loading: str
    # Hears the reason when a signal that nothing of ours sent killed it (we set a stop reason first).
    on_outside_kill: Callable[[str], None]
    pending: dict[int, _Call] = field(default_factory=dict)
    # The worker that runs suspects, one at a time: whatever kills it, its one question did.
    alone: bool = False
    stderr: deque[str] = field(default_factory=lambda: deque(maxlen=STDERR_LINES))
    ready: asyncio.Future[dict[str, Any]] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    stop_reason: str | None = None
    # The agent's code signalled its own process (protocol.SIGNALLED): a kill is then its doing.
    signalled_itself: bool = False
    dead: bool = False
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    # Set while the worker says its event loop is stalled (protocol.STALLED .. RUNNING).
    stalled: asyncio.Event = field(default_factory=asyncio.Event)
    # Its model calls' permits (the worker's numbers): being asked for, and granted.
    asking: dict[int, asyncio.Task[None]] = field(default_factory=dict)
    granted: dict[int, int] = field(default_factory=dict)

    def watch(self) -> Worker:
        """Starts reading its output and waiting for its end."""
        self.tasks = [
            asyncio.ensure_future(self._read()),
            asyncio.ensure_future(self._read_stderr()),
            asyncio.ensure_future(self._reap()),
        ]
        return self

    def tail(self) -> str:
        lines = [line for line in self.stderr if line.strip()]
        return ("; its last output: " + " | ".join(lines[-5:]))[:1500] if lines else ""

    # -- what it says ----------------------------------------------------------------------------

    async def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            try:
                line = await stream.readline()
            except ValueError:  # a line over the limit: nothing after it can be trusted
                break
            if not line:
                break
            message = protocol.decode(line)
            if message is not None:
                self._heard(message)
        self._ended(await self.process.wait())

    def _heard(self, message: dict[str, Any]) -> None:
        kind = protocol.kind(message)
        if kind in (protocol.READY, protocol.FATAL):
            if kind == protocol.READY:
                # Before any question: its first call knows whether to ask.
                for model, key in self.pacer.paced():
                    self._paced(model, key)
                self.pacer.listeners.add(self._paced)
            if not self.ready.done():
                self.ready.set_result(message)
        elif kind == protocol.EXITING:
            self.dead = True  # no new questions: it is on its way out
            if self.stop_reason is None:
                self.stop_reason = f"the agent process ended ({message[protocol.EXITING]})"
        elif kind == protocol.SIGNALLED:
            self.signalled_itself = True
        elif kind == protocol.STALLED:
            self.stalled.set()
        elif kind == protocol.RUNNING:
            self.stalled.clear()
        elif kind in (protocol.PERMIT, protocol.TOOK, protocol.SPENT):
            self._pace(message)
        elif kind == protocol.STARTED:
            call = self.pending.get(message.get(protocol.ID, -1))
            if call is not None and not call.started.done():
                call.started.set_result(None)
        else:
            call = self.pending.pop(message.get(protocol.ID, -1), None)
            if call is not None and not call.answer.done():
                call.answer.set_result(message)

    def _ended(self, code: int | None) -> None:
        """Its process ended: its permits given back, what was in flight settled (see the pool's doc)."""
        self.dead = True
        self.pacer.listeners.discard(self._paced)
        outside = self.stop_reason is None and code in OUTSIDE_SIGNALS and not self.signalled_itself
        if outside:
            self.on_outside_kill(_exit_reason(code))
        for asking in self.asking.values():
            asking.cancel()
        for permit in self.granted.values():
            self.pacer.spent(permit, protocol.OK)  # made, maybe: counted until a minute has passed
        self.granted.clear()
        reason = self.stop_reason or f"the agent process {_exit_reason(code)}"
        if not self.ready.done():
            self.ready.set_result(protocol.fatal(f"the agent process {_exit_reason(code)} while loading {self.loading}{self.tail()}"))
        running = [call for call in self.pending.values() if call.started.done()]
        for call in self.pending.values():
            if call.answer.done():
                continue
            if not call.started.done():
                call.answer.set_exception(NotStarted())
            elif len(running) == 1 or self.alone:
                died = WorkerDied(f"{reason} while running this question{self.tail()}")
                if outside:
                    setattr(died, protocol.ORIGIN_ATTRIBUTE, protocol.OUTSIDE)  # nothing the agent ran did it
                call.answer.set_exception(died)
            else:
                call.answer.set_exception(Suspect())
            call.answer.exception()  # retrieved here: a caller that left does not leave it unread
        self.pending.clear()

    def _paced(self, model: str, key: str) -> None:
        if not self.dead:
            self.send(protocol.pace(model, key))

    def _pace(self, message: dict[str, Any]) -> None:
        """A model call asks for a permit, or went without (its model not paced), or says what became of it."""
        for kind in (protocol.PERMIT, protocol.TOOK):
            if kind in message:
                body = message[kind]
                number = body.get(protocol.ID)
                if isinstance(number, int):
                    model, key = str(body.get(protocol.MODEL_NAME)), str(body.get(protocol.API_KEY_ID))
                    if kind == protocol.TOOK:
                        self.granted[number] = self.pacer.took(model, key)
                    else:
                        self.asking[number] = asyncio.ensure_future(self._grant(number, model, key))
                return
        body = message[protocol.SPENT]
        number = body.get(protocol.ID)
        asking = self.asking.pop(number, None)
        if asking is not None:
            asking.cancel()  # its question ended before the permit came
            return
        permit = self.granted.pop(number, None)
        if permit is not None:
            delay = body.get(protocol.RETRY_DELAY)
            tokens = body.get(protocol.TOKENS)
            self.pacer.spent(
                permit,
                str(body.get(protocol.OUTCOME)),
                retry_delay=float(delay) if isinstance(delay, int | float) else None,
                tokens=tokens if isinstance(tokens, int) else 0,
            )

    async def _grant(self, number: int, model: str, key: str) -> None:
        permit = await self.pacer.acquire(model, key)
        self.asking.pop(number, None)
        if self.dead or not self.send(protocol.grant(number)):
            self.pacer.spent(permit, protocol.UNUSED)
            return
        self.granted[number] = permit

    async def _reap(self) -> None:
        """When the worker ends, whatever the agent left in its session ends too: a background
        process would outlive the run (and rewrite its files), and one holding the worker's
        pipes would keep its reader from ever seeing the end."""
        await self.process.wait()
        kill_session(self.process.pid)

    async def _read_stderr(self) -> None:
        stream = self.process.stderr
        assert stream is not None
        while True:
            try:
                line = await stream.readline()
            except ValueError:
                continue
            if not line:
                return
            self.stderr.append(line.decode("utf-8", "replace").rstrip()[:300])

    # -- what it is told -------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> bool:
        stdin = self.process.stdin
        if stdin is None or stdin.is_closing():
            return False
        try:
            stdin.write((protocol.encode(message) + "\n").encode())
        except (BrokenPipeError, ConnectionResetError, RuntimeError):
            return False  # the worker is gone: its reader settles what was in flight
        return True

    async def kill(self, reason: str) -> None:
        if self.stop_reason is None:
            self.stop_reason = f"the agent process was stopped because {reason}"
        if self.process.returncode is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.process.kill()
        kill_session(self.process.pid)
        await asyncio.gather(*self.tasks, return_exceptions=True)

    async def ask(self, number: int, request: Callable[[int], dict[str, Any]], what: str, timeout_s: float) -> dict[str, Any]:
        """The worker's answer; raises TimeoutError when the question had ``timeout_s`` from
        the moment the worker started it, and NotStarted / Suspect / WorkerDied (see above)."""
        loop = asyncio.get_running_loop()
        call = _Call(started=loop.create_future(), answer=loop.create_future())
        self.pending[number] = call
        self.send(request(number))
        stdin = self.process.stdin
        try:
            if stdin is not None:
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    await stdin.drain()
            # Until it starts: a worker busy with others reads it within their time; one that
            # does not read it at all is stuck, and stopped (its questions are sorted out above).
            either: list[asyncio.Future[Any]] = [call.started, call.answer]
            await asyncio.wait(either, timeout=timeout_s + CANCEL_GRACE_S, return_when=asyncio.FIRST_COMPLETED)
            if not call.started.done() and not call.answer.done():
                await self.kill(f"it did not start {what} in time")
            try:
                return await asyncio.wait_for(asyncio.shield(call.answer), timeout_s)
            except TimeoutError:
                pass
            answer = await self._cancelled(number, call, what)
            if protocol.kind(answer) == protocol.CANCELLED:
                raise timed_out(protocol.MODEL if answer.get(protocol.ORIGIN) == protocol.MODEL else protocol.AGENT)
            return answer
        except asyncio.CancelledError:
            if self.pending.pop(number, None) is not None:
                self.send(protocol.cancel(number))
            raise

    async def _cancelled(self, number: int, call: _Call, what: str) -> dict[str, Any]:
        """The answer to a question whose time ran out, once it is asked to cancel it (its
        CANCELLED, or what it finished meanwhile); a worker that does not settle it in the grace
        is killed, and the question timed out."""
        self.send(protocol.cancel(number))
        if await self._settled_in_grace(call):
            return call.answer.result()
        await self.kill(f"{what} ran out of time and the agent's process stopped responding")
        try:
            return await call.answer
        except WorkerDied:
            raise timed_out(protocol.AGENT) from None  # it was alone in there: its own time ran out

    async def _settled_in_grace(self, call: _Call) -> bool:
        """Whether ``call``'s answer (or the worker's end) came within CANCEL_GRACE_S of its
        cancel; no waiting once the worker says its loop is stalled."""
        stalled = asyncio.ensure_future(self.stalled.wait())
        either: list[asyncio.Future[Any]] = [call.answer, stalled]
        try:
            await asyncio.wait(either, timeout=CANCEL_GRACE_S, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stalled.cancel()
        return call.answer.done()
