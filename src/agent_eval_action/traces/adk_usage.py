"""Each invocation (turn) of a session as ADK's efficiency reports read it.

ADK's eval turns a session's events into invocations (``EvaluationGenerator.
convert_events_to_eval_invocations``) and keeps, of each, the agents' events with a function call
or response, text, inline data or grounding metadata. Its reports count on those alone
(``_efficiency_evaluators``): the function calls, the model calls (an event with usage metadata
or a model version) and the tokens, summed as ``telemetry._token_usage.TokenUsage`` sums them.
An event a model call wrote without any of those (an empty answer) is in no report.
"""

from __future__ import annotations

from typing import Any

from agent_eval_action.models.questions import AdkTurnUsage
from agent_eval_action.text.jsonish import get, opt_str


def turn_usage(events: list[Any]) -> dict[str, AdkTurnUsage]:
    """The usage ADK's reports read of each invocation, by invocation id, in the events' order."""
    out: dict[str, AdkTurnUsage] = {}
    for event in events:
        if not isinstance(event, dict):
            continue
        invocation = opt_str(get(event, "invocation_id")) or ""
        usage = out.setdefault(invocation, AdkTurnUsage())
        if (opt_str(get(event, "author")) or "").lower() == "user" or not _kept(event):
            continue
        parts = _parts(event)
        usage.tool_calls += sum(1 for part in parts if get(part, "function_call") is not None)
        metadata = get(event, "usage_metadata")
        if metadata is None and get(event, "model_version") is None:
            continue
        usage.model_calls = (usage.model_calls or 0) + 1
        if isinstance(metadata, dict):
            usage.input_tokens = _plus(usage.input_tokens, _sum(metadata, "prompt_token_count", "tool_use_prompt_token_count"))
            usage.output_tokens = _plus(usage.output_tokens, _sum(metadata, "candidates_token_count", "thoughts_token_count"))
    return out


def _parts(event: dict[str, Any]) -> list[dict[str, Any]]:
    parts = get(get(event, "content"), "parts")
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def _kept(event: dict[str, Any]) -> bool:
    """Whether ADK's eval keeps the event among the invocation's events."""
    grounded = get(event, "grounding_metadata") is not None
    parts = _parts(event)
    if not parts:
        return grounded
    return grounded or any(
        get(p, "function_call") is not None or get(p, "function_response") is not None or p.get("text") or get(p, "inline_data") is not None
        for p in parts
    )


def _sum(metadata: dict[str, Any], *keys: str) -> int | None:
    """``TokenUsage``'s input or output of one call: the counts summed, None when neither was reported."""
    counts = [get(metadata, key) for key in keys]
    known = [int(c) for c in counts if isinstance(c, int | float) and not isinstance(c, bool)]
    return sum(known) if known else None


def _plus(total: int | None, count: int | None) -> int | None:
    if count is None:
        return total
    return (total or 0) + count
