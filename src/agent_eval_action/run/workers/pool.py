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
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_eval_action.agent_worker import protocol
from agent_eval_action.models.questions import Question
from agent_eval_action.models.traces import Trace
from agent_eval_action.run.agent.loader import with_suggestion
from agent_eval_action.run.pacing import Pacer
from agent_eval_action.run.run_pool import keep_partial
from agent_eval_action.run.workers.process import NotStarted, Suspect, Worker, WorkerDied, remote_error
from agent_eval_action.run.workers.start import WorkerSettings, kill_session, spawn, take, worker_files
from agent_eval_action.run.workers.zygote import ForkedProcess, Zygote
from agent_eval_action.system import interrupt
from agent_eval_action.system.errors import AgentLoadError
from agent_eval_action.traces.adk_events import trace_from_run
from agent_eval_action.traces.spans import RawSpan


class WorkerPool:
    """Implements ``run_pool.QuestionRunner`` over ``settings.workers`` agent processes."""

    def __init__(self, settings: WorkerSettings, pacer: Pacer | None = None):
        self.settings = settings
        # The run's pacing of model calls, shared with the judges (run/pacing.py).
        self.pacer = pacer or Pacer()
        self.workers: list[Worker] = []
        self.ids = itertools.count()
        self.info: dict[str, Any] = {}
        self.restarts = 0
        # Workers killed by a signal that nothing of ours sent (we set a stop reason first).
        self.killed: list[str] = []
        self._files: Path | None = None
        self._lock: asyncio.Lock | None = None
        self._launched: list[asyncio.Future[Worker]] = []
        # The warm start's zygote, which forks the workers (None: each is spawned).
        self._zygote: Zygote | None = None
        self._suspects: Worker | None = None
        self._forget_stop: Callable[[], None] = lambda: None
        self._suspect_turn = asyncio.Lock()

    # -- lifecycle ---------------------------------------------------------------------------

    async def launch(self) -> None:
        """Starts the worker processes without waiting for them to load the agent: the caller
        can do its own work (reading datasets, importing metrics) while they import ADK."""
        adopted: list[Worker] = []
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
            done: list[asyncio.Future[Worker]] = [loop.create_future() for _ in adopted]
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
        self.workers = [s for s in started if isinstance(s, Worker)]
        if failure is not None:
            await self.close()
            raise failure

    async def _spawn(self) -> Worker:
        if interrupt.requested():
            raise WorkerDied("the run was interrupted")
        return await self._until_ready(await self._launch())

    async def _ready(self, launched: asyncio.Future[Worker]) -> Worker:
        return await self._until_ready(await launched)

    async def _launch(self) -> Worker:
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

    def _watch(self, process: asyncio.subprocess.Process | ForkedProcess) -> Worker:
        loading = f"{self.settings.agent} (with {self.settings.python})"
        return Worker(process=process, pacer=self.pacer, loading=loading, on_outside_kill=self.killed.append).watch()

    async def _until_ready(self, worker: Worker) -> Worker:
        try:
            hello = await asyncio.wait_for(asyncio.shield(worker.ready), self.settings.startup_timeout_s)
        except TimeoutError:
            await worker.kill("it did not finish loading the agent in time")
            raise AgentLoadError(
                "--agent", f"{self.settings.agent}: loading the agent took longer than {self.settings.startup_timeout_s:g} s{worker.tail()}"
            ) from None
        if protocol.FATAL in hello:
            await worker.kill("it could not load the agent")
            reason = with_suggestion(self.settings.agent, str(hello[protocol.FATAL]), self.settings.cwd)
            raise AgentLoadError("--agent", f"{self.settings.agent}: {reason}")
        self.info = hello[protocol.READY]
        return worker

    async def _pick(self) -> Worker:
        """The least busy live worker; dead ones are replaced first."""
        assert self._lock is not None, "start() first"
        async with self._lock:
            for index, worker in enumerate(self.workers):
                if worker.dead:
                    self.workers[index] = await self._spawn()
                    self.restarts += 1
        return min(self.workers, key=lambda w: len(w.pending))

    async def _alone(self) -> Worker:
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

    def _all(self) -> list[Worker]:
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
                await worker.kill("the run ended")
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
        answer = await (await self._pick()).ask(next(self.ids), protocol.describe, "describing the agent", timeout_s)
        if protocol.ERROR in answer:
            raise remote_error(answer[protocol.ERROR])
        return dict(answer[protocol.RESULT])

    async def run_question(self, question: Question, timeout_s: float) -> Trace:
        suspect = False
        for _ in range(5):
            try:
                if suspect:
                    async with self._suspect_turn:
                        answer = await (await self._alone()).ask(
                            next(self.ids), self._question(question), f"question {question.id!r}", timeout_s
                        )
                else:
                    answer = await (await self._pick()).ask(
                        next(self.ids), self._question(question), f"question {question.id!r}", timeout_s
                    )
                break
            except NotStarted:
                continue  # its worker ended before reading it; a new one takes it
            except Suspect:
                suspect = True  # run it again, alone this time: not a retry, not its error
        else:
            raise WorkerDied("the agent's processes kept ending before they could start this question")
        if protocol.ERROR in answer:
            error = answer[protocol.ERROR]
            remote = remote_error(error)
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
    details = result.get(protocol.APP_DETAILS)
    if isinstance(details, list):
        trace.app_details = [d if isinstance(d, dict) else None for d in details]
    trace.replayed_model_calls = result.get(protocol.REPLAYED_MODEL_CALLS) if model_cache else None
    live = result.get(protocol.LIVE_MODEL_CALLS)
    trace.live_model_calls = live if isinstance(live, int) else None
    observed = result.get(protocol.OBSERVED)
    if isinstance(observed, dict):
        trace.observed = {str(k): [str(p) for p in v] for k, v in observed.items() if isinstance(v, list)}
    return trace
