"""The worker's process: ``python -m agent_eval_worker`` under the agent's own interpreter.

Protocol: ``protocol.py`` (every message and key, for both sides). We read requests on our
stdin and answer on the file descriptor that was stdout when we started (the agent's own prints
go to stderr instead). A ``cancel`` (the question's time is up) is answered ``cancelled`` at once:
the question's task is cancelled and left behind, whether or not the agent lets it end. Questions
run concurrently in one event loop; the parent decides how many. A watchdog thread says
``stalled`` when the loop stops turning (a call that blocks it: no ``cancel`` can be read until
it returns), so the parent need not wait out a grace to know this process is stuck.

Anything the agent raises, ``SystemExit`` and ``KeyboardInterrupt`` included, is that question's
error, even from a task the agent (or ADK, for each tool call) started: asyncio lets those two
out of every task and stops the loop, so each task's coroutine converts them into an ordinary
exception (:class:`AgentStopped`) that travels up to the question that awaited it. What kills the
process anyway (``os._exit``, a signal, a call that blocks the loop) is the parent's to sort out:
it runs the questions that were in flight again, one at a time, to find the one to blame.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from typing import IO, Any

from . import observe, protocol
from .loader import AgentLoadError, LoadedAgent, load_agent
from .model import origin
from .model.pacing import LocalPermits, RemotePermits
from .runner import AgentSessions, partial_run
from .tree import agent_tree
from .zygote import halt_failed_imports


def _protocol_stream() -> IO[str]:
    """Our stdout, kept for the protocol; fd 1 (and sys.stdout) then point at stderr, so a
    print() in the agent can never corrupt an answer."""
    stream = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return stream


class AgentStopped(Exception):
    """``SystemExit`` or ``KeyboardInterrupt`` raised in one of the agent's tasks, carried as an
    ordinary exception to the question that awaited the task."""

    def __init__(self, original: BaseException):
        super().__init__(str(original))
        self.original = original


async def _contained(coro: Coroutine[Any, Any, Any]) -> Any:
    try:
        return await coro
    except (SystemExit, KeyboardInterrupt) as error:
        raise AgentStopped(error) from error


def contain_exits(loop: asyncio.AbstractEventLoop) -> None:
    """Every task made on ``loop`` from now on runs its coroutine through :func:`_contained`."""

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Future[Any]:
        if not asyncio.iscoroutine(coro):
            return asyncio.Task(coro, loop=loop, **kwargs)
        return asyncio.Task(_contained(coro), loop=loop, **kwargs)

    loop.set_task_factory(factory)


def _original(error: BaseException) -> BaseException:
    """The ``SystemExit`` / ``KeyboardInterrupt`` behind an :class:`AgentStopped`, even when the
    agent's code wrapped it in an error of its own."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, AgentStopped):
            return current.original
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return error


def error_payload(error: BaseException) -> dict[str, Any]:
    raised = error
    error = _original(error)
    if isinstance(error, SystemExit):
        message = f"the agent called sys.exit({error.code!r})"
    elif isinstance(error, KeyboardInterrupt):
        message = "the agent raised KeyboardInterrupt"
    else:
        message = str(error).strip() or repr(error)
    # Where it was raised, as the model wrapper marked it (origin.py); unmarked: the agent's own code.
    where = origin.origin_of(raised) or protocol.AGENT
    return protocol.error_payload(type(error).__name__, message, origin.status_code(error), where)


