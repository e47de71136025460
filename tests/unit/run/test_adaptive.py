"""The adaptive limit against a model API with a hidden quota, on simulated time: every event
(a call ending, a 429, a retry after backoff, the limiter's tick) happens at a time the test sets,
so the outcome is the same on a quiet and a busy machine. The loopback test of the whole run
(tests/integration/test_budgets_and_concurrency.py) checks what a real run does with 429s; where
the limit settles is decided here, where the quota is the only bottleneck (on a busy machine the
agent's own CPU can be, and then a limit above the quota is right)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from agent_eval_action.run.adaptive import Limiter

STEP_S = 0.01


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Quota:
    """A model API that serves ``limit`` calls at once, each ``latency_s`` long, and answers 429 beyond."""

    limit: int
    latency_s: float
    ends: list[float] = field(default_factory=list)
    served: int = 0
    throttled: int = 0
    peak: int = 0

    def call(self, now: float) -> bool:
        if len(self.ends) >= self.limit:
            self.throttled += 1
            return False
        self.ends.append(now + self.latency_s)
        self.served += 1
        self.peak = max(self.peak, len(self.ends))
        return True

    def finish(self, now: float) -> int:
        done = [end for end in self.ends if end <= now + 1e-9]
        self.ends = [end for end in self.ends if end > now + 1e-9]
        return len(done)


def simulate(questions: int, quota: Quota, backoff_s: float = 0.05) -> tuple[Limiter, Quota]:
    """Runs ``questions`` one-call questions through the limiter: a slot is held for the call;
    a 429 gives the slot back and the question waits ``backoff_s`` before it asks again."""
    clock = Clock()
    limiter = Limiter(clock=clock)
    retry_at: list[float] = []
    ready, done = questions, 0
    while done < questions:
        clock.now += STEP_S
        finished = quota.finish(clock.now)
        limiter.in_flight -= finished
        done += finished
        ready += sum(at <= clock.now for at in retry_at)
        retry_at = [at for at in retry_at if at > clock.now]
        while ready and limiter.in_flight < limiter.limit:
            ready -= 1
            if quota.call(clock.now):
                limiter.in_flight += 1
            else:
                limiter.congested()
                retry_at.append(clock.now + backoff_s)
        limiter.waiting = ready
        limiter.tick()
        assert clock.now < 600, "the simulated run never ended"
    return limiter, quota


def test_auto_concurrency_settles_near_the_quota_and_not_at_the_ceiling() -> None:
    limiter, quota = simulate(150, Quota(limit=12, latency_s=0.15))
    stats = limiter.stats()
    assert quota.served == 150 and quota.peak == 12 and quota.throttled > 0
    assert stats.decreases >= 1 and stats.congestion == quota.throttled
    assert 6 <= stats.final <= 24, stats  # near the quota of 12...
    assert stats.reached < stats.ceiling  # ...never at the ceiling of 64


def test_a_quota_above_the_ceiling_lets_the_limit_grow_to_it() -> None:
    limiter, quota = simulate(600, Quota(limit=100, latency_s=0.15))
    assert quota.throttled == 0 and limiter.stats().reached == limiter.ceiling == 64


def test_while_calls_wait_for_their_quota_the_limit_comes_down_to_what_it_serves() -> None:
    clock = Clock()
    limit = Limiter(start=16, ceiling=64, interval_s=1.0, slow_start_s=1.0, clock=clock)
    served: list[float | None] = [None]
    limit.paced = lambda: served[0]
    clock.now += 1
    limit.in_flight, limit.waiting = limit.limit, 1
    assert limit.tick() and limit.limit == 32  # nothing waits for a quota: slow start
    served[0] = float("inf")  # calls wait on a 429's delay, no rate known yet
    clock.now += 1
    limit.in_flight = limit.limit
    assert not limit.tick() and limit.limit == 32  # held, not raised
    served[0] = 3  # a quota of 10 requests a minute
    clock.now += 1
    assert not limit.tick() and limit.limit == 3
    served[0] = None
    clock.now += 1
    limit.in_flight = limit.limit
    assert limit.tick() and limit.limit == 6  # the quota no longer binds: it grows again
    fixed = Limiter(8, clock=clock)
    fixed.paced = lambda: 3
    assert not fixed.tick() and fixed.limit == 8  # a number the user fixed stays


# -- the slot: on a real event loop, each step awaited in turn (no timer decides an order) ------


async def _settle() -> None:
    for _ in range(5):  # a hand-over resumes its question a loop iteration later
        await asyncio.sleep(0)


def test_a_freed_slot_goes_to_the_question_waiting_longest_and_wakes_no_other() -> None:
    async def run() -> list[str]:
        limiter = Limiter(fixed=2)
        order: list[str] = []
        release = {name: asyncio.Event() for name in "abcdef"}

        async def question(name: str) -> None:
            async with limiter.slot():
                order.append(name)
                await release[name].wait()

        tasks = []
        for name in "abcdef":
            tasks.append(asyncio.create_task(question(name)))
            await _settle()
        assert order == ["a", "b"] and limiter.waiting == 4 and limiter.in_flight == 2
        release["b"].set()
        await _settle()
        assert order == ["a", "b", "c"] and limiter.waiting == 3
        release["a"].set()
        release["c"].set()
        await _settle()
        assert order == ["a", "b", "c", "d", "e"] and limiter.in_flight == 2
        for event in release.values():
            event.set()
        await asyncio.gather(*tasks)
        assert limiter.in_flight == 0 and limiter.waiting == 0 and limiter.max_in_flight == 2
        return order

    assert asyncio.run(run()) == list("abcdef")


def test_a_question_cancelled_as_its_slot_is_handed_over_passes_the_slot_on() -> None:
    """Cancelled after the slot was handed to it and before it resumed (a run interrupted, a
    budget reached): the slot goes to the next question waiting, none waits for nothing."""

    async def run() -> None:
        limiter = Limiter(fixed=1)
        entered: list[str] = []

        async def question(name: str) -> None:
            async with limiter.slot():
                entered.append(name)

        first = limiter.slot()
        await first.__aenter__()
        second = asyncio.create_task(question("second"))
        third = asyncio.create_task(question("third"))
        await _settle()
        assert limiter.waiting == 2
        # The slot is handed to "second" as the first question leaves it (nothing in between
        # lets the loop run), and "second" is cancelled before it resumes.
        await first.__aexit__(None, None, None)
        second.cancel()
        await asyncio.gather(second, return_exceptions=True)
        await asyncio.wait_for(third, timeout=30)
        assert entered == ["third"] and limiter.in_flight == 0 and limiter.waiting == 0

    asyncio.run(run())


def test_a_question_cancelled_while_it_waits_leaves_its_place_and_no_slot_taken() -> None:
    async def run() -> None:
        limiter = Limiter(fixed=1)
        hold = asyncio.Event()
        entered: list[str] = []

        async def question(name: str, wait: asyncio.Event | None = None) -> None:
            async with limiter.slot():
                entered.append(name)
                if wait is not None:
                    await wait.wait()

        first = asyncio.create_task(question("first", hold))
        await _settle()
        waiting = asyncio.create_task(question("cancelled"))
        last = asyncio.create_task(question("last"))
        await _settle()
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
        assert limiter.waiting == 1 and limiter.in_flight == 1
        hold.set()
        await asyncio.gather(first, last)
        assert entered == ["first", "last"] and limiter.in_flight == 0

    asyncio.run(run())


def test_a_raised_limit_hands_its_new_slots_to_the_questions_waiting() -> None:
    async def run() -> None:
        clock = Clock()
        limiter = Limiter(start=1, ceiling=4, clock=clock)
        hold = asyncio.Event()
        entered: list[int] = []

        async def question(number: int) -> None:
            async with limiter.slot():
                entered.append(number)
                await hold.wait()

        tasks = [asyncio.create_task(question(n)) for n in range(4)]
        await _settle()
        assert entered == [0] and limiter.waiting == 3
        clock.now += 1.0  # calm for long enough: the next tick doubles the limit
        adapting = asyncio.create_task(limiter.adapt())
        for _ in range(3000):  # the tick comes a tenth of a second in: waited for, 30 s at most
            if len(entered) == 2:
                break
            await asyncio.sleep(0.01)
        assert entered == [0, 1] and limiter.limit == 2 and limiter.in_flight == 2
        adapting.cancel()
        hold.set()
        await asyncio.gather(*tasks)
        assert entered == [0, 1, 2, 3]

    asyncio.run(run())
