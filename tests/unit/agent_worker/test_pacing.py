"""The worker's side of pacing: a 429 read as google-genai raises it (``ClientError`` with the
API's JSON as ``details``), and the wrapped model asking for a permit before each call and asking
again, inside the turn, when the API throttles it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import errors, types

from agent_eval_action.agent_worker import protocol
from agent_eval_action.agent_worker.model.origin import model_call_origin, origin_of
from agent_eval_action.agent_worker.model.pacing import MODEL_RETRIES, LocalPermits, key_id, paced_model, retry_delay, throttled

QUOTA_429 = {
    "error": {
        "code": 429,
        "message": "You exceeded your current quota, please check your plan and billing details.",
        "status": "RESOURCE_EXHAUSTED",
        "details": [
            {
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [{"quotaId": "GenerateRequestsPerMinutePerProjectPerModel", "quotaValue": "120"}],
            },
            {"@type": "type.googleapis.com/google.rpc.Help", "links": [{"url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "26s"},
        ],
    }
}


def test_the_retry_delay_is_read_from_the_errors_retry_info() -> None:
    assert retry_delay(QUOTA_429) == 26.0
    assert retry_delay(QUOTA_429["error"]) == 26.0
    assert retry_delay([QUOTA_429]) == 26.0  # a streamed error comes as a list of one
    fine = {"error": {"details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.250s"}]}}
    assert retry_delay(fine) == 0.25
    assert retry_delay({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED"}}) is None
    assert retry_delay({"error": {"details": "not a list"}}) is None
    assert retry_delay("plain text") is None


def test_a_429_is_throttling_and_other_errors_are_not() -> None:
    assert throttled(errors.ClientError(429, QUOTA_429)) == (True, 26.0)
    assert throttled(errors.ClientError(429, {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED"}})) == (True, None)
    assert throttled(errors.ClientError(400, {"error": {"code": 400, "status": "INVALID_ARGUMENT"}})) == (False, None)
    assert throttled(ValueError("429 in the text is no status")) == (False, None)

    class RateLimitError(Exception):  # as LiteLLM spells a 429
        status_code = 429

    assert throttled(RateLimitError("slow down")) == (True, None)


def test_the_key_is_told_apart_without_being_said() -> None:
    first = key_id({"GOOGLE_API_KEY": "secret-one"})
    assert first and "secret" not in first
    assert first == key_id({"GEMINI_API_KEY": "other", "GOOGLE_API_KEY": "secret-one"})  # google-genai's order
    assert first != key_id({"GOOGLE_API_KEY": "secret-two"})
    assert key_id({"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_CLOUD_PROJECT": "p", "GOOGLE_CLOUD_LOCATION": "l"}) == "vertex:p:l"
    assert key_id({}) == ""


# The same 429 with a RetryInfo short enough for a test to wait it out (the throttled call does).
SHORT_429 = {"error": {**QUOTA_429["error"], "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.01s"}]}}


class Scripted(BaseLlm):
    """Answers 429 (with RetryInfo) to its first ``throttle`` calls, then "fine"."""

    throttle: int = 1
    calls: int = 0

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        self.calls += 1
        if self.calls <= self.throttle:
            raise errors.ClientError(429, SHORT_429)
        yield LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text="fine")]),
            usage_metadata=types.GenerateContentResponseUsageMetadata(total_token_count=7),
        )


class Recorded:
    """Permits that grant at once and keep what each call said."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []
        self.said: list[tuple[int, str, float | None, int]] = []

    async def acquire(self, model: str, key: str) -> int:
        self.asked.append((model, key))
        return len(self.asked) - 1

    def spent(self, permit: int, outcome: str, *, retry_delay: float | None = None, tokens: int = 0) -> None:
        self.said.append((permit, outcome, retry_delay, tokens))


def _ask(model: Any) -> list[LlmResponse]:
    async def run() -> list[LlmResponse]:
        request = LlmRequest(contents=[types.Content(role="user", parts=[types.Part(text="hi")])])
        return [response async for response in model.generate_content_async(request)]

    return asyncio.run(run())


def test_a_throttled_call_is_asked_again_with_a_new_permit() -> None:
    inner = Scripted(model="gemini-2.5-flash", throttle=2)
    permits = Recorded()
    answers = _ask(paced_model(inner, permits, "key"))
    assert [a.content.parts[0].text for a in answers if a.content and a.content.parts] == ["fine"]
    assert inner.calls == 3 and permits.asked == [("gemini-2.5-flash", "key")] * 3
    assert permits.said == [(0, protocol.THROTTLED, 0.01, 0), (1, protocol.THROTTLED, 0.01, 0), (2, protocol.OK, None, 7)]


