"""One retry policy for every call that goes over the network: the agent's questions
(``run_pool``) and the judges' calls (``judges/engine``).

Transient errors are tried again after an exponential backoff with jitter, out of the caller's
concurrency slot so others run meanwhile; anything else is raised at once. What is transient is
decided by where the error was raised (``protocol.ORIGIN_ATTRIBUTE``, set by the agent's worker
and the judges' client): a fault of the model call (a status, a timeout, a reply cut short or
unreadable) or a worker killed from outside is, unless credentials are wrong (400 / 401 / 403); an
error of the agent's own code never is, whatever its text. An error that says no origin (an
agent served over HTTP) is read by its status code and words, as before.

Not built on tenacity: the one part that is no stock policy, attempts that do not use up
``retries`` because the adaptive limiter takes the blame for them (its own throttling, decided
by the limiter at each failure), would be a stop callback with side effects on the limiter,
and nothing else of tenacity would be used. The policy is the loop of :func:`call_with_retries`.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TypeVar

from agent_eval_action.agent_worker import protocol
from agent_eval_action.agent_worker.model.origin import origin_of, status_code, type_name, worth_retrying

T = TypeVar("T")

TRANSIENT_CODES = {429, 503, 504}
TRANSIENT_WORDS = ("RESOURCE_EXHAUSTED", "UNAVAILABLE", "DEADLINE_EXCEEDED", "Too Many Requests", "Service Unavailable")
# Of those, the ones that say "too much at once" (or too slow to answer): adaptive concurrency backs off on them.
CONGESTION_CODES = {429, 504}
CONGESTION_WORDS = ("RESOURCE_EXHAUSTED", "DEADLINE_EXCEEDED", "Too Many Requests")


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    retries: int = 3
    backoff_initial_s: float = 1.0
    backoff_max_s: float = 30.0
    # Attempts throttled while concurrency adapts are the pool's doing, not the call's: this many
    # of them are tried again without using up ``retries``.
    forgiven: int = 8

    def delay(self, attempt: int) -> float:
        """Seconds to wait before try ``attempt + 1`` (0-based): exponential, capped, plus up to
        one initial backoff of random jitter so that throttled callers do not retry in step."""
        return min(self.backoff_max_s, self.backoff_initial_s * 2.0**attempt) + random.uniform(0, self.backoff_initial_s)


def _matches(error: BaseException, codes: set[int], words: tuple[str, ...]) -> bool:
    if status_code(error) in codes:
        return True
    text = f"{type_name(error)} {error}"
    return any(word in text for word in words) or str(error).startswith(tuple(str(c) for c in codes))


def origin(error: BaseException) -> str | None:
    """Where ``error`` was raised (``protocol.ORIGINS``); None: it does not say."""
    return origin_of(error)


def is_infrastructure(error: BaseException) -> bool:
    """Raised by the model call or by a kill from outside: nothing of the PR's."""
    return origin(error) in (protocol.MODEL, protocol.OUTSIDE)


def is_transient(error: BaseException) -> bool:
    """Worth another attempt: infrastructure that may pass (not missing credentials); for an
    error that says no origin, 429 / 503 / deadline errors by code or words."""
    if origin(error) is not None:
        return worth_retrying(error)
    return _matches(error, TRANSIENT_CODES, TRANSIENT_WORDS)


def is_congestion(error: BaseException) -> bool:
    """A sign that too much is in flight: 429 / RESOURCE_EXHAUSTED or a deadline."""
    return isinstance(error, TimeoutError) or _matches(error, CONGESTION_CODES, CONGESTION_WORDS)


def describe(error: BaseException) -> str:
    message = str(error).strip() or repr(error)
    if getattr(error, "plain", False):  # already a sentence (the agent's process died)
        return message
    return f"{type_name(error)}: {message}"


async def call_with_retries(
    call: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    slot: Callable[[], AbstractAsyncContextManager[object]],
    on_transient: Callable[[BaseException], bool] | None = None,
) -> T:
    """``call()`` inside ``slot()``, tried again on transient errors after a backoff spent outside
    the slot. ``on_transient`` hears each transient error; when it answers True (the adaptive
    pool took the blame) the retry is forgiven, up to ``policy.forgiven`` times."""
    attempt = forgiven = 0
    while True:
        async with slot():
            try:
                return await call()
            except Exception as error:
                if not is_transient(error):
                    raise
                blamed = on_transient(error) if on_transient is not None else False
                if blamed and forgiven < policy.forgiven:
                    forgiven += 1
                elif attempt < policy.retries:
                    attempt += 1
                else:
                    raise
        await asyncio.sleep(policy.delay(attempt + forgiven - 1))
