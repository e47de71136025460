"""When the model-call cache stores a response: as soon as it is complete, whether or not the caller
reads on (ADK stops reading at a transfer), never a partial stream, never an error. A real
``BaseLlm`` scripted to stream, read the way ADK's flow reads it (and closes it)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from agent_eval_action.agent_worker.model.cache import REPLAYED, InFlight, ResponseStore, caching_model, model_identity, request_key


class Scripted(BaseLlm):
    """Says ``chunks`` (text, partial) in turn; counts its calls; ``gate`` holds the first response back."""

    model: str = "scripted-stream"
    chunks: list[tuple[str, bool]] = [("Hello", False)]  # noqa: RUF012 - a pydantic field, copied per model
    error: bool = False
    calls: list[int] = []  # noqa: RUF012 - a pydantic field, copied per model
    gate: Any = None

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        self.calls.append(1)
        if self.gate is not None:
            await self.gate.wait()
        if self.error:
            yield LlmResponse(error_code="RESOURCE_EXHAUSTED", error_message="quota")
            return
        for text, partial in self.chunks:
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]), partial=partial or None)


def request(text: str = "hello") -> LlmRequest:
    return LlmRequest(model="scripted-stream", contents=[types.Content(role="user", parts=[types.Part(text=text)])])


async def read(model: Any, *, stream: bool, first: int | None = None) -> list[LlmResponse]:
    """Reads the model's responses as ADK's flow does, closing the stream after ``first`` of them."""
    out: list[LlmResponse] = []
    async with contextlib.aclosing(model.generate_content_async(request(), stream=stream)) as responses:
        async for response in responses:
            out.append(response)
            if first is not None and len(out) == first:
                break
    return out


def texts(responses: list[LlmResponse]) -> list[str]:
    return [r.content.parts[0].text or "" for r in responses if r.content and r.content.parts]


def replayed(responses: list[LlmResponse]) -> bool:
    return all((r.custom_metadata or {}).get(REPLAYED) == "replayed" for r in responses)


def test_a_response_is_stored_though_the_caller_stops_reading_at_it(tmp_path: Path) -> None:
    inner = Scripted(chunks=[("transfer", False), ("never read", False)], calls=[])
    model = caching_model(inner, ResponseStore(tmp_path))
    assert texts(asyncio.run(read(model, stream=False, first=1))) == ["transfer"]
    again = asyncio.run(read(model, stream=False))
    assert inner.calls == [1] and texts(again) == ["transfer"] and replayed(again)


def test_a_stream_is_stored_at_its_final_chunk_with_its_partial_ones(tmp_path: Path) -> None:
    inner = Scripted(chunks=[("Hel", True), ("lo", True), ("Hello", False)], calls=[])
    model = caching_model(inner, ResponseStore(tmp_path))
    asyncio.run(read(model, stream=True, first=3))  # closed right after the final chunk
    again = asyncio.run(read(model, stream=True))
    assert inner.calls == [1] and texts(again) == ["Hel", "lo", "Hello"] and replayed(again)
    assert [r.partial for r in again] == [True, True, None]


def test_a_stream_closed_before_its_final_chunk_is_not_stored(tmp_path: Path) -> None:
    inner = Scripted(chunks=[("Hel", True), ("lo", True), ("Hello", False)], calls=[])
    store = ResponseStore(tmp_path)
    model = caching_model(inner, store)
    asyncio.run(read(model, stream=True, first=2))
    assert store.get(request_key(request(), inner.model, model_identity(inner))) is None
    assert not list(tmp_path.rglob("*.json"))
    again = asyncio.run(read(model, stream=True))
    assert inner.calls == [1, 1] and texts(again) == ["Hel", "lo", "Hello"] and not replayed(again)


def test_an_error_is_not_stored(tmp_path: Path) -> None:
    inner = Scripted(error=True, calls=[])
    model = caching_model(inner, ResponseStore(tmp_path))
    asyncio.run(read(model, stream=False))
    asyncio.run(read(model, stream=False))
    assert inner.calls == [1, 1]


def test_identical_requests_in_flight_at_once_make_one_call_and_the_others_replay_it(tmp_path: Path) -> None:
    async def main() -> list[list[LlmResponse]]:
        gate = asyncio.Event()
        inner = Scripted(chunks=[("Hello", False)], calls=[], gate=gate)
        store = ResponseStore(tmp_path)
        flights = InFlight(store)
        models = [caching_model(inner, store, flights), caching_model(inner, store, flights)]  # two agents, one directory
        readers = [asyncio.ensure_future(read(models[i % 2], stream=False)) for i in range(8)]
        while not inner.calls:  # the first reached the model; the rest are waiting for it
            await asyncio.sleep(0)
        gate.set()
        done = await asyncio.gather(*readers)
        assert inner.calls == [1]
        assert not flights.locks  # nothing left behind once every request is answered
        return done

    done = asyncio.run(main())
    assert all(texts(responses) == ["Hello"] for responses in done)
    assert sum(replayed(responses) for responses in done) == 7


def test_the_cache_keys_on_the_model_the_pacing_wraps() -> None:
    """The worker paces every model, then the cache wraps the paced one: its key must still hold
    the answering model's class and configuration, or a changed model setting would be replayed."""
    from agent_eval_action.agent_worker.model.pacing import LocalPermits, paced_model

    plain = Scripted(model="scripted")
    paced = paced_model(plain, LocalPermits(), "key")
    assert model_identity(paced) == model_identity(plain)
    other = paced_model(Scripted(model="scripted", chunks=[("another", False)]), LocalPermits(), "key")
    assert model_identity(other) != model_identity(paced)
