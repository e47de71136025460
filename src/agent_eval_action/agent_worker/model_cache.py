"""The model-call cache: each model request is keyed (model name, contents, config, tools) and
answered from the recorded responses when the key is known, recorded otherwise.

It sits at the model itself (each agent's model is wrapped), not in a plugin's
``before_model_callback``: that runs before the agent's own model callbacks, and replaying there
would skip them, so a cached run would not do what a live one does. ADK's random function-call
ids are left out of the key, so a second run of the same conversation hits. A PR that changes
one tool's output changes the requests from where each conversation diverged: those, and only
those, go to the model again. Entries are versioned; a corrupt one is a miss, never a crash.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

VERSION = 1
REPLAYED = "agent_eval_cache"


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


def request_key(llm_request: Any, model: str) -> str:
    contents = [c.model_dump(mode="json", exclude_none=True) for c in llm_request.contents or []]
    config = llm_request.config.model_dump(mode="json", exclude_none=True) if llm_request.config is not None else {}
    config.pop("http_options", None)  # transport settings, not what is asked
    payload = {"version": VERSION, "model": model, "contents": contents, "config": config}
    text = json.dumps(_without_call_ids(payload), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class ResponseStore:
    """``DIR/v1/ab/<key>.json`` files, written atomically (several workers share a directory)."""

    def __init__(self, directory: str | os.PathLike[str]):
        self.root = Path(directory) / f"v{VERSION}"

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

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


def caching_model(inner: Any, store: ResponseStore) -> Any:
    """A BaseLlm that answers from ``store`` or asks ``inner`` and records what it said."""
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse

    class CachingLlm(BaseLlm):
        async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
            key = request_key(llm_request, inner.model)
            recorded = store.get(key)
            replay = None
            if recorded is not None:
                try:
                    replay = [LlmResponse.model_validate(r) for r in recorded]
                except ValueError:
                    replay = None
            if replay is not None:
                for response in replay:
                    response.custom_metadata = {**(response.custom_metadata or {}), REPLAYED: "replayed"}
                    yield response
                return
            seen: list[dict[str, Any]] = []
            async for response in inner.generate_content_async(llm_request, stream=stream):
                seen.append(_without_call_ids(response.model_dump(mode="json", exclude_none=True)))
                yield response
            if seen and not any(r.get("error_code") for r in seen):
                store.put(key, seen)

    return CachingLlm(model=inner.model)


def install(root_agent: Any, directory: str) -> None:
    """Wraps the model of every LLM agent in the tree (an agent without one inherits its parent's)."""
    store = ResponseStore(directory)
    stack = [root_agent]
    while stack:
        agent = stack.pop()
        if hasattr(agent, "canonical_model"):
            agent.model = caching_model(agent.canonical_model, store)
        stack.extend(getattr(agent, "sub_agents", None) or [])


def replayed_calls(events: list[dict[str, Any]]) -> int:
    return sum(1 for e in events if (e.get("custom_metadata") or {}).get(REPLAYED) == "replayed")
