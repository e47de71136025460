"""Capturing ADK's OpenTelemetry spans per question while many questions run at once.

Each turn runs under a span of ours, so ADK's spans share its trace id; a span processor
keeps only spans of trace ids being watched, and hands them over when the turn ends. Nothing
is exported anywhere. Spans leave as plain dicts (the worker sends them as JSON).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

TRACER_NAME = "agent_eval_action"


class SpanCapture:
    """A span processor (duck-typed to the SDK's interface) that buckets spans by trace id."""

    _installed: SpanCapture | None = None

    def __init__(self) -> None:
        from opentelemetry import trace

        self.buckets: dict[int, list[Any]] = {}
        self.tracer = trace.get_tracer(TRACER_NAME)

    # SpanProcessor interface
    def on_start(self, span: Any, parent_context: Any = None) -> None:
        return None

    def on_end(self, span: Any) -> None:
        bucket = self.buckets.get(span.context.trace_id)
        if bucket is not None:
            bucket.append(span)

    def _on_ending(self, span: Any) -> None:
        return None

    def shutdown(self) -> None:
        self.buckets.clear()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    @classmethod
    def install(cls) -> SpanCapture | None:
        """Adds a processor to the global SDK tracer provider, setting one if none is set yet.

        Once per process: in the worker, a process of its own. Returns None when the process already has a
        provider we cannot extend (the agent set its own non-SDK one).
        """
        if cls._installed is not None:
            return cls._installed
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider

        provider = trace.get_tracer_provider()
        if not isinstance(provider, TracerProvider):
            trace.set_tracer_provider(TracerProvider())
            provider = trace.get_tracer_provider()
            if not isinstance(provider, TracerProvider):
                return None
        capture = cls()
        provider.add_span_processor(capture)  # type: ignore[arg-type]
        cls._installed = capture
        return capture

    @contextmanager
    def turn(self, question_id: str) -> Iterator[list[dict[str, Any]]]:
        """Runs one turn under a span of ours; the list it yields is filled with the turn's spans at exit."""
        collected: list[dict[str, Any]] = []
        with self.tracer.start_as_current_span("agent_eval.turn", attributes={"agent_eval.question_id": question_id}) as span:
            trace_id = span.get_span_context().trace_id
            self.buckets[trace_id] = []
            try:
                yield collected
            finally:
                # Filled on an error too: the spans of what the turn did before it are the run's.
                collected.extend(span_dict(s) for s in self.buckets.pop(trace_id, []))


def span_dict(span: Any) -> dict[str, Any]:
    parent = span.parent.span_id if span.parent is not None else None
    return {
        "name": span.name,
        "span_id": f"{span.context.span_id:016x}",
        "trace_id": f"{span.context.trace_id:032x}",
        "parent_span_id": f"{parent:016x}" if parent is not None else None,
        "start_time": span.start_time,
        "end_time": span.end_time,
        "attributes": {key: _plain(value) for key, value in dict(span.attributes or {}).items()},
    }


def _plain(value: Any) -> Any:
    """Span attribute values as JSON takes them (OpenTelemetry keeps sequences as tuples)."""
    return list(value) if isinstance(value, tuple) else value
