"""Running many questions against an agent: bounded concurrency in one event loop, a timeout
per attempt, retries with exponential backoff and jitter on transient model errors, and
``runs`` repetitions. One failing question never stops the others."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from agent_eval_action.loaders import Record
from agent_eval_action.models import Question, Trace
from agent_eval_action.progress import Progress

TRANSIENT_CODES = {429, 503, 504}
TRANSIENT_WORDS = ("RESOURCE_EXHAUSTED", "UNAVAILABLE", "DEADLINE_EXCEEDED", "Too Many Requests", "Service Unavailable")


class QuestionRunner(Protocol):
    async def run_question(self, question: Question) -> Trace:
        """Runs every turn of the question in a new session; raises when the run fails."""
        ...


@dataclass(frozen=True, kw_only=True)
class RunSettings:
    concurrency: int = 8
    timeout_s: float = 300.0
    retries: int = 3
    runs: int = 1
    backoff_initial_s: float = 1.0
    backoff_max_s: float = 30.0


def is_transient(error: BaseException) -> bool:
    """429 / 503 / deadline errors from a model or an API server: worth another attempt."""
    for attribute in ("code", "status_code"):
        value = getattr(error, attribute, None)
        if isinstance(value, int) and value in TRANSIENT_CODES:
            return True
    response = getattr(error, "response", None)
    if getattr(response, "status_code", None) in TRANSIENT_CODES:
        return True
    text = f"{_type_name(error)} {error}"
    return any(word in text for word in TRANSIENT_WORDS) or str(error).startswith(("429", "503"))


def _type_name(error: BaseException) -> str:
    """The exception's class name; for one carried over from the agent's process, the original's."""
    return str(getattr(error, "remote_type", type(error).__name__))


def describe(error: BaseException) -> str:
    message = str(error).strip() or repr(error)
    if getattr(error, "plain", False):  # already a sentence (the agent's process died)
        return message
    return f"{_type_name(error)}: {message}"


async def run_records(
    records: Sequence[Record], runner: QuestionRunner, settings: RunSettings, progress: Progress | None = None
) -> list[Record]:
    """Each record's question run ``settings.runs`` times; results in input order, run by run."""
    from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

    gate = asyncio.Semaphore(settings.concurrency)

    async def attempt(question: Question) -> Trace:
        return await asyncio.wait_for(runner.run_question(question), settings.timeout_s)

    async def one(index: int, record: Record, run: int) -> tuple[int, Record]:
        async with gate:
            try:
                async for trial in AsyncRetrying(
                    retry=retry_if_exception(is_transient),
                    stop=stop_after_attempt(settings.retries + 1),
                    wait=wait_exponential_jitter(initial=settings.backoff_initial_s, max=settings.backoff_max_s),
                    reraise=True,
                ):
                    with trial:
                        trace = await attempt(record.question)
            except TimeoutError:
                trace = Trace(error=f"timed out after {settings.timeout_s:g} s")
            except Exception as error:  # noqa: BLE001 - the agent's failure is this question's result
                trace = Trace(error=describe(error))
        if progress is not None:
            progress.update(error=trace.error is not None)
        return index, Record(question=record.question, trace=trace, run=run)

    # Run-major start order gets every question's first run going before anyone's second.
    jobs = [one(index, record, run) for run in range(settings.runs) for index, record in enumerate(records)]
    done = await asyncio.gather(*jobs)
    return [record for _, record in sorted(done, key=lambda item: (item[0], item[1].run))]
