"""One pacing per model and API key for the whole run: the agent's workers (over the protocol)
and the judges ask it for a permit before each model call, so together they stay within the
model API's quota instead of each finding it on its own.

The quota is requests (and tokens) per minute. Where the team gave it (``quota``), calls go at
once until a minute holds that many, then each waits until the oldest of them is a minute old
(a sliding window, which a fixed-minute quota accepts as well). Where it did not, calls go at
once until the API throttles one: a 429 RESOURCE_EXHAUSTED whose RetryInfo names a delay ``d``
says the window is full until ``d`` from now, so every call of that model waits that long, and
the calls that succeeded between ``now + d - minute`` and now (plus the one that will expire
then) are the rate learnt; unless the window it speaks of began before our first call, or the
API took a call while its window held more than that in the last minute: then it is not our full
window (a refusal, or a quota others share) and only the refused call waits as told, the others
go on. A later 429 lowers a learnt rate. A learnt rate is a guess (an API that refuses a
share of calls at random, with a RetryInfo of a few seconds, looks like a full window of what was
going at the time): each minute without a 429 raises it by a fifth (never above a quota given), so
the pace recovers when the refusals stop, and a real quota, overshot, says so again with a 429.
The calls a raised rate lets past what the API took in the last minute are probes and go one at
a time, each when the one before was answered: a real quota's overshoot costs one 429, not as
many as the raise let go at once (a fifth of the rate: 12% of a run's calls were 429s at 30
requests a minute; the goal is at most 10%).
A 429 that names no delay is "too much at once", not a rate: the calls wait a backoff and the
concurrency limiter hears it.

Time is the clock and sleep given (simulated in the unit tests).
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import itertools
import math
import os
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from agent_eval_action.agent_worker import protocol
from agent_eval_action.agent_worker.model.pacing import ANY, BACKOFF_S, throttled

T = TypeVar("T")

MINUTE_S = 60.0
# While calls wait for their quota, as many questions in flight as make this many seconds of
# calls at the rate paced to: enough to keep the quota busy, few enough that no question's time
# runs out in the queue (at 10 requests a minute: 3 questions, each call waiting 18 s at most).
BACKLOG_S = 15.0
# Each quiet minute (no 429) raises a learnt rate by this factor.
RECOVERY = 1.2
# A loopback stand-in of the API may count a shorter "minute" (tests, benches): set to its length.
ENV_MINUTE = "AGENT_EVAL_QUOTA_MINUTE_S"


@dataclass(frozen=True)
class Quota:
    """Requests and tokens per minute of one model and key (None: not known)."""

    rpm: int | None = None
    tpm: int | None = None


@dataclass(eq=False)
class _Grant:
    at: float  # when it was granted
    bucket: Bucket
    done: float | None = None  # when its call was over (once: a permit is spent once): the API had it by then
    tokens: int | None = None  # what it used, once said

    def seen(self) -> float:
        """The latest the API can have counted the call (in flight: when it was granted)."""
        return self.done if self.done is not None else self.at


@dataclass(eq=False)
class Bucket:
    """The calls of one model with one API key."""

    quota: Quota
    minute_s: float
    name: tuple[str, str] = ("", "")  # its model and key
    rpm: int | None = None  # what it paces to: the quota given, or learnt from 429s
    tpm: int | None = None
    granted: list[_Grant] = field(default_factory=list)  # the calls that count against the window
    hold_until: float = -math.inf
    backoff_s: float | None = None
    congested_at: float = -math.inf  # when the backoff last grew
    quiet_since: float = math.inf  # since when no 429 lowered (nor a quiet minute raised) a learnt rate
    first_at: float = math.inf  # when its first call went
    # (when, how many calls the window held) for each call the API took in the last minute: a
    # 429 that speaks of a window holding fewer than it took then is a refusal, not a full window.
    took_at: deque[tuple[float, int]] = field(default_factory=deque)
    probe: _Grant | None = None  # the call in flight past what the API has taken, at a learnt rate
    # When each call over in the last minute was over, in order: how many the window held when the
    # API took a call is counted here, not by sorting the window (every call of an unpaced model
    # sorted the minute's calls: quadratic in a run's calls a minute, 1,200 calls 0.12 s of the loop).
    over: list[float] = field(default_factory=list)
    kept = 0  # how many grants the window kept when last pruned (a grant prunes past twice that)
    calls = throttles = waiting = 0
    lock: asyncio.Lock | None = None

    def __post_init__(self) -> None:
        self.rpm, self.tpm = self.quota.rpm, self.quota.tpm
        # Clock granularity between us and the API (the window is timed by when calls were over,
        # which is never before the API counted them: no call's way there needs a margin).
        self.margin_s = 0.05 + 0.001 * self.minute_s

    def _window(self, now: float) -> list[_Grant]:
        """The calls the API may still count, by when it counted them at the latest."""
        self._prune(now)
        return sorted(self.granted, key=_Grant.seen)

    def _prune(self, now: float) -> None:
        """Forgets the calls over a minute or more ago."""
        self.granted = [g for g in self.granted if g.done is None or g.done > now - self.minute_s]
        self.kept = len(self.granted)
        del self.over[: bisect.bisect_right(self.over, now - self.minute_s)]

    def _over(self, grant: _Grant, now: float) -> None:
        """``grant``'s call is over, now."""
        grant.done = now
        bisect.insort(self.over, now)

    def _recover(self, now: float) -> None:
        """A learnt rate raised by a fifth for each minute without a 429 since it was last set."""
        while self.rpm is not None and now - self.quiet_since >= self.minute_s:
            raised = math.ceil(self.rpm * RECOVERY)
            self.rpm = raised if self.quota.rpm is None else min(self.quota.rpm, raised)
            self.quiet_since += self.minute_s
            if self.rpm == self.quota.rpm:
                self.quiet_since = math.inf  # back to the quota given: nothing left to recover
                return

    def next_time(self, now: float) -> float:
        """The earliest time the next call may go."""
        self._recover(now)
        at = max(now, self.hold_until)
        if self.rpm is None and self.tpm is None:
            return at  # no rate to keep to (and so no probe out): the window is not read
        window = self._window(now)
        if self.rpm is not None and len(window) >= self.rpm:
            edge = window[-self.rpm]
            at = max(at, edge.seen() + self.minute_s + self.margin_s)
            if at <= now and edge.done is None and edge.at > now - 2 * self.minute_s:
                # Granted a minute ago and still in flight: the API counted it when it arrived,
                # which on a busy machine can be well after it was granted. It leaves the window
                # a minute after it is over (a permit lost: two minutes after it was granted).
                at = now + self.margin_s
        if at <= now and self._probe_out(now, window):
            at = now + self.margin_s  # asked again soon: the probe's answer decides
        if self.tpm is not None:
            known = [g.tokens for g in window if g.tokens is not None]
            expect = sum(known) / len(known) if known else 0.0
            used = [g.tokens if g.tokens is not None else expect for g in window]
            total = sum(used)
            for grant, tokens in zip(window, used, strict=True):
                if total + expect <= self.tpm:
                    break
                total -= tokens  # the oldest leaves the window first
                at = max(at, grant.seen() + self.minute_s + self.margin_s)
        return at

    def _learnt(self) -> bool:
        """Whether the rate paced to was learnt (or lowered) from 429s, not the quota given."""
        return self.rpm is not None and self.rpm != self.quota.rpm

    def _past_taken(self, now: float, window: list[_Grant]) -> bool:
        """Whether the next call would make the window hold more than the API took in the last
        minute (at a learnt rate: a probe of the raised rate)."""
        return len(window) >= self._took_most(now)

    def _probe_out(self, now: float, window: list[_Grant]) -> bool:
        """A probe is in flight and the next call would be one too: it waits for the answer
        (a minute at most: a permit never given back does not stop the bucket)."""
        probe = self.probe
        if probe is None or probe.done is not None or probe not in self.granted or probe.at <= now - self.minute_s:
            return False
        return self._learnt() and self._past_taken(now, window)

    def grant(self, now: float) -> _Grant:
        if len(self.granted) > 2 * self.kept + 64:
            self._prune(now)  # an unpaced model's window is read by no one: kept from growing here
        self.first_at = min(self.first_at, now)
        given = _Grant(at=now, bucket=self)
        if self._learnt() and self._past_taken(now, self._window(now)):
            self.probe = given  # the window sorted only at a learnt rate: not for every call unpaced
        self.granted.append(given)
        self.calls += 1
        return given

    def forget(self, grant: _Grant) -> None:
        """A call that did not count against the quota (throttled, or never made)."""
        with contextlib.suppress(ValueError):  # already out of the window
            self.granted.remove(grant)
            if grant.done is not None:
                self.over.remove(grant.done)

    def throttled(self, grant: _Grant, now: float, delay_s: float | None) -> bool:
        """Hears that ``grant``'s call was answered 429; True when it named no delay (congestion)."""
        self.forget(grant)
        self.throttles += 1
        if delay_s is None:
            # The calls sent before the backoff last grew are the burst it answered: their 429s
            # are the same news (48 at once must not make a 0.5 s backoff 30 s). It grows again
            # only for a call sent after it, which the backoff did not spare.
            if self.backoff_s is None or grant.at >= self.congested_at:
                first, longest = BACKOFF_S
                self.backoff_s = min(longest, (self.backoff_s or first / 2) * 2)
                self.congested_at = now
            self.hold_until = max(self.hold_until, now + self.backoff_s)
            return True
        # The API's window is full until delay_s after it refused the call, which it had no
        # earlier than it was granted: the calls it holds are among those over since then minus
        # a minute, and those still in flight. Too many, maybe (a 429 still on its way counts
        # until it arrives): a later 429 lowers the rate, never raises it.
        since = grant.at + delay_s - self.minute_s
        learnt = max(1, sum(1 for g in self._window(now) if g.done is None or g.done >= since))
        if since < self.first_at - self.margin_s or learnt < self._took_most(now):
            # Not our full window: it speaks of calls from before our first (a quota others
            # share, a fixed minute begun before we were), or of fewer calls than the API took in
            # the last minute (a refusal). The refused call waits as told (its caller does); the
            # others go on, and no rate is learnt from it.
            return False
        self.hold_until = max(self.hold_until, now + delay_s)
        self.rpm = learnt if self.rpm is None else min(self.rpm, learnt)
        self.quiet_since = now
        return False

    def succeeded(self, grant: _Grant, now: float, tokens: int) -> None:
        # What the API held at least when it took this call: itself, and the calls over before it
        # went, in the minute before (and in the window: over less than a minute before now).
        start = max(now, grant.at) - self.minute_s
        held = 1 + max(0, bisect.bisect_right(self.over, grant.at) - bisect.bisect_right(self.over, start))
        self._over(grant, now)
        grant.tokens = tokens
        self.backoff_s = None
        self._recent_took(now)  # only the last minute's are read (an unpaced model's by no one)
        self.took_at.append((now, held))

    def _took_most(self, now: float) -> int:
        """The most calls the window held when the API took one, in the last minute."""
        return max((held for _, held in self._recent_took(now)), default=0)

    def _recent_took(self, now: float) -> deque[tuple[float, int]]:
        """:attr:`took_at` of the last minute (the earlier ones forgotten)."""
        while self.took_at and self.took_at[0][0] <= now - self.minute_s:
            self.took_at.popleft()
        return self.took_at

    def failed(self, grant: _Grant, now: float) -> None:
        self._over(grant, now)


