"""The agent's model calls paced to the model API's quota, and a throttled call retried inside
the question: the turns before it are not run again.

Every model call of the agent goes through ``calls.py``'s door: the cache first, then
this pacing (a replayed answer needs no permit), then the model. Before a call the wrapper asks for a permit for its model and
API key; once the call is over it says what became of it. A call the API throttles (429
RESOURCE_EXHAUSTED, raised by google-genai as a ``ClientError`` whose ``details`` are the error's
JSON, with a ``google.rpc.RetryInfo`` ``retryDelay`` such as ``"26s"``) is said ``throttled`` with
that delay, and asked again with a new permit: the pacing that grants it waits as told, and
learns the rate from it. Only a call that raised before the agent saw any of its answer is
retried; a question's time limit, enforced from outside, is what ends a call throttled for good.

The wrapper is also where a model error is told from the agent's: what the inner model's call
raises is marked the model's (``origin.py``) and, when it came before any reply, asked again up
to ``MODEL_RETRIES`` times inside the turn; while the call waits for a reply the question counts
it as waiting (a question whose time runs out then ran out in the model API).

Permits come from the parent (``RemotePermits``, over the protocol: one pacing per model and key
for every worker and the judges, ``run/pacing.py``), or, in a worker started without it, from
:class:`LocalPermits`, which only waits as each 429 says.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import math
import random
import re
import time
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any, ClassVar, Protocol

from .. import protocol
from . import origin
from .origin import API_DETAILS, API_ERROR

RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?)s\s*$")
# A 429 that names no delay is waited out this long at first, doubling while they keep coming.
BACKOFF_S = (0.5, 30.0)
# A ``pace`` message's model or key that stands for any.
ANY = "*"
# A model call that failed before any reply (a 5xx, a reply cut short or unreadable, a dropped
# connection) is asked again inside its turn this many times, after a backoff doubling from the
# first of FAULT_BACKOFF_S up to the second, with jitter; then the question's error, the model's.
MODEL_RETRIES = 3
FAULT_BACKOFF_S = (0.5, 8.0)


def fault_backoff(faults: int) -> float:
    first, longest = FAULT_BACKOFF_S
    return min(longest, first * 2.0 ** (faults - 1)) * random.uniform(0.5, 1.0)


class Permits(Protocol):
    """Where a model call gets the right to go: the parent's pacing, or this process's."""

    async def acquire(self, model: str, key: str) -> int:
        """Returns when a call of ``model`` with API key ``key`` may go; its permit's number."""
        ...

    def spent(self, permit: int, outcome: str, *, retry_delay: float | None = None, tokens: int = 0) -> None:
        """What became of the call (``protocol.OUTCOMES``)."""
        ...


def key_id(env: Mapping[str, str]) -> str:
    """Which quota the calls count against, without the secret: a digest of the API key
    google-genai reads (``GOOGLE_API_KEY`` before ``GEMINI_API_KEY``), or the Vertex AI project."""
    if env.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in ("1", "true"):
        return f"vertex:{env.get('GOOGLE_CLOUD_PROJECT', '')}:{env.get('GOOGLE_CLOUD_LOCATION', '')}"
    key = env.get("GOOGLE_API_KEY") or env.get("GEMINI_API_KEY") or ""
    return hashlib.sha256(key.encode()).hexdigest()[:16] if key else ""


