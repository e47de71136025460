"""The breaker that takes the model API for down after attempts in a row that failed in it."""

from __future__ import annotations

import pytest

from agent_eval_action.agent_worker import protocol
from agent_eval_action.run.breaker import TRIP, Breaker, OutageDeclared
from agent_eval_action.run.workers.process import RemoteError


def _error(origin: str) -> RemoteError:
    return RemoteError("ServerError", "503 UNAVAILABLE. overloaded", 503, origin)


def test_attempts_in_a_row_that_failed_in_the_model_trip_it() -> None:
    breaker = Breaker()
    for _ in range(TRIP - 1):
        breaker.heard(_error(protocol.MODEL))
        breaker.check()
    breaker.heard(_error(protocol.OUTSIDE))
    with pytest.raises(OutageDeclared, match=r"6 attempts in a row.*503 UNAVAILABLE"):
        breaker.check()


def test_an_answer_or_the_agents_own_error_in_between_starts_the_count_over() -> None:
    breaker = Breaker()
    for outcome in (_error(protocol.MODEL), None, _error(protocol.MODEL), _error(protocol.AGENT)) * 3:
        breaker.heard(outcome)
    breaker.check()  # never six in a row
    for _ in range(TRIP):
        breaker.heard(_error(protocol.MODEL))
    assert breaker.tripped
    breaker.heard(None)  # one still in flight when it tripped came back answered: not down
    breaker.check()


def test_an_error_that_says_no_origin_is_read_as_before() -> None:
    breaker = Breaker()
    for _ in range(TRIP):
        breaker.heard(RuntimeError("503 UNAVAILABLE"))  # no origin: not known to be the model's
    breaker.check()