class Worker:
    def __init__(self, sessions: AgentSessions, out: IO[str], agent: LoadedAgent, observation: observe.Observation | None = None):
        self.sessions = sessions
        self.observation = observation
        self.agent = agent
        self.out = out
        self.lock = threading.Lock()
        self.tasks: dict[Any, asyncio.Task[None]] = {}
        # Questions whose time ran out: cancelled and no longer waited for, answered already.
        self.abandoned: set[Any] = set()
        # When the event loop last turned (its heartbeat), read by the watchdog thread.
        self.beat = time.monotonic()
        # The parent's pacing of the model calls, when it paces them (``pacing.py``).
        self.permits: RemotePermits | None = None
        # Per question in flight: how many of its model calls wait for their reply (origin.WAITING).
        self.waiting: dict[Any, list[int]] = {}

    def send(self, message: dict[str, Any]) -> None:
        self._write(protocol.encode(message))

    def _write(self, text: str) -> None:
        with self.lock:
            self.out.write(text + "\n")
            self.out.flush()

    async def answer(self, request: dict[str, Any]) -> None:
        number = request.get(protocol.ID)
        # Said before the agent runs: a question this worker never started is safe to give to another.
        self.send(protocol.started(number))
        waiting = self.waiting[number] = [0]
        origin.WAITING.set(waiting)  # in this question's task: its model calls count themselves there
        own, token = self.observation.begin() if self.observation is not None else (None, None)
        try:
            if request.get(protocol.DESCRIBE):
                result = agent_tree(self.agent.root_agent)
            else:
                result = await self.sessions.run(request[protocol.QUESTION])
                if own is not None and self.observation is not None and protocol.EVENTS in result:
                    result[protocol.OBSERVED] = self.observation.paths(own)
        except BaseException as error:  # noqa: BLE001 - the agent's failure, whatever it is (sys.exit too), is this question's
            if number not in self.abandoned:
                payload = error_payload(error)
                partial = partial_run(error)
                if partial is not None:
                    payload[protocol.PARTIAL] = partial  # what the run did before the error: its tool calls, its state
                try:
                    text = protocol.encode(protocol.error(number, payload))
                except (TypeError, ValueError, RecursionError):
                    payload.pop(protocol.PARTIAL, None)  # what it did before cannot travel as JSON: the error alone does
                    text = protocol.encode(protocol.error(number, payload))
                self._write(text)
            return
        finally:
            self.waiting.pop(number, None)
            if token is not None:
                observe.Observation.end(token)
        try:
            text = protocol.encode(protocol.result(number, result))
        except (TypeError, ValueError, RecursionError) as error:
            # What the agent left (its final state above all) is not JSON: this question's
            # error, said now, not a silence the parent would wait out.
            text = protocol.encode(protocol.error(number, _unsendable(error)))
        if number not in self.abandoned:
            self._write(text)

    def cancel(self, number: Any) -> None:
        """The question's time is up: cancelled, and said whether a model call of it was still
        waiting for its reply (the time ran out in the model API, not in the agent)."""
        waiting = self.waiting.get(number)
        stalled_in_model = waiting is not None and waiting[0] > 0
        task = self.tasks.get(number)
        if task is not None and not task.done():
            self.abandoned.add(number)
            task.cancel()
        self.send(protocol.cancelled(number, protocol.MODEL if stalled_in_model else None))

    def _forget(self, number: Any) -> Callable[[asyncio.Task[None]], None]:
        def forget(_: asyncio.Task[None]) -> None:
            self.tasks.pop(number, None)

        return forget

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=2**26)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while True:
            line = await reader.readline()
            if not line:
                break  # the parent closed our stdin: finish what is in flight, then leave
            request = json.loads(line)
            if protocol.kind(request) == protocol.CANCEL:
                self.cancel(request[protocol.CANCEL])
                continue
            if protocol.kind(request) == protocol.GRANT:
                if self.permits is not None:
                    self.permits.granted(request[protocol.GRANT])
                continue
            if protocol.kind(request) == protocol.PACE:
                body = request[protocol.PACE]
                if self.permits is not None and isinstance(body, dict):
                    self.permits.pace(body.get(protocol.MODEL_NAME), body.get(protocol.API_KEY_ID))
                continue
            number = request.get(protocol.ID)
            task = asyncio.ensure_future(self.answer(request))
            self.tasks[number] = task
            task.add_done_callback(self._forget(number))
        # Only what is still owed an answer: a cancelled task the agent keeps alive is not waited for.
        owed = [task for number, task in self.tasks.items() if number not in self.abandoned]
        if owed:
            await asyncio.gather(*owed, return_exceptions=True)

    def _heartbeat(self, loop: asyncio.AbstractEventLoop) -> None:
        self.beat = time.monotonic()
        loop.call_later(protocol.HEARTBEAT_S, self._heartbeat, loop)

    def _watch(self) -> None:
        """The watchdog thread: ``stalled`` when the loop's heartbeat is ``STALL_S`` late,
        ``running`` when it beats again. (A call that holds the GIL stops this thread too: the
        parent then waits its grace, as it would without us.)"""
        said = False
        while True:
            time.sleep(protocol.HEARTBEAT_S)
            late = time.monotonic() - self.beat
            try:
                if late >= protocol.STALL_S and not said:
                    self.send(protocol.stalled(late))
                    said = True
                elif late < protocol.STALL_S and said:
                    self.send(protocol.running())
                    said = False
            except (OSError, ValueError):
                return  # the parent is gone, or we are ending

    def run(self) -> int:
        """Serves until the parent closes stdin. Should the agent stop the event loop anyway
        (``SystemExit`` from a plain callback, not a task), nobody here knows which question did
        it: this process says why it ends and ends; the parent sorts out whom to blame."""
        loop = asyncio.new_event_loop()
        contain_exits(loop)
        self._heartbeat(loop)
        threading.Thread(target=self._watch, name="agent-eval-watchdog", daemon=True).start()
        try:
            loop.run_until_complete(self.serve())
        except BaseException as error:  # noqa: BLE001 - the agent stopped our loop; say so, then end
            self.send(protocol.exiting(error_payload(error)[protocol.MESSAGE]))
            self.out.flush()
            os._exit(3)  # the agent's threads and tasks are not ours to wind down
        loop.close()
        return 0


