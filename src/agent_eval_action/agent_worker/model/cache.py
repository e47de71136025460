"""The model-call cache: each model request is keyed (the model: its name, class, its classes'
source and its whole configuration; the request: contents, config, tools) and answered from the
recorded responses when the key is known, recorded otherwise. A PR that changes the model
object (an endpoint, a LiteLlm keyword, a BaseLlm subclass's logic) never replays the old
model's answers; a byte-identical request to an unchanged model does replay (a tool's changed
answer changes every request after it).

It sits at the model itself (``calls.py`` sends every model call of a question through
it, whoever holds the model: an ``AgentTool``'s runner, a callback), not in a plugin's
``before_model_callback``: that runs before the agent's own model callbacks, and replaying there
would skip them, so a cached run would not do what a live one does. ADK's random function-call
ids are left out of the key, so a second run of the same conversation hits. A PR that changes
one tool's output changes the requests from where each conversation diverged: those, and only
those, go to the model again. Entries are versioned; a corrupt one is a miss, never a crash.

A response is stored as soon as it is complete, before the agent sees it: ADK stops reading the
model's stream once it has what it acts on (a ``transfer_to_agent`` call: the sub-agent runs and
the root's stream is closed), so nothing after the last response the agent read ever runs. A
complete response is one that is not a partial streaming chunk: a non-streaming call's first
response, a stream's final (aggregated) chunk; a stream closed after partial chunks only stores
nothing. Identical requests in flight at once (every question opening with the same greeting)
make one model call: the others, in this process or in another worker sharing the directory,
wait for it and replay what it stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any, ClassVar

if sys.platform != "win32":
    import fcntl

VERSION = 2
REPLAYED = "agent_eval_cache"
# Settings of a model that say who may call it, not what it answers: left out of the key (a
# rotated key replays; it is never part of a file name's preimage either).
_CREDENTIALS = ("key", "token", "secret", "password", "credential", "auth")


def _without_call_ids(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: (
                _without_call_ids({i: j for i, j in v.items() if i != "id"})
                if k in ("function_call", "function_response") and isinstance(v, dict)
                else _without_call_ids(v)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_without_call_ids(v) for v in value]
    return value


def _settings(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _settings(v) for k, v in value.items() if not any(c in str(k).lower() for c in _CREDENTIALS)}
    if isinstance(value, list | tuple):
        return [_settings(v) for v in value]
    return value if isinstance(value, str | int | float | bool) or value is None else repr(value)


def model_identity(model: Any) -> dict[str, Any]:
    """What makes a model object answer as it does, beside the request: its class, the source
    of every class of it that is not ADK's or pydantic's (a scripted BaseLlm's logic), and its
    whole configuration (its fields, and private settings such as LiteLlm's keyword arguments:
    an endpoint, a temperature), credentials left out. A wrapper of ours (``pacing.py``'s) is
    seen through: the model it wraps is the one that answers."""
    import inspect

    while callable(getattr(model, "agent_eval_wrapped", None)):
        model = model.agent_eval_wrapped()
    cls = type(model)
    sources = []
    for klass in cls.__mro__:
        if klass.__module__.split(".")[0] in ("google", "pydantic", "builtins", "abc", "typing"):
            continue
        try:
            sources.append(hashlib.sha256(inspect.getsource(klass).encode()).hexdigest())
        except (OSError, TypeError):
            sources.append(f"{klass.__module__}.{klass.__qualname__}")
    try:
        fields = model.model_dump(mode="json", exclude_none=True)
    except Exception:  # noqa: BLE001 - a field pydantic cannot dump: its text stands for it
        fields = {"repr": repr(model)}
    private = getattr(model, "__pydantic_private__", None) or {}
    return {
        "class": f"{cls.__module__}.{cls.__qualname__}",
        "sources": sources,
        "fields": _settings(fields),
        "private": _settings(dict(private)),
    }


def request_key(llm_request: Any, model: str, identity: dict[str, Any] | None = None) -> str:
    contents = [c.model_dump(mode="json", exclude_none=True) for c in llm_request.contents or []]
    config = llm_request.config.model_dump(mode="json", exclude_none=True) if llm_request.config is not None else {}
    config.pop("http_options", None)  # transport settings, not what is asked
    payload = {"version": VERSION, "model": model, "identity": identity or {}, "contents": contents, "config": config}
    text = json.dumps(_without_call_ids(payload), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class ResponseStore:
    """``DIR/v1/ab/<key>.json`` files, written atomically (several workers share a directory)."""

    def __init__(self, directory: str | os.PathLike[str]):
        self.root = Path(directory) / f"v{VERSION}"

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def lock_path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.lock"

    def get(self, key: str) -> list[dict[str, Any]] | None:
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
            if data.get("version") != VERSION or data.get("key") != key or not isinstance(data.get("responses"), list):
                return None
            return [r for r in data["responses"] if isinstance(r, dict)] or None
        except (OSError, ValueError, AttributeError):
            return None

    def put(self, key: str, responses: list[dict[str, Any]]) -> None:
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump({"version": VERSION, "key": key, "responses": responses}, out, ensure_ascii=False)
            os.replace(tmp, path)
        except OSError:
            pass  # a cache that cannot write is a cache that misses


class Claim:
    """The right to ask the model one request: held while its response is being made, released
    as soon as the response is stored (or will not be)."""

    def __init__(self, release: Callable[[], None]):
        self._release: Callable[[], None] | None = release

    def release(self) -> None:
        if self._release is not None:
            release, self._release = self._release, None
            release()


class InFlight:
    """One model call at a time per request key: tasks of this process wait on an asyncio lock,
    worker processes on an ``flock`` of ``<key>.lock`` beside the entry (released by the OS if a
    worker dies)."""

    POLL_S = (0.005, 0.1)  # the first and the longest wait between tries of another process's lock

    def __init__(self, store: ResponseStore):
        self.store = store
        self.locks: dict[tuple[int, str], tuple[asyncio.Lock, list[int]]] = {}

    async def claim(self, key: str) -> Claim:
        slot = (id(asyncio.get_running_loop()), key)
        lock, users = self.locks.setdefault(slot, (asyncio.Lock(), [0]))
        users[0] += 1

        def leave() -> None:
            users[0] -= 1
            if not users[0]:
                self.locks.pop(slot, None)

        try:
            await lock.acquire()
        except BaseException:
            leave()
            raise
        try:
            handle = await self._lock_file(self.store.lock_path(key))
        except BaseException:
            lock.release()
            leave()
            raise

        def release() -> None:
            if handle is not None:
                with contextlib.suppress(OSError):
                    fcntl.flock(handle, fcntl.LOCK_UN)
                os.close(handle)
            lock.release()
            leave()

        return Claim(release)

    async def _lock_file(self, path: Path) -> int | None:
        if sys.platform == "win32":
            return None  # no flock: identical requests are de-duplicated within a worker process only
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            return None  # a directory we cannot write: no entry will be stored either
        delay, longest = self.POLL_S
        try:
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return handle
                except BlockingIOError:
                    await asyncio.sleep(delay)  # another worker asks the model this request now
                    delay = min(delay * 2, longest)
        except OSError:
            os.close(handle)
            return None  # a file system without locks: de-duplicated within this process only
        except BaseException:
            os.close(handle)
            raise


def caching_model(inner: Any, store: ResponseStore, in_flight: InFlight | None = None) -> Any:
    """A BaseLlm that answers from ``store`` or asks ``inner`` and records what it said."""
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse

    flights = in_flight or InFlight(store)
    identity = model_identity(inner)

    def replayable(key: str) -> list[Any] | None:
        recorded = store.get(key)
        if recorded is None:
            return None
        try:
            return [LlmResponse.model_validate(r) for r in recorded]
        except ValueError:
            return None

    class CachingLlm(BaseLlm):
        agent_eval_wrapper: ClassVar[bool] = True  # model_calls' door leaves its method as it is

        async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
            key = request_key(llm_request, inner.model, identity)
            replay = replayable(key)
            if replay is None:
                claim = await flights.claim(key)
                try:
                    replay = replayable(key)  # answered while this one waited
                    if replay is None:
                        seen: list[dict[str, Any]] = []
                        failed = False
                        async with contextlib.aclosing(inner.generate_content_async(llm_request, stream=stream)) as responses:
                            async for response in responses:
                                seen.append(_without_call_ids(response.model_dump(mode="json", exclude_none=True)))
                                failed = failed or bool(response.error_code)
                                if not response.partial:
                                    # Complete: stored before the agent sees it, as the agent may stop reading here.
                                    if not failed:
                                        store.put(key, seen)
                                    claim.release()
                                yield response
                        return
                finally:
                    claim.release()
            for response in replay:
                response.custom_metadata = {**(response.custom_metadata or {}), REPLAYED: "replayed"}
                yield response

    return CachingLlm(model=inner.model)
