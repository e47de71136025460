"""Running many questions against an agent in one event loop: as many in flight as the
:class:`~agent_eval_action.run.adaptive.Limiter` allows (adaptive by default), a timeout per attempt,
transient model errors retried (``retry.py``), ``runs`` repetitions, and a spending budget after
which no new question starts. One failing question never stops the others."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Protocol

from agent_eval_action.agent_worker import protocol
from agent_eval_action.datasets import Record
from agent_eval_action.models.questions import Question
from agent_eval_action.models.traces import Trace
from agent_eval_action.run.adaptive import CEILING, Limiter
from agent_eval_action.run.breaker import Breaker, OutageDeclared
from agent_eval_action.run.budget import Budget
from agent_eval_action.run.progress import Progress
from agent_eval_action.run.retry import RetryPolicy, call_with_retries, describe, is_congestion, origin
from agent_eval_action.system import interrupt

__all__ = ["QuestionRunner", "RunSettings", "keep_partial", "run_records"]

# The attribute a runner's error carries the run it interrupted in (see ``keep_partial``).
_PARTIAL = "agent_eval_partial_trace"


def keep_partial(error: BaseException, trace: Trace) -> None:
    """Lets a runner's error carry what the run did before it (the tool calls that succeeded,
    the state they wrote): the question's result is that trace with the error, not an empty one."""
    with contextlib.suppress(AttributeError, TypeError):  # an exception that takes no attributes: the error alone
        setattr(error, _PARTIAL, trace)


def failed_trace(error: BaseException) -> Trace:
    """The trace of a run that ended in ``error``: what it did before, if its runner kept that."""
    partial = getattr(error, _PARTIAL, None)
    if isinstance(partial, Trace):
        return partial.model_copy(update={"error": describe(error), "error_origin": origin(error)})
    return Trace(error=describe(error), error_origin=origin(error))


class QuestionRunner(Protocol):
    async def run_question(self, question: Question, timeout_s: float) -> Trace:
        """Runs every turn of the question in a new session; raises when the run fails, and
        TimeoutError when the run itself took longer than ``timeout_s`` (the runner's own
        waiting, for a process to start or a slot of its own, does not count)."""
        ...


@dataclass(frozen=True, kw_only=True)
class RunSettings:
    concurrency: int | None = None  # None: adaptive ("auto"), up to max_concurrency
    max_concurrency: int = CEILING
    timeout_s: float = 300.0
    retries: int = 3
    runs: int = 1
    backoff_initial_s: float = 1.0
    backoff_max_s: float = 30.0

    def limiter(self) -> Limiter:
        return Limiter(self.concurrency, ceiling=self.max_concurrency)

    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(retries=self.retries, backoff_initial_s=self.backoff_initial_s, backoff_max_s=self.backoff_max_s)


async def run_records(
    records: Sequence[Record],
    runner: QuestionRunner,
    settings: RunSettings,
    progress: Progress | None = None,
    *,
    limiter: Limiter | None = None,
    budget: Budget | None = None,
    breaker: Breaker | None = None,
) -> list[Record]:
    """Each record's question run ``settings.runs`` times; results in input order, run by run.

    ``limiter``: shared by the datasets of one run, so what it learnt of the API carries over.
    ``budget``: once reached, the questions not yet started come back skipped, with the reason.
    ``breaker``: shared by the run as well; once it takes the model API for down, the questions
    not yet started come back "not run" at once (``breaker.py``).
    Once the run is interrupted (:mod:`interrupt`), every question not finished comes back
    skipped as "interrupted", at once."""
    pool = _Pool(runner, settings, progress, limiter or settings.limiter(), budget, breaker or Breaker())
    # Run-major start order gets every question's first run going before anyone's second.
    jobs = [pool.one(index, record, run) for run in range(settings.runs) for index, record in enumerate(records)]
    adapting = asyncio.ensure_future(pool.limit.adapt())
    try:
        done = await asyncio.gather(*jobs)
    finally:
        adapting.cancel()
        pool.stop.cancel()
        await asyncio.gather(adapting, pool.stop, return_exceptions=True)
    return [record for _, record in sorted(done, key=lambda item: (item[0], item[1].run))]


