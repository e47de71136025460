"""One door for every model call the agent makes while a question runs: the model-call cache
(``cache.py``), then the pacing (``pacing.py``), then the model, and the count of the calls
that went through to the model (``live``) and of those the cache answered (``replayed``).

The door is the model's class, not the agent tree. Wrapping each agent's ``model`` missed every
model the tree does not list: an ``AgentTool`` runs its agent in a ``Runner`` of its own (the
agent is a tool's field, not a sub-agent), a tool or a callback may build an agent or a
``BaseLlm`` of its own and call it. So ``generate_content_async`` of every ``BaseLlm`` class is
replaced by one that sends the call through the question's route (:func:`routing`), whoever
holds the model and however the runners nest. A question's route is a context variable: asyncio
copies it into every task and ``to_thread`` call the question starts (an ``AgentTool``'s runner
too), and a call made outside any question (a thread of the agent's own, our process after an
``--in-process`` run) goes straight to the model, as if nothing were installed.

A call is counted live where the worker hands it to the model (each try of a call the API
throttled and the pacing asked again too), so the count is what reached the endpoint; a call
the model's own class makes on the same request (``super().generate_content_async``, a fallback
model's delegate) is part of the call that made it, never a call of its own.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from collections.abc import AsyncGenerator, Iterator
from typing import Any

from .cache import REPLAYED, InFlight, ResponseStore, caching_model
from .pacing import Permits, key_id, paced_model

METHOD = "generate_content_async"
_ORIGINAL = "agent_eval_original"  # on a replaced method: the class's own
_WRAPPER = "agent_eval_wrapper"  # on a class of ours (the cache's, the pacing's): its method is left as it is
_HOOKED = "agent_eval_door_hooked"  # on BaseLlm: each subclass defined later gets the door as it is defined
# Requests being answered by the model's own method now: a call on one of them is that call's.
_serving: set[int] = set()


@dataclasses.dataclass
class Tally:
    """A question's model calls: handed to the model, answered from the cache."""

    live: int = 0
    replayed: int = 0


class Route:
    """How a question's model calls go: through the cache when there is one, paced, counted."""

    def __init__(self, permits: Permits, *, cache: str | None = None, key: str = ""):
        self.permits = permits
        self.key = key
        self.store = ResponseStore(cache) if cache else None
        self.in_flight = InFlight(self.store) if self.store is not None else None
        self._models: dict[int, tuple[Any, Any]] = {}  # id(model) -> (model, its wrapped self)

    def model(self, model: Any) -> Any:
        """``model`` behind the cache and the pacing (made once per model object)."""
        found = self._models.get(id(model))
        if found is None or found[0] is not model:
            wrapped = paced_model(_Direct(model), self.permits, self.key)
            if self.store is not None:
                wrapped = caching_model(wrapped, self.store, self.in_flight)
            found = self._models[id(model)] = (model, wrapped)
        return found[1]


_question: contextvars.ContextVar[tuple[Route, Tally] | None] = contextvars.ContextVar("agent_eval_model_calls", default=None)


@contextlib.contextmanager
def routing(route: Route) -> Iterator[Tally]:
    """The model calls made in this context (and every task it starts) go through ``route``;
    the tally counts them. Installs the door first (:func:`install`)."""
    install()
    tally = Tally()
    token = _question.set((route, tally))
    try:
        yield tally
    finally:
        _question.reset(token)


class _Direct:
    """The model itself, by its own method (not the door's): what the pacing hands the call to."""

    def __init__(self, model: Any):
        self.inner = model
        self.model = model.model

    def agent_eval_wrapped(self) -> Any:
        """The model that answers (the cache keys on it: ``model_cache.model_identity``)."""
        return self.inner

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> AsyncGenerator[Any, None]:
        found = _question.get()
        if found is not None:
            found[1].live += 1
        _serving.add(id(llm_request))
        try:
            async with contextlib.aclosing(_original(type(self.inner))(self.inner, llm_request, stream=stream)) as responses:
                async for response in responses:
                    yield response
        finally:
            _serving.discard(id(llm_request))


def _original(cls: type) -> Any:
    """The class's own ``generate_content_async``, as it was before the door replaced it."""
    for klass in cls.__mro__:
        method = klass.__dict__.get(METHOD)
        if method is not None:
            return getattr(method, _ORIGINAL, method)
    raise AttributeError(METHOD)


def _door(original: Any) -> Any:
    async def generate_content_async(self: Any, llm_request: Any, stream: bool = False) -> AsyncGenerator[Any, None]:
        found = _question.get()
        if found is None or id(llm_request) in _serving:
            calls = original(self, llm_request, stream=stream)
            async with contextlib.aclosing(calls) as responses:
                async for response in responses:
                    yield response
            return
        route, tally = found
        replayed = False
        async with contextlib.aclosing(route.model(self).generate_content_async(llm_request, stream=stream)) as responses:
            async for response in responses:
                if not replayed and (response.custom_metadata or {}).get(REPLAYED) == "replayed":
                    replayed = True
                    tally.replayed += 1
                yield response

    setattr(generate_content_async, _ORIGINAL, original)
    generate_content_async.__doc__ = original.__doc__
    return generate_content_async


def install() -> None:
    """Replaces ``generate_content_async`` in every ``BaseLlm`` class that has its own (ours
    excepted): those defined now, and each defined later as it is defined (a model class imported
    while the first questions run, as ``Gemini`` is when an agent names its model by a string and
    nothing imported it before: those questions' calls went uncounted). Idempotent."""
    from google.adk.models.base_llm import BaseLlm

    if not getattr(BaseLlm, _HOOKED, False):
        inherited = BaseLlm.__pydantic_init_subclass__

        def init_subclass(cls: type, /, **kwargs: Any) -> None:
            inherited.__func__(cls, **kwargs)  # type: ignore[attr-defined]
            _door_on(cls)

        setattr(BaseLlm, "__pydantic_init_subclass__", classmethod(init_subclass))  # noqa: B010 - a classmethod in place of pydantic's
        setattr(BaseLlm, _HOOKED, True)
    stack: list[type] = [BaseLlm]
    seen: set[type] = set()
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.add(cls)
        stack.extend(cls.__subclasses__())
        if cls is not BaseLlm:
            _door_on(cls)


def _door_on(cls: type) -> None:
    """The door in place of ``cls``'s own ``generate_content_async`` (a subclass of ``BaseLlm``;
    not a class of ours, not twice)."""
    method = cls.__dict__.get(METHOD)
    if method is None or getattr(cls, _WRAPPER, False) or hasattr(method, _ORIGINAL):
        return
    setattr(cls, METHOD, _door(method))


def route_for(permits: Permits, cache: str | None, env: Any = None) -> Route:
    """The worker's route: its permits, its cache, the API key's quota (``pacing.key_id``)."""
    import os

    return Route(permits, cache=cache, key=key_id(os.environ if env is None else env))
