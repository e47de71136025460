"""The one retry policy: 429 / 503 / deadlines are tried again after a backoff spent outside the
concurrency slot, anything else (a 400, a bug) is raised at once, and attempts the adaptive pool
takes the blame for do not use up the retries."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from agent_eval_action.run.retry import RetryPolicy, call_with_retries, describe, is_congestion, is_transient
from agent_eval_action.run.workers.process import RemoteError

NO_WAIT = RetryPolicy(retries=3, backoff_initial_s=0.0, backoff_max_s=0.0)


class ApiError(Exception):
    def __init__(self, message: str, **attributes: Any) -> None:
        super().__init__(message)
        for name, value in attributes.items():
            setattr(self, name, value)


class Response:
    def __init__(self, status_code: int) -> None:
        self.status_code = status_code


@pytest.mark.parametrize(
    ("error", "transient", "congestion"),
    [
        (ApiError("quota", code=429), True, True),
        (ApiError("bad request", code=400), False, False),
        (ApiError("unavailable", status_code=503), True, False),
        (ApiError("gateway", response=Response(504)), True, True),
        (ApiError("not found", response=Response(404)), False, False),
        (ApiError("429 RESOURCE_EXHAUSTED. Quota exceeded"), True, True),
        (ApiError("503 UNAVAILABLE"), True, False),
        (ApiError("DEADLINE_EXCEEDED while waiting"), True, True),
        (ApiError("HTTP Error: Too Many Requests"), True, True),
        (ApiError("400 INVALID_ARGUMENT"), False, False),
        (ApiError("a True code is no status", code=True), False, False),
        (ValueError("the agent's own bug"), False, False),
        (TimeoutError(), False, True),
    ],
)
def test_which_errors_are_retried_and_which_say_too_much_is_in_flight(error: BaseException, transient: bool, congestion: bool) -> None:
    assert is_transient(error) is transient
    assert is_congestion(error) is congestion


def test_an_error_from_the_agents_process_is_judged_by_its_original_type() -> None:
    assert is_transient(ApiError("quota", remote_type="ResourceExhausted_RESOURCE_EXHAUSTED"))
    assert describe(ApiError("quota", remote_type="ClientError")) == "ClientError: quota"


def test_describe_names_the_type_unless_the_message_is_already_a_sentence() -> None:
    assert describe(ValueError("no such tool")) == "ValueError: no such tool"
    assert describe(ApiError("the agent's process died (exit code 9)", plain=True)) == "the agent's process died (exit code 9)"
    assert describe(KeyError()) == "KeyError: KeyError()"


def test_the_delay_doubles_up_to_the_cap_plus_at_most_one_initial_backoff_of_jitter() -> None:
    policy = RetryPolicy(backoff_initial_s=1.0, backoff_max_s=5.0)
    for attempt, base in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 5.0), (10, 5.0)]:
        for _ in range(50):
            assert base <= policy.delay(attempt) <= base + 1.0


class Flaky:
    """Fails with each of ``errors`` in turn, then answers "ok"; counts the slots it ran in."""

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.calls = 0
        self.in_slot = 0
        self.most_in_slot = 0
        self.slots = 0

    async def __call__(self) -> str:
        self.calls += 1
        assert self.in_slot == 1, "called outside its slot"
        if self.errors:
            raise self.errors.pop(0)
        return "ok"

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        self.slots += 1
        self.in_slot += 1
        self.most_in_slot = max(self.most_in_slot, self.in_slot)
        try:
            yield
        finally:
            self.in_slot -= 1


def test_a_429_is_tried_again_and_the_answer_returned() -> None:
    flaky = Flaky(ApiError("quota", code=429), ApiError("quota", code=429))
    assert asyncio.run(call_with_retries(flaky, NO_WAIT, flaky.slot)) == "ok"
    assert flaky.calls == 3
    assert flaky.slots == 3 and flaky.most_in_slot == 1  # each attempt in a slot of its own, left before the backoff


def test_a_400_is_raised_at_once() -> None:
    flaky = Flaky(ApiError("bad request", code=400))
    with pytest.raises(ApiError, match="bad request"):
        asyncio.run(call_with_retries(flaky, NO_WAIT, flaky.slot))
    assert flaky.calls == 1


def test_retries_run_out_and_the_last_error_is_raised() -> None:
    flaky = Flaky(*(ApiError(f"quota {i}", code=429) for i in range(10)))
    with pytest.raises(ApiError, match="quota 3"):
        asyncio.run(call_with_retries(flaky, NO_WAIT, flaky.slot))
    assert flaky.calls == 4  # the first try and three retries


def test_attempts_the_pool_takes_the_blame_for_are_forgiven_up_to_a_limit() -> None:
    policy = RetryPolicy(retries=1, backoff_initial_s=0.0, backoff_max_s=0.0, forgiven=2)
    heard: list[str] = []

    def blame(error: BaseException) -> bool:
        heard.append(str(error))
        return True

    flaky = Flaky(*(ApiError(f"quota {i}", code=429) for i in range(10)))
    with pytest.raises(ApiError, match="quota 3"):
        asyncio.run(call_with_retries(flaky, policy, flaky.slot, on_transient=blame))
    assert flaky.calls == 4  # two forgiven, then the one retry, then raised
    assert heard == ["quota 0", "quota 1", "quota 2", "quota 3"]


def test_a_non_transient_error_is_not_reported_to_the_pool() -> None:
    heard: list[BaseException] = []

    def blame(error: BaseException) -> bool:
        heard.append(error)
        return True

    flaky = Flaky(ApiError("bad request", code=400))
    with pytest.raises(ApiError):
        asyncio.run(call_with_retries(flaky, NO_WAIT, flaky.slot, on_transient=blame))
    assert heard == []


@pytest.mark.parametrize(
    ("origin", "type_name", "message", "code", "transient"),
    [
        ("model", "RemoteProtocolError", "peer closed connection without sending complete message body", None, True),
        ("model", "UnknownApiResponseError", "Failed to parse response as JSON", None, True),
        ("outside", "WorkerDied", "the agent process was killed by signal SIGKILL", None, True),
        ("model", "ClientError", "403 PERMISSION_DENIED", 403, False),  # asking again changes no credentials
        # No key: google-genai raises before any request, so no status; its words say so (was retried for 15-20 s).
        ("model", "ValueError", "Missing key inputs argument! To use the Google AI API, provide (`api_key`) arguments.", None, False),
        ("model", "DefaultCredentialsError", "Your default credentials were not found.", None, False),
        ("agent", "URLError", "<urlopen error [Errno 111] Connection refused>", None, False),
        ("agent", "ServerError", "503 UNAVAILABLE. a tool's own backend", 503, False),  # a tool's 503 is the tool's
    ],
)
def test_what_is_retried_is_decided_by_where_it_was_raised(
    origin: str, type_name: str, message: str, code: int | None, transient: bool
) -> None:
    assert is_transient(RemoteError(type_name, message, code, origin)) is transient