def test_other_errors_are_the_agents_and_say_failed() -> None:
    class Broken(Scripted):
        async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
            if self.throttle >= 0:  # always: the generator raises before its first answer
                raise errors.ClientError(400, {"error": {"code": 400, "status": "INVALID_ARGUMENT"}})
            yield LlmResponse()

    permits = Recorded()
    try:
        _ask(paced_model(Broken(model="m"), permits, "key"))
    except errors.ClientError as error:
        assert error.code == 400
    else:
        raise AssertionError("the 400 was swallowed")
    assert permits.said == [(0, protocol.FAILED, None, 0)]


class Faulty(BaseLlm):
    """Its first ``faults`` calls fail as a transport does (httpx's body cut short); with
    ``partial``, after one partial chunk of a stream (a stream cut mid-event), else before any."""

    faults: int = 1
    partial: bool = False
    calls: int = 0

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        import httpx

        self.calls += 1
        if self.calls <= self.faults:
            if self.partial:
                yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="fi")]), partial=True)
            raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="fine")]))


def test_a_model_fault_before_any_reply_is_asked_again_inside_the_turn() -> None:
    inner = Faulty(model="m", faults=2)
    permits = Recorded()
    answers = _ask(paced_model(inner, permits, "key"))
    assert [a.content.parts[0].text for a in answers if a.content and a.content.parts] == ["fine"]
    assert inner.calls == 3 and [outcome for _, outcome, _, _ in permits.said] == [protocol.FAILED, protocol.FAILED, protocol.OK]


def test_a_model_fault_that_persists_or_cuts_a_reply_is_marked_the_models() -> None:
    import httpx

    for inner in (Faulty(model="m", faults=99), Faulty(model="m", faults=1, partial=True)):
        with pytest.raises(httpx.RemoteProtocolError) as raised:
            _ask(paced_model(inner, Recorded(), "key"))
        assert origin_of(raised.value) == protocol.MODEL
        assert inner.calls == (MODEL_RETRIES + 1 if inner.faults == 99 else 1)  # a reply begun is not asked again


def test_a_request_the_api_refused_is_the_agents() -> None:
    class Refused(Scripted):
        async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
            self.calls += 1
            if self.calls:  # always: the generator raises before its first answer
                raise errors.ClientError(400, {"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": "bad schema"}})
            yield LlmResponse()

    inner = Refused(model="m")
    with pytest.raises(errors.ClientError) as raised:
        _ask(paced_model(inner, Recorded(), "key"))
    assert origin_of(raised.value) == protocol.AGENT and inner.calls == 1
    bad_key = errors.ClientError(400, {"error": {"code": 400, "details": [{"reason": "API_KEY_INVALID"}]}})
    assert model_call_origin(bad_key) == protocol.MODEL  # a bad key is not what the agent asked


def test_local_permits_wait_as_the_api_said() -> None:
    now = [0.0]
    permits = LocalPermits(clock=lambda: now[0])

    async def run() -> None:
        first = await permits.acquire("m", "k")
        permits.spent(first, protocol.THROTTLED, retry_delay=5.0)
        assert permits.hold[("m", "k")] == 5.0
        permits.spent(await permits.acquire("other", "k"), protocol.OK)  # another model is not held
        now[0] = 5.0
        permits.spent(await permits.acquire("m", "k"), protocol.THROTTLED)  # no delay named: a backoff
        assert permits.hold[("m", "k")] == 5.5

    asyncio.run(run())


def test_local_permits_grow_the_backoff_once_for_a_burst() -> None:
    now = [0.0]
    permits = LocalPermits(clock=lambda: now[0])

    async def run() -> None:
        burst = [await permits.acquire("m", "k") for _ in range(40)]
        now[0] = 1.0
        for permit in burst:  # forty calls sent together, refused together: one piece of news
            permits.spent(permit, protocol.THROTTLED)
        assert permits.hold[("m", "k")] == 1.5
        now[0] = 1.5
        again = await permits.acquire("m", "k")
        now[0] = 1.6
        permits.spent(again, protocol.THROTTLED)  # sent after the backoff began and refused: doubled
        assert permits.hold[("m", "k")] == pytest.approx(2.6)

    asyncio.run(run())
