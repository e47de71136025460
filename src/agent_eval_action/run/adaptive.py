"""How many questions may be in flight: a fixed number, or one that adapts to the model API the
way TCP's congestion control does (additive increase, multiplicative decrease).

Adaptive: start at ``start``; while work is waiting, every slot is busy, nothing was throttled
lately and no model call waits for its quota (``pacing.py`` paces those), double every ``slow_start_s`` (slow start: a 429 comes back within a round trip, so
this is as quick to stop as it is to grow) until the first sign of congestion, then add one per
``interval_s``; on a 429 / RESOURCE_EXHAUSTED / deadline, halve (at most once per interval: one burst
of 429s is one signal). Never above ``ceiling`` nor below 1.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from agent_eval_action.models.results import RunStats

START = 16
CEILING = 64
INTERVAL_S = 0.25
SLOW_START_S = 0.1


class Limiter:
    def __init__(
        self,
        fixed: int | None = None,
        *,
        ceiling: int = CEILING,
        start: int = START,
        interval_s: float = INTERVAL_S,
        slow_start_s: float = SLOW_START_S,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.adaptive = fixed is None
        self.ceiling = max(1, fixed if fixed is not None else ceiling)
        self.limit = min(self.ceiling, fixed if fixed is not None else start)
        self.interval_s = interval_s
        self.slow_start_s = slow_start_s
        self.clock = clock
        self.slow_start = True
        self.in_flight = self.waiting = 0
        self.peak = self.limit
        self.max_in_flight = 0
        self.congestion = self.decreases = 0
        self._last_change = clock()
        self._last_decrease = -math.inf  # the first 429 halves at once
        # The questions waiting for a slot, first come first served: a slot that frees (or a limit
        # raised) is handed to the next of them, in_flight counting it from then. Waking every one
        # of them to look, as a condition's notify_all did, cost each freed slot a wake-up per
        # question waiting: quadratic in a dataset's questions (2,000 at concurrency 32: 1 s of
        # the run's loop; 5,000: 3.8 s).
        self._queue: deque[asyncio.Future[None]] = deque()
        # While model calls wait for their quota (run/pacing.py): how many questions in flight
        # the quota serves without a long wait (math.inf: a rate not known yet); None when no
        # call waits. More in flight would only wait too, their time running: the limit does not
        # grow, and comes down to that number (the questions not started wait without a clock).
        self.paced: Callable[[], float | None] = lambda: None

    # -- the slot ------------------------------------------------------------------------------

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        if self._queue or self.in_flight >= self.limit:
            handed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._queue.append(handed)
            self.waiting += 1
            try:
                await handed
            except asyncio.CancelledError:
                if handed.done() and not handed.cancelled():  # a slot was handed over: passed on
                    self.in_flight -= 1
                    self._hand_over()
                raise
            finally:
                self.waiting -= 1
        else:
            self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            yield
        finally:
            self.in_flight -= 1
            self._hand_over()

    def _hand_over(self) -> None:
        """The free slots to the questions waiting longest (one cancelled meanwhile is passed by)."""
        while self._queue and self.in_flight < self.limit:
            handed = self._queue.popleft()
            if not handed.done():
                self.in_flight += 1
                handed.set_result(None)

    # -- adapting ------------------------------------------------------------------------------

    def congested(self) -> bool:
        """Hears a 429 / RESOURCE_EXHAUSTED / deadline; True when adapting (the pool backs off and
        the attempt's retry is on us)."""
        self.congestion += 1
        if not self.adaptive:
            return False
        now = self.clock()
        if now - self._last_decrease >= self.interval_s:
            self.limit = max(1, self.limit // 2)
            self.slow_start = False
            self.decreases += 1
            self._last_decrease = self._last_change = now
        return True

    def tick(self) -> bool:
        """Raises the limit when it has been the bottleneck for a calm interval; True when it did."""
        now = self.clock()
        step = self.slow_start_s if self.slow_start else self.interval_s
        calm = now - self._last_decrease >= self.interval_s and now - self._last_change >= step
        saturated = self.waiting > 0 and self.in_flight >= self.limit
        served = self.paced()
        if served is not None:
            if self.adaptive and self.limit > served:
                self.limit, self._last_change = max(1, int(served)), now
            return False
        if not (self.adaptive and calm and saturated and self.limit < self.ceiling):
            return False
        self.limit = min(self.ceiling, self.limit * 2 if self.slow_start else self.limit + 1)
        self.peak = max(self.peak, self.limit)
        self._last_change = now
        return True

    async def adapt(self) -> None:
        """Runs :meth:`tick` until cancelled."""
        while True:
            await asyncio.sleep(self.slow_start_s if self.slow_start else self.interval_s)
            if self.tick():
                self._hand_over()

    def stats(self) -> RunStats:
        return RunStats(
            concurrency="auto" if self.adaptive else str(self.ceiling),
            ceiling=self.ceiling,
            reached=self.peak,
            final=self.limit,
            max_in_flight=self.max_in_flight,
            congestion=self.congestion,
            decreases=self.decreases,
        )

    def describe(self) -> str:
        if not self.adaptive:
            return f"concurrency {self.limit}"
        return f"concurrency {self.limit} (auto, up to {self.ceiling})"