class _Pool:
    """One call of :func:`run_records`: its limiter and budget, the questions in flight, the
    interruption it listens for."""

    def __init__(
        self,
        runner: QuestionRunner,
        settings: RunSettings,
        progress: Progress | None,
        limit: Limiter,
        budget: Budget | None,
        breaker: Breaker,
    ):
        self.runner, self.settings, self.progress, self.limit, self.budget = runner, settings, progress, limit, budget
        self.breaker = breaker
        self.policy = settings.retry_policy()
        self.stop = interrupt.stopped()
        self.working: set[asyncio.Future[Trace]] = set()
        self.running = 0  # questions past the budget's check, not yet done
        self.stop.add_done_callback(self._cancel_all)
        if progress is not None:
            progress.detail = limit.describe

    def _cancel_all(self, _: asyncio.Future[int]) -> None:
        """One callback for the whole run: every question in flight or waiting is cancelled at once."""
        if not self.stop.cancelled():
            for work in self.working:
                work.cancel()

    def _interrupted(self) -> bool:
        return self.stop.done() and not self.stop.cancelled()

    async def one(self, index: int, record: Record, run: int) -> tuple[int, Record]:
        """One run of one question, with its place in the input."""
        work = asyncio.ensure_future(self._outcome(record.question))
        self.working.add(work)
        try:
            trace = await work
        except asyncio.CancelledError:
            if not self._interrupted():
                raise
            trace = Trace(skipped=interrupt.REASON)
        finally:
            self.working.discard(work)
        if self._interrupted() and trace.error is not None:
            # Interrupted (Ctrl-C, SIGTERM): what did not finish is skipped, never an error (its worker was killed).
            trace = Trace(skipped=interrupt.REASON)
        if self.progress is not None and trace.skipped != interrupt.REASON:
            # A run stopped by Ctrl-C did not finish: counting it would show "8/8 runs" before "5 of 8 did not finish".
            self.progress.update(error=trace.error is not None)
        return index, Record(question=record.question, trace=trace, run=run)

    async def _outcome(self, question: Question) -> Trace:
        trace = await self._traced(question)
        # Counted before this task yields: the next question's check of the budget sees it.
        if self.budget is not None and trace.skipped is None:
            self.budget.spend_trace(trace)
        return trace

    async def _traced(self, question: Question) -> Trace:
        try:
            return await call_with_retries(lambda: self._attempt(question), self.policy, self._slot, _blame(self.limit))
        except _BudgetSpent as spent:
            assert self.budget is not None
            self.budget.skipped += 1
            return Trace(skipped=str(spent))
        except OutageDeclared as down:
            return Trace(error=str(down), error_origin=protocol.MODEL)
        except TimeoutError as error:
            return Trace(error=f"timed out after {self.settings.timeout_s:g} s", error_origin=origin(error))
        except Exception as error:  # noqa: BLE001 - the agent's failure is this question's result
            return failed_trace(error)

    async def _attempt(self, question: Question) -> Trace:
        try:
            trace = await self.runner.run_question(question, self.settings.timeout_s)
        except TimeoutError as error:
            self.limit.congested()  # a deadline: maybe too much in flight
            self.breaker.heard(error)
            raise
        except Exception as error:
            self.breaker.heard(error)
            raise
        self.breaker.heard(None)
        return trace

    @asynccontextmanager
    async def _slot(self) -> AsyncIterator[None]:
        """A place in flight, when the budget still allows one more question to start."""
        while True:
            self.breaker.check()
            await self._budget_allows()
            async with self.limit.slot():
                self.breaker.check()  # tripped while this one waited for its place
                if self._admitted():  # still, now that there is a slot
                    self.running += 1
                    try:
                        yield
                    finally:
                        self.running -= 1
                    return

    def _admitted(self) -> bool:
        return self.budget is None or not self.budget.limited or self.budget.admits(self.running)

    async def _budget_allows(self) -> None:
        """Returns when the budget lets one more question start; raises when it is spent.
        Waited for outside the limiter, so a question held back here takes no slot."""
        while not self._admitted():
            assert self.budget is not None
            if self.budget.reached() is not None or not self.running:
                raise _BudgetSpent(self.budget.skip_reason())
            await asyncio.sleep(0.01)  # let what is running count its calls first


class _BudgetSpent(Exception):
    """The run's budget is spent: this question does not start."""


def _blame(limit: Limiter) -> Callable[[BaseException], bool]:
    def on_transient(error: BaseException) -> bool:
        return is_congestion(error) and limit.congested()

    return on_transient
