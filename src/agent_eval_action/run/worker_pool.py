"""Running the user's agent in worker processes under its own Python, never in ours.

Agent code is code we did not write: a tool that calls ``sys.exit``, ``os._exit``, raises
``KeyboardInterrupt``, kills its process or blocks must cost only the questions it was running,
never our run, our exit code or our secrets. Each worker (``agent_worker``, copied into a
temporary directory as the package ``agent_eval_worker``) runs under ``--agent-python`` with a
clean environment and answers questions as JSON lines; this side keeps concurrency, timeouts,
retries, progress and scoring. A worker that dies or stops answering is killed and replaced.

A question's time counts from when its worker starts it (a worker being replaced or busy loading
the agent costs it nothing). When it runs out, the worker is asked to cancel the question and
lives on; only a worker that does not even answer that (a call blocking its event loop) is killed.
When a worker dies with one question in flight, that question is to blame; with several, nobody
knows which, so each runs again alone on a worker of its own ("alone"): the innocent ones answer,
the guilty one dies (or times out) alone and gets the error. These extra runs are not retries:
they never count against ``--retries`` and never show as a question's error.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import shutil
import signal
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_eval_action.agent_worker import protocol
from agent_eval_action.core import interrupt
from agent_eval_action.core.errors import AgentLoadError
from agent_eval_action.core.models import Question, Trace
from agent_eval_action.run.agent_loader import with_suggestion
from agent_eval_action.run.pacing import Pacer
from agent_eval_action.run.run_pool import keep_partial
from agent_eval_action.run.worker_start import WorkerSettings, kill_session, spawn, take, worker_files
from agent_eval_action.run.worker_zygote import ForkedProcess, Zygote
from agent_eval_action.traces.adk_events import trace_from_run
from agent_eval_action.traces.spans import RawSpan

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
    """What the agent raised in the worker, carried over: type name, message, status code."""

    def __init__(self, type_name: str, message: str, code: int | None):
        super().__init__(message)
        self.remote_type = type_name
        self.code = code


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


@dataclass(eq=False)
class _Worker:
    process: asyncio.subprocess.Process | ForkedProcess
    pending: dict[int, _Call] = field(default_factory=dict)
    # The worker that runs suspects, one at a time: whatever kills it, its one question did.
    alone: bool = False
    stderr: deque[str] = field(default_factory=lambda: deque(maxlen=STDERR_LINES))
    ready: asyncio.Future[dict[str, Any]] | None = None
    stop_reason: str | None = None
    dead: bool = False
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    # Set while the worker says its event loop is stalled (protocol.STALLED .. RUNNING).
    stalled: asyncio.Event = field(default_factory=asyncio.Event)
    # Its model calls' permits (the worker's numbers): being asked for, and granted.
    asking: dict[int, asyncio.Task[None]] = field(default_factory=dict)
    granted: dict[int, int] = field(default_factory=dict)

    def tail(self) -> str:
        lines = [line for line in self.stderr if line.strip()]
        return ("; its last output: " + " | ".join(lines[-5:]))[:1500] if lines else ""


async def _settled_in_grace(worker: _Worker, call: _Call) -> bool:
    """Whether ``call``'s answer (or its worker's end) came within CANCEL_GRACE_S of its
    cancel; no waiting once the worker says its loop is stalled."""
    stalled = asyncio.ensure_future(worker.stalled.wait())
    either: list[asyncio.Future[Any]] = [call.answer, stalled]
    try:
        await asyncio.wait(either, timeout=CANCEL_GRACE_S, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stalled.cancel()
    return call.answer.done()


class WorkerPool:
    """Implements ``run_pool.QuestionRunner`` over ``settings.workers`` agent processes."""

    def __init__(self, settings: WorkerSettings, pacer: Pacer | None = None):
        self.settings = settings
        # The run's pacing of model calls, shared with the judges (run/pacing.py).
        self.pacer = pacer or Pacer()
        self.workers: list[_Worker] = []
        self.ids = itertools.count()
        self.info: dict[str, Any] = {}
        self.restarts = 0
        # Workers killed by a signal that nothing of ours sent (we set a stop reason first).
        self.killed: list[str] = []
        self._files: Path | None = None
        self._lock: asyncio.Lock | None = None
        self._launched: list[asyncio.Future[_Worker]] = []
        # The warm start's zygote, which forks the workers (None: each is spawned).
        self._zygote: Zygote | None = None
        self._suspects: _Worker | None = None
        self._forget_stop: Callable[[], None] = lambda: None
        self._suspect_turn = asyncio.Lock()

    # -- lifecycle ---------------------------------------------------------------------------

    async def launch(self) -> None:
        """Starts the worker processes without waiting for them to load the agent: the caller
        can do its own work (reading datasets, importing metrics) while they import ADK."""
        adopted: list[_Worker] = []
        if self._files is None:
            # Workers the command line started before our imports, when they are these very ones.
            early = take(self.settings)
            if early is not None:
                self._files, processes, self._zygote = early
                adopted = [self._watch(process) for process in processes]
            else:
                self._files = worker_files()
            if self.settings.warm_start and self._zygote is None:
                with contextlib.suppress(OSError):  # spawning then says why the Python cannot start
                    self._zygote = await Zygote.start(self.settings, self._files)
            self._forget_stop = interrupt.on_stop(self.kill_now)  # Ctrl-C, SIGTERM: the agent ends at once
        if not self._launched:
            more = max(1, self.settings.workers) - len(adopted)
            loop = asyncio.get_running_loop()
            done: list[asyncio.Future[_Worker]] = [loop.create_future() for _ in adopted]
            for future, worker in zip(done, adopted, strict=True):
                future.set_result(worker)
            # Tasks: a forked worker waits for the zygote to load the agent, and the caller need not.
            self._launched = [*done, *(asyncio.ensure_future(self._launch()) for _ in range(more))]

    async def start(self) -> None:
        """Starts every worker (unless :meth:`launch` did) and waits until each has loaded the
        agent; raises AgentLoadError when the agent cannot be loaded."""
        await self.launch()
        self._lock = asyncio.Lock()
        launched, self._launched = self._launched, []
        started = await asyncio.gather(*(self._ready(w) for w in launched), return_exceptions=True)
        failure = next((s for s in started if isinstance(s, BaseException)), None)
        self.workers = [s for s in started if isinstance(s, _Worker)]
        if failure is not None:
            await self.close()
            raise failure

    async def _spawn(self) -> _Worker:
        if interrupt.requested():
            raise WorkerDied("the run was interrupted")
        return await self._until_ready(await self._launch())

    async def _ready(self, launched: asyncio.Future[_Worker]) -> _Worker:
        return await self._until_ready(await launched)

    async def _launch(self) -> _Worker:
        assert self._files is not None
        if self._zygote is not None:
            try:
                forked = await self._zygote.fork(self.settings.startup_timeout_s)
            except TimeoutError:
                raise AgentLoadError(
                    "--agent", f"{self.settings.agent}: loading the agent took longer than {self.settings.startup_timeout_s:g} s"
                ) from None
            if forked is not None:
                return self._watch(forked)
        try:
            process = await spawn(self.settings, self._files)
        except OSError as error:
            raise AgentLoadError(
                "--agent-python", f"cannot start {self.settings.python!r}: {error.strerror or error} (give the agent's Python interpreter)"
            ) from None
        return self._watch(process)

    def _watch(self, process: asyncio.subprocess.Process | ForkedProcess) -> _Worker:
        worker = _Worker(process=process, ready=asyncio.get_running_loop().create_future())
        worker.tasks = [
            asyncio.ensure_future(self._read(worker)),
            asyncio.ensure_future(self._read_stderr(worker)),
            asyncio.ensure_future(self._reap(worker)),
        ]
        return worker

    async def _until_ready(self, worker: _Worker) -> _Worker:
        assert worker.ready is not None
        try:
            hello = await asyncio.wait_for(asyncio.shield(worker.ready), self.settings.startup_timeout_s)
        except TimeoutError:
            await self._kill(worker, "it did not finish loading the agent in time")
            raise AgentLoadError(
                "--agent", f"{self.settings.agent}: loading the agent took longer than {self.settings.startup_timeout_s:g} s{worker.tail()}"
            ) from None
        if protocol.FATAL in hello:
            await self._kill(worker, "it could not load the agent")
            reason = with_suggestion(self.settings.agent, str(hello[protocol.FATAL]), self.settings.cwd)
            raise AgentLoadError("--agent", f"{self.settings.agent}: {reason}")
        self.info = hello[protocol.READY]
        return worker

    async def _read(self, worker: _Worker) -> None:
        stream = worker.process.stdout
        assert stream is not None
        while True:
            try:
                line = await stream.readline()
            except ValueError:  # a line over the limit: nothing after it can be trusted
                break
            if not line:
                break
            message = protocol.decode(line)
            if message is None:
                continue
            kind = protocol.kind(message)
            if kind in (protocol.READY, protocol.FATAL):
                if worker.ready is not None and not worker.ready.done():
                    worker.ready.set_result(message)
                continue
            if kind == protocol.EXITING:
                worker.dead = True  # no new questions: it is on its way out
                if worker.stop_reason is None:
                    worker.stop_reason = f"the agent process ended ({message[protocol.EXITING]})"
                continue
            if kind == protocol.STALLED:
                worker.stalled.set()
                continue
            if kind == protocol.RUNNING:
                worker.stalled.clear()
                continue
            if kind in (protocol.PERMIT, protocol.SPENT):
                self._pace(worker, message)
                continue
            if kind == protocol.STARTED:
                call = worker.pending.get(message.get(protocol.ID, -1))
                if call is not None and not call.started.done():
                    call.started.set_result(None)
                continue
            call = worker.pending.pop(message.get(protocol.ID, -1), None)
            if call is not None and not call.answer.done():
                call.answer.set_result(message)
        code = await worker.process.wait()
        worker.dead = True
        if worker.stop_reason is None and code in OUTSIDE_SIGNALS:
            self.killed.append(_exit_reason(code))
        for asking in worker.asking.values():
            asking.cancel()
        for permit in worker.granted.values():
            self.pacer.spent(permit, protocol.OK)  # made, maybe: counted until a minute has passed
        worker.granted.clear()
        reason = worker.stop_reason or f"the agent process {_exit_reason(code)}"
        if worker.ready is not None and not worker.ready.done():
            where = f"{self.settings.agent} (with {self.settings.python})"
            worker.ready.set_result(protocol.fatal(f"the agent process {_exit_reason(code)} while loading {where}{worker.tail()}"))
        running = [call for call in worker.pending.values() if call.started.done()]
        for call in worker.pending.values():
            if call.answer.done():
                continue
            if not call.started.done():
                call.answer.set_exception(NotStarted())
            elif len(running) == 1 or worker.alone:
                call.answer.set_exception(WorkerDied(f"{reason} while running this question{worker.tail()}"))
            else:
                call.answer.set_exception(Suspect())
            call.answer.exception()  # retrieved here: a caller that left does not leave it unread
        worker.pending.clear()

    def _pace(self, worker: _Worker, message: dict[str, Any]) -> None:
        """A worker's model call asks for a permit, or says what became of it."""
        if protocol.PERMIT in message:
            body = message[protocol.PERMIT]
            number = body.get(protocol.ID)
            if isinstance(number, int):
                model, key = str(body.get(protocol.MODEL_NAME)), str(body.get(protocol.API_KEY_ID))
                worker.asking[number] = asyncio.ensure_future(self._grant(worker, number, model, key))
            return
        body = message[protocol.SPENT]
        number = body.get(protocol.ID)
        asking = worker.asking.pop(number, None)
        if asking is not None:
            asking.cancel()  # its question ended before the permit came
            return
        permit = worker.granted.pop(number, None)
        if permit is not None:
            delay = body.get(protocol.RETRY_DELAY)
            tokens = body.get(protocol.TOKENS)
            self.pacer.spent(
                permit,
                str(body.get(protocol.OUTCOME)),
                retry_delay=float(delay) if isinstance(delay, int | float) else None,
                tokens=tokens if isinstance(tokens, int) else 0,
            )

    async def _grant(self, worker: _Worker, number: int, model: str, key: str) -> None:
        permit = await self.pacer.acquire(model, key)
        worker.asking.pop(number, None)
        if worker.dead or not self._send(worker, protocol.grant(number)):
            self.pacer.spent(permit, protocol.UNUSED)
            return
        worker.granted[number] = permit

    async def _reap(self, worker: _Worker) -> None:
        """When the worker ends, whatever the agent left in its session ends too: a background
        process would outlive the run (and rewrite its files), and one holding the worker's
        pipes would keep its reader from ever seeing the end."""
        await worker.process.wait()
        kill_session(worker.process.pid)

    async def _read_stderr(self, worker: _Worker) -> None:
        stream = worker.process.stderr
        assert stream is not None
        while True:
            try:
                line = await stream.readline()
            except ValueError:
                continue
            if not line:
                return
            worker.stderr.append(line.decode("utf-8", "replace").rstrip()[:300])

    async def _kill(self, worker: _Worker, reason: str) -> None:
        if worker.stop_reason is None:
            worker.stop_reason = f"the agent process was stopped because {reason}"
        if worker.process.returncode is None:
            try:
                os.killpg(worker.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                worker.process.kill()
        kill_session(worker.process.pid)
        await asyncio.gather(*worker.tasks, return_exceptions=True)

    async def _pick(self) -> _Worker:
        """The least busy live worker; dead ones are replaced first."""
        assert self._lock is not None, "start() first"
        async with self._lock:
            for index, worker in enumerate(self.workers):
                if worker.dead:
                    self.workers[index] = await self._spawn()
                    self.restarts += 1
        return min(self.workers, key=lambda w: len(w.pending))

    async def _alone(self) -> _Worker:
        """The worker for suspects (see the module's doc), started when first needed."""
        if self._suspects is None or self._suspects.dead:
            if self._suspects is not None:
                self.restarts += 1
            self._suspects = await self._spawn()
            self._suspects.alone = True
        return self._suspects

    def kill_now(self) -> None:
        """Kills every worker's whole session at once, from a signal handler too: no awaiting."""
        for worker in self._all():
            worker.stop_reason = worker.stop_reason or "the agent process was stopped because the run was interrupted"
            kill_session(worker.process.pid)
        if self._zygote is not None:
            self._zygote.kill_now()

    def _all(self) -> list[_Worker]:
        launched = [w.result() for w in self._launched if w.done() and not w.cancelled() and w.exception() is None]
        return [*self.workers, *launched, *([self._suspects] if self._suspects is not None else [])]

    async def close(self) -> None:
        # Launched and never waited for too (a run that ended before it needed the agent).
        for launching in self._launched:
            launching.cancel()  # a fork not made yet: none is needed now
        await asyncio.gather(*self._launched, return_exceptions=True)
        workers = self._all()
        self._launched, self._suspects = [], None
        for worker in workers:
            if worker.process.returncode is None and worker.process.stdin is not None:
                worker.process.stdin.close()
        for worker in workers:
            try:
                await asyncio.wait_for(worker.process.wait(), 5)
            except TimeoutError:
                await self._kill(worker, "the run ended")
            kill_session(worker.process.pid)  # what the agent left running there ends with the run
            await asyncio.gather(*worker.tasks, return_exceptions=True)
        self.workers = []
        if self._zygote is not None:
            await self._zygote.close()
            self._zygote = None
        self._forget_stop()
        if self._files is not None:
            shutil.rmtree(self._files, ignore_errors=True)
            self._files = None

    # -- questions -----------------------------------------------------------------------------

    async def describe(self) -> dict[str, Any]:
        """The agent's tree as the worker sees it (``agent_worker.tree``): agents, their tools with
        parameter schemas, sub-agents. Raises RemoteError when describing it failed there."""
        timeout_s = self.settings.startup_timeout_s
        answer = await self._ask(await self._pick(), protocol.describe, "describing the agent", timeout_s)
        if protocol.ERROR in answer:
            raise _remote_error(answer[protocol.ERROR])
        return dict(answer[protocol.RESULT])

    def _send(self, worker: _Worker, message: dict[str, Any]) -> bool:
        stdin = worker.process.stdin
        if stdin is None or stdin.is_closing():
            return False
        try:
            stdin.write((protocol.encode(message) + "\n").encode())
        except (BrokenPipeError, ConnectionResetError, RuntimeError):
            return False  # the worker is gone: its reader settles what was in flight
        return True

    async def _ask(self, worker: _Worker, request: Callable[[int], dict[str, Any]], what: str, timeout_s: float) -> dict[str, Any]:
        """The worker's answer; raises TimeoutError when the question had ``timeout_s`` from
        the moment the worker started it, and NotStarted / Suspect / WorkerDied (see above)."""
        loop = asyncio.get_running_loop()
        number = next(self.ids)
        call = _Call(started=loop.create_future(), answer=loop.create_future())
        worker.pending[number] = call
        self._send(worker, request(number))
        stdin = worker.process.stdin
        try:
            if stdin is not None:
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    await stdin.drain()
            # Until it starts: a worker busy with others reads it within their time; one that
            # does not read it at all is stuck, and stopped (its questions are sorted out above).
            either: list[asyncio.Future[Any]] = [call.started, call.answer]
            await asyncio.wait(either, timeout=timeout_s + CANCEL_GRACE_S, return_when=asyncio.FIRST_COMPLETED)
            if not call.started.done() and not call.answer.done():
                await self._kill(worker, f"it did not start {what} in time")
            try:
                return await asyncio.wait_for(asyncio.shield(call.answer), timeout_s)
            except TimeoutError:
                pass
            self._send(worker, protocol.cancel(number))
            if await _settled_in_grace(worker, call):
                answer = call.answer.result()
            else:
                await self._kill(worker, f"{what} ran out of time and the agent's process stopped responding")
                try:
                    answer = await call.answer
                except WorkerDied:
                    raise TimeoutError from None  # it was alone in there: its own time ran out
            if protocol.kind(answer) == protocol.CANCELLED:
                raise TimeoutError
            return answer
        except asyncio.CancelledError:
            if worker.pending.pop(number, None) is not None:
                self._send(worker, protocol.cancel(number))
            raise

    async def run_question(self, question: Question, timeout_s: float) -> Trace:
        suspect = False
        for _ in range(5):
            try:
                if suspect:
                    async with self._suspect_turn:
                        answer = await self._ask(await self._alone(), self._question(question), f"question {question.id!r}", timeout_s)
                else:
                    answer = await self._ask(await self._pick(), self._question(question), f"question {question.id!r}", timeout_s)
                break
            except NotStarted:
                continue  # its worker ended before reading it; a new one takes it
            except Suspect:
                suspect = True  # run it again, alone this time: not a retry, not its error
        else:
            raise WorkerDied("the agent's processes kept ending before they could start this question")
        if protocol.ERROR in answer:
            error = answer[protocol.ERROR]
            remote = _remote_error(error)
            if isinstance(error.get(protocol.PARTIAL), dict):
                keep_partial(remote, self._trace(question, error[protocol.PARTIAL]))
            raise remote
        return self._trace(question, answer[protocol.RESULT])

    def _question(self, question: Question) -> Callable[[int], dict[str, Any]]:
        request = question_request(question, self.settings.user_simulator)
        return lambda number: protocol.question(number, request)

    def _trace(self, question: Question, result: dict[str, Any]) -> Trace:
        return trace_from_worker(
            question,
            result,
            app_name=self.info.get(protocol.APP_NAME),
            models=dict(self.info.get(protocol.MODELS) or {}),
            model_cache=bool(self.settings.model_cache),
        )


def _remote_error(error: dict[str, Any]) -> RemoteError:
    return RemoteError(str(error.get(protocol.TYPE, "Error")), str(error.get(protocol.MESSAGE, "")), error.get(protocol.CODE))


def question_request(question: Question, user_simulator: dict[str, Any]) -> dict[str, Any]:
    """What the worker needs of a question, as JSON; the [user-simulator] settings laid over the
    scenario's own."""
    return protocol.question_request(
        question.id,
        question.user_inputs,
        question.initial_state,
        conversation_scenario=question.conversation_scenario,
        user_simulator={**question.user_simulator, **user_simulator},
    )


def trace_from_worker(
    question: Question, result: dict[str, Any], *, app_name: str | None, models: dict[str, str], model_cache: bool
) -> Trace:
    """The trace of a run the worker's code made (in a worker or, with --in-process, here)."""
    if result.get(protocol.SKIPPED):
        return Trace(app_name=app_name, skipped=str(result[protocol.SKIPPED]))
    trace = trace_from_run(
        question,
        result[protocol.EVENTS],
        final_state=result.get(protocol.FINAL_STATE),
        turn_times=[(float(a), float(b)) for a, b in result.get(protocol.TURN_TIMES, [])],
        app_name=app_name,
        models=models,
        spans=[RawSpan(**span) for span in result.get(protocol.SPANS, [])],
    )
    trace.replayed_model_calls = result.get(protocol.REPLAYED_MODEL_CALLS) if model_cache else None
    observed = result.get(protocol.OBSERVED)
    if isinstance(observed, dict):
        trace.observed = {str(k): [str(p) for p in v] for k, v in observed.items() if isinstance(v, list)}
    return trace