# Audit events of a signal sent, and where their target is: a process (id), a process group, a thread of ours.
_SIGNAL_EVENTS = {"os.kill": "pid", "os.killpg": "group", "signal.pthread_kill": "thread"}


def _own_signals(worker: Worker) -> Callable[[str, tuple[Any, ...]], None]:
    """An audit hook that says ``signalled`` before the agent's code signals its own process: a
    kill the parent then sees is the agent's doing, not one from outside (run/workers/process.py)."""
    me = os.getpid()

    def hook(event: str, args: tuple[Any, ...]) -> None:
        target = _SIGNAL_EVENTS.get(event)
        if target is None or len(args) != 2:
            return
        who, signal_number = args
        own = (
            target == "thread" or (target == "pid" and who in (me, 0, -os.getpgid(0))) or (target == "group" and who in (0, os.getpgid(0)))
        )
        if own and isinstance(signal_number, int) and signal_number != 0:
            with contextlib.suppress(OSError, ValueError):
                worker.send(protocol.signalled(signal_number))

    return hook


def _unsendable(error: BaseException) -> dict[str, Any]:
    return protocol.error_payload(
        "UnserializableAnswer",
        f"what the agent's run left (its final state or events) cannot be sent as JSON: {type(error).__name__}: {error}",
        None,
    )


def _leave(code: int) -> None:
    """Ends the process once every answer is out: the agent's atexit handlers run (its telemetry
    flushes), the interpreter's teardown of every module does not; it only cost the parent,
    which waits for us, a few hundred milliseconds."""
    import atexit

    sys.stderr.flush()
    atexit._run_exitfuncs()
    os._exit(code)


def observing() -> observe.Observation | None:
    """The audit hook, installed before the agent loads (what its import reads is every
    question's input); None when the parent asked for none."""
    how = os.environ.get(protocol.ENV_OBSERVE, "1")
    if how == "0":
        return None
    ours = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    # /proc: the zygote's look at its own threads and files (zygote.py), never the agent's input.
    return observe.start([sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, ours, "/proc"], native=how != "python")


@contextlib.contextmanager
def loading() -> Iterator[None]:
    """The agent's import with the cyclic collector off, then what it made frozen out of the
    collector's later scans, and the collector on again (CPython's pattern for a process that
    forks: off early, frozen before the fork, on in the child). An import makes some 200,000
    objects that live as long as the worker, and the collections they would set off found ~1,000
    to free: ADK 2.x and its first run's modules import in 1.01 s of CPU instead of 1.22 s, and
    later collections no longer rescan them. What the import left unreachable stays."""
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def load(out: IO[str]) -> tuple[LoadedAgent, AgentSessions, RemotePermits | None] | int:
    """The agent loaded and its Runner built, as the environment says; else the exit code,
    after saying ``fatal`` on ``out``."""
    spec = os.environ.get(protocol.ENV_AGENT, "")
    capture = os.environ.get(protocol.ENV_SPANS, "1") == "1"
    cache = os.environ.get(protocol.ENV_MODEL_CACHE) or None
    remote = RemotePermits() if os.environ.get(protocol.ENV_PACING) == "1" else None
    try:
        agent = load_agent(spec)
        sessions = AgentSessions(agent, capture_spans=capture, model_cache=cache, pacing=remote or LocalPermits())
    except AgentLoadError as error:
        out.write(protocol.encode(protocol.fatal(str(error))) + "\n")
        out.flush()
        return 2
    except BaseException as error:  # noqa: BLE001 - building the Runner failed: the user's agent, not us
        out.write(protocol.encode(protocol.fatal(f"setting up the ADK Runner raised {type(error).__name__}: {error}")) + "\n")
        out.flush()
        return 2
    halt_failed_imports()  # after the agent's own imports: a failure there says what it always said
    return agent, sessions, remote


def serve(
    out: IO[str], agent: LoadedAgent, sessions: AgentSessions, remote: RemotePermits | None, observation: observe.Observation | None
) -> int:
    """Says ``ready`` and answers questions until the parent closes stdin (a spawned worker, or
    a forked one in the zygote's child: its threads and event loop are started here)."""
    try:
        from google.adk import version

        adk_version = version.__version__
    except ImportError:
        adk_version = "unknown"
    worker = Worker(sessions, out, agent, observation)
    sys.addaudithook(_own_signals(worker))
    if remote is not None:
        remote.send, worker.permits = worker.send, remote
    worker.send(protocol.ready(sessions.app_name, sessions.models, adk_version, sys.version.split()[0]))
    return worker.run()


def main() -> int:
    if os.environ.get(protocol.ENV_ZYGOTE) == "1":
        from .zygote import main as zygote

        return zygote(sys.modules[__name__])
    out = _protocol_stream()
    observation = observing()
    with loading():
        loaded = load(out)
    if isinstance(loaded, int):
        return loaded
    return serve(out, *loaded, observation)


if __name__ == "__main__":
    _leave(main())