class Pacer:
    """Implements ``agent_worker.model.pacing.Permits`` for every model and key of a run."""

    def __init__(
        self,
        quotas: dict[str, Quota] | None = None,
        *,
        minute_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        on_congestion: Callable[[], object] = lambda: None,
    ):
        self.quotas = dict(quotas or {})
        self.minute_s = minute_s if minute_s is not None else float(os.environ.get(ENV_MINUTE) or MINUTE_S)
        self.clock = clock
        self.sleep = sleep
        self.on_congestion = on_congestion
        self.buckets: dict[tuple[str, str], Bucket] = {}
        self.permits: dict[int, _Grant] = {}
        self.numbers = itertools.count()
        # Told the model and key when a model becomes paced (the workers, which then ask for it).
        self.listeners: set[Callable[[str, str], object]] = set()

    def bucket(self, model: str, key: str) -> Bucket:
        found = self.buckets.get((model, key))
        if found is None:
            quota = self.quotas.get(model) or self.quotas.get(ANY) or Quota()
            found = self.buckets[(model, key)] = Bucket(quota=quota, minute_s=self.minute_s, name=(model, key))
        return found

    def paced(self) -> list[tuple[str, str]]:
        """The models (and keys; ``ANY``: every one) whose calls must ask for a permit first: those
        a quota was given for, and those the API throttled. Any other call goes at once and says
        so (:meth:`took`): no quota is known to wait for."""
        given = [(model, ANY) for model, quota in sorted(self.quotas.items()) if quota.rpm is not None or quota.tpm is not None]
        return given + [name for name, bucket in self.buckets.items() if bucket.throttles]

    def took(self, model: str, key: str) -> int:
        """A call of a model not paced went without asking: counted from now, as a permit."""
        number = next(self.numbers)
        self.permits[number] = self.bucket(model, key).grant(self.clock())
        return number

    async def acquire(self, model: str, key: str) -> int:
        bucket = self.bucket(model, key)
        if bucket.lock is None:
            bucket.lock = asyncio.Lock()  # first come, first served
        bucket.waiting += 1
        try:
            async with bucket.lock:
                while (at := bucket.next_time(now := self.clock())) > now:
                    await self.sleep(at - now)
                grant = bucket.grant(now)
        finally:
            bucket.waiting -= 1
        number = next(self.numbers)
        self.permits[number] = grant
        return number

    def spent(self, permit: int, outcome: str, *, retry_delay: float | None = None, tokens: int = 0) -> None:
        grant = self.permits.pop(permit, None)
        if grant is None:
            return
        bucket = grant.bucket
        if outcome == protocol.OK:
            bucket.succeeded(grant, self.clock(), tokens)
        elif outcome == protocol.UNUSED:
            bucket.forget(grant)
        elif outcome == protocol.THROTTLED:
            if bucket.throttled(grant, self.clock(), retry_delay):
                self.on_congestion()
            if bucket.throttles == 1:
                for listener in list(self.listeners):
                    listener(*bucket.name)  # its calls ask from now on, in every worker
        else:
            bucket.failed(grant, self.clock())

    def questions_served(self) -> float | None:
        """While calls wait for their quota, the questions in flight it serves without a long
        wait (``BACKLOG_S`` of calls at the slowest rate waited for; math.inf: no rate known
        yet); None when no call waits (``adaptive.Limiter.paced``)."""
        waited = [b for b in self.buckets.values() if b.waiting]
        if not waited:
            return None
        rates = [b.rpm for b in waited if b.rpm is not None]
        return max(1, math.ceil(min(rates) * BACKLOG_S / self.minute_s)) if rates else math.inf

    def throttled(self) -> int:
        return sum(b.throttles for b in self.buckets.values())

    def describe(self) -> str:
        """The rates paced to, for the run's report ("" when nothing was paced)."""
        paced = [(model, b) for (model, _), b in sorted(self.buckets.items()) if b.rpm is not None or b.tpm is not None]
        parts = []
        for model, b in paced:
            learnt = b.quota.rpm is None and b.rpm is not None
            limits = ", ".join(
                ([f"{b.rpm} requests/min{' (learnt from 429s)' if learnt else ''}"] if b.rpm is not None else [])
                + ([f"{b.tpm} tokens/min"] if b.tpm is not None else [])
            )
            parts.append(f"{model}: {limits}")
        return "; ".join(parts)


async def paced_call(permits: Pacer, model: str, key: str, call: Callable[[], Awaitable[T]], tokens: Callable[[T], int]) -> T:
    """``call()`` with a permit, tried again whenever the API throttles it (the judges' calls)."""
    while True:
        permit = await permits.acquire(model, key)
        try:
            answer = await call()
        except Exception as error:
            is_throttled, delay = throttled(error)
            permits.spent(permit, protocol.THROTTLED if is_throttled else protocol.FAILED, retry_delay=delay)
            if not is_throttled:
                raise
            if delay:
                await permits.sleep(delay)  # this call waits what the API said, whatever the others do
            continue
        except BaseException:
            permits.spent(permit, protocol.OK)  # stopped while it was asked: it counted
            raise
        permits.spent(permit, protocol.OK, tokens=tokens(answer))
        return answer