def retry_delay(details: Any) -> float | None:
    """RetryInfo's ``retryDelay`` in seconds, from a Gemini error's JSON (``{"error": {"details":
    [{"@type": ".../google.rpc.RetryInfo", "retryDelay": "26s"}, ...]}}``, or the inner object);
    None when it names none."""
    if isinstance(details, list) and len(details) == 1:
        details = details[0]
    if not isinstance(details, dict):
        return None
    inner = details.get(API_ERROR)
    items = (inner if isinstance(inner, dict) else details).get(API_DETAILS)
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("@type") == RETRY_INFO:
            match = _DURATION.match(str(item.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return None


def throttled(error: BaseException) -> tuple[bool, float | None]:
    """Whether ``error`` is the API throttling (429 / RESOURCE_EXHAUSTED), and the delay it named."""
    code = getattr(error, "code", None)
    status = getattr(error, "status", None)
    # google-genai's ClientError has ``code``; other clients (LiteLLM's RateLimitError) ``status_code``.
    if 429 not in (code, getattr(error, "status_code", None)) and status != "RESOURCE_EXHAUSTED":
        return False, None
    return True, retry_delay(getattr(error, "details", None))


def _tokens(response: Any) -> int:
    usage = getattr(response, "usage_metadata", None)
    return int(getattr(usage, "total_token_count", 0) or 0)


class RemotePermits:
    """Permits asked of the parent over the protocol; ``send`` is the worker's.

    Only for the models the parent paces: those it names (``pace``: a quota given for them, or
    the API throttled them) and any this worker saw throttled. Until then a call goes at once and
    says so (``took``), so the parent still counts it (the rate it learns from a 429 is the calls
    it heard of): asking first cost every call a round trip to a parent that may be busy."""

    def __init__(self, send: Callable[[dict[str, Any]], None] | None = None):
        self.send = send or (lambda message: None)
        self.numbers = itertools.count()
        self.waiting: dict[int, asyncio.Future[None]] = {}
        self.paced: set[tuple[str, str]] = set()  # (model, key), either may be ANY
        self.models: dict[int, tuple[str, str]] = {}  # a permit's model and key, until spent

    def pace(self, model: Any, key: Any) -> None:
        """The parent paces the calls of ``model`` with ``key`` (``ANY``: every model, or key) from now on."""
        self.paced.add((str(model), str(key)))

    def asks(self, model: str, key: str) -> bool:
        paced = self.paced
        return bool(paced) and ((model, key) in paced or (model, ANY) in paced or (ANY, key) in paced or (ANY, ANY) in paced)

    async def acquire(self, model: str, key: str) -> int:
        number = next(self.numbers)
        self.models[number] = (model, key)
        if not self.asks(model, key):
            self.send(protocol.took(number, model, key))
            return number
        granted = asyncio.get_running_loop().create_future()
        self.waiting[number] = granted
        self.send(protocol.permit(number, model, key))
        try:
            await granted
        except asyncio.CancelledError:
            self.waiting.pop(number, None)
            self.models.pop(number, None)
            self.send(protocol.spent(number, protocol.UNUSED))  # the question ended while it waited
            raise
        return number

    def granted(self, number: Any) -> None:
        waiter = self.waiting.pop(number, None) if isinstance(number, int) else None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def spent(self, permit: int, outcome: str, *, retry_delay: float | None = None, tokens: int = 0) -> None:
        bucket = self.models.pop(permit, None)
        if outcome == protocol.THROTTLED and bucket is not None:
            self.paced.add(bucket)  # its next try asks, without waiting to hear the parent's ``pace``
        self.send(protocol.spent(permit, outcome, retry_delay=retry_delay, tokens=tokens))


class LocalPermits:
    """Permits of one process alone: every call goes at once, except after a 429, when the
    model's calls wait as long as it said (or a backoff, when it said nothing)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.numbers = itertools.count()
        self.models: dict[int, tuple[tuple[str, str], float]] = {}  # a permit's model and key, and when it was given
        self.hold: dict[tuple[str, str], float] = {}
        self.backoff: dict[tuple[str, str], tuple[float, float]] = {}  # the backoff, and when it last grew

    async def acquire(self, model: str, key: str) -> int:
        while (wait := self.hold.get((model, key), 0.0) - self.clock()) > 0:
            await asyncio.sleep(wait)
        number = next(self.numbers)
        self.models[number] = ((model, key), self.clock())
        return number

    def spent(self, permit: int, outcome: str, *, retry_delay: float | None = None, tokens: int = 0) -> None:
        given = self.models.pop(permit, None)
        if given is None:
            return
        bucket, at = given
        if outcome != protocol.THROTTLED:
            self.backoff.pop(bucket, None)
            return
        now = self.clock()
        if retry_delay is None:
            # As run/pacing.py's Bucket: a burst's 429s grow the backoff once.
            first, longest = BACKOFF_S
            backoff, grew = self.backoff.get(bucket, (first / 2, -math.inf))
            if bucket not in self.backoff or at >= grew:
                backoff, grew = min(longest, backoff * 2), now
                self.backoff[bucket] = (backoff, grew)
            retry_delay = backoff
        self.hold[bucket] = max(self.hold.get(bucket, 0.0), now + retry_delay)


def paced_model(inner: Any, permits: Permits, key: str) -> Any:
    """A BaseLlm that asks ``permits`` before each call of ``inner`` and tries a throttled call again."""
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse

    class PacedLlm(BaseLlm):
        agent_eval_wrapper: ClassVar[bool] = True  # model_calls' door leaves its method as it is

        def agent_eval_wrapped(self) -> Any:
            """The model that answers (the model cache keys on it: ``cache.model_identity``)."""
            return inner

        async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
            faults = 0
            while True:
                permit = await permits.acquire(inner.model, key)
                tokens, seen = 0, False
                try:
                    async with contextlib.aclosing(inner.generate_content_async(llm_request, stream=stream)) as responses:
                        while True:
                            try:
                                with origin.waiting_for_model():
                                    response = await anext(responses)
                            except StopAsyncIteration:
                                break
                            except Exception as error:
                                # Raised by the model call itself: the client, its transport, the reply.
                                origin.tag(error, origin.model_call_origin(error))
                                raise
                            tokens, seen = max(tokens, _tokens(response)), True
                            yield response
                except Exception as error:
                    is_throttled, delay = throttled(error)
                    if not seen and is_throttled:
                        permits.spent(permit, protocol.THROTTLED, retry_delay=delay)
                        if delay:
                            await asyncio.sleep(delay)  # this call waits what the API said, whatever the others do
                        continue  # asked again: the turn goes on where it was
                    permits.spent(permit, protocol.FAILED)
                    if seen or faults >= MODEL_RETRIES or not origin.worth_retrying(error):
                        raise
                    faults += 1
                    await asyncio.sleep(fault_backoff(faults))
                    continue  # a model fault before any reply: asked again, the turn goes on
                except BaseException:
                    permits.spent(permit, protocol.OK, tokens=tokens)  # stopped while the call was made: it counted
                    raise
                permits.spent(permit, protocol.OK, tokens=tokens)
                return

    return PacedLlm(model=inner.model)
