"""The adaptive limit against a model API with a hidden quota, on simulated time: every event
(a call ending, a 429, a retry after backoff, the limiter's tick) happens at a time the test sets,
so the outcome is the same on a quiet and a busy machine. The loopback test of the whole run
(tests/integration/test_budgets_and_concurrency.py) checks what a real run does with 429s; where
the limit settles is decided here, where the quota is the only bottleneck (on a busy machine the
agent's own CPU can be, and then a limit above the quota is right)."""

from __future__ import annotations

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
