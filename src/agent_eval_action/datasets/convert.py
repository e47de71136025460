"""Conversions that keep users' files: datasets to golden JSON, runs to the simulation CSV / JSONL.

Covers the seed pipeline's ``convert_test_to_golden.py`` (ADK ``.test.json`` and eval sets
to golden) and ``convert_adk_history_to_dataset.py`` (ADK eval history to a run table).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agent_eval_action.datasets import Record
from agent_eval_action.datasets.tabular import CONVERT_SPAN
from agent_eval_action.metrics.calls import tool_calls
from agent_eval_action.models.questions import Question
from agent_eval_action.models.traces import Trace
from agent_eval_action.system.files import atomic_file, write_atomic

ROW_COLUMNS = [
    "eval_id", "question_id", "session_id", "agent_name", "agents_evaluated", "user_inputs", "final_response",
    "sub_agent_trace", "trace_summary", "extracted_data", "final_session_state", "session_trace", "latency_data",
    "reference_data", "question_metadata", "status", "error", "metric.duration_sec", "metric.total_tokens",
    "metric.turn_count", "metric.tool_calls", "metric.tool_errors", "metric.unique_tools", "turn_scores",
]  # fmt: skip


def golden_question(question: Question, agent_name: str | None = None) -> dict[str, Any]:
    ref = question.reference_data
    reference: dict[str, Any] = {}
    if ref.reference_tool_interactions is not None:
        reference["reference_tool_interactions"] = [call.model_dump() for call in ref.reference_tool_interactions]
    if ref.reference_trajectory is not None:
        reference["reference_trajectory"] = ref.reference_trajectory
    if ref.reference_state_variables is not None:
        reference["reference_state_variables"] = ref.reference_state_variables
    if ref.reference_response is not None:
        reference["reference_response"] = ref.reference_response
    reference.update(ref.custom)
    metadata = dict(question.metadata)
    if question.initial_state:
        metadata["initial_state"] = question.initial_state
    if ref.turn_references and any(ref.turn_references[:-1]):
        metadata["turn_references"] = ref.turn_references
    if question.conversation_scenario is not None:
        # Kept so nothing is lost; a golden file replays its user_inputs, the scenario needs the eval set.
        metadata["conversation_scenario"] = question.conversation_scenario
    agents = [agent_name] if agent_name else question.agents_evaluated
    return {
        "id": question.id,
        "user_inputs": question.user_inputs,
        "agents_evaluated": agents,
        "metadata": metadata,
        "reference_data": reference,
    }


def write_golden(questions: Iterable[Question], path: Path, agent_name: str | None = None) -> int:
    items = [golden_question(q, agent_name) for q in questions]
    write_atomic(path, json.dumps({"golden_questions": items}, indent=2, ensure_ascii=False) + "\n")
    return len(items)


def _usage_spans(trace: Trace) -> list[dict[str, Any]]:
    """A run without recorded spans keeps its token usage as untimed ``generate_content`` spans
    (a call whose usage was not recorded gets no usage attributes: unknown stays unknown). The
    whole usage (tool-use prompt tokens too) and the grounding chunks ride in the response, as
    ADK's legacy spans carry them, since OpenTelemetry's attributes have no key for either."""
    spans = []
    for i, call in enumerate(trace.llm_calls or []):
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "generate_content",
            "gen_ai.request.model": call.model,
            "gen_ai.agent.name": call.agent,
            CONVERT_SPAN: True,
        }
        response: dict[str, Any] = {}
        if call.usage_recorded:
            attributes |= {
                "gen_ai.usage.input_tokens": call.input_tokens,
                "gen_ai.usage.output_tokens": call.output_tokens,
                "gen_ai.usage.cache_read.input_tokens": call.cached_tokens,
                "gen_ai.usage.reasoning.output_tokens": call.thoughts_tokens,
            }
            response["usage_metadata"] = {
                "prompt_token_count": call.input_tokens, "candidates_token_count": call.output_tokens,
                "cached_content_token_count": call.cached_tokens, "thoughts_token_count": call.thoughts_tokens,
                "tool_use_prompt_token_count": call.tool_use_prompt_tokens,
            }  # fmt: skip
        if call.grounding_chunks:
            response["grounding_metadata"] = {"grounding_chunks": [{} for _ in range(call.grounding_chunks)]}
        if response:
            attributes["gcp.vertex.agent.llm_response"] = json.dumps(response)
        spans.append({"name": f"generate_content {call.model or ''}".strip(), "span_id": f"{i + 1:016x}", "attributes": attributes})
    return spans


def run_row(record: Record) -> dict[str, Any]:
    """One run as a row of the simulation table (values as Python objects; CSV cells get JSON text)."""
    question, trace = record.question, record.trace or Trace(error="not run")
    calls = trace.tool_interactions or []
    # The counts as every metric counts them: transfer_to_agent only where the reference names it.
    counted = tool_calls(question, trace)
    steps = [f"{step.kind}:{step.name}" for step in trace.trajectory or []]
    usage_known = bool(trace.llm_calls) and all(c.usage_recorded for c in trace.llm_calls or ())
    total_tokens = sum(c.total_tokens for c in trace.llm_calls or ()) if usage_known else None
    row: dict[str, Any] = {
        "eval_id": question.id,
        "question_id": question.id,
        "session_id": f"{question.id}#run{record.run}",  # stable, unlike the session's random id
        "agent_name": trace.app_name or next(iter(question.agents_evaluated), ""),
        "agents_evaluated": question.agents_evaluated,
        "user_inputs": question.user_inputs,
        "final_response": trace.final_response,
        "sub_agent_trace": [{"name": s.agent_name, "text": s.text_response} for s in trace.sub_agent_trace],
        "trace_summary": steps if trace.trajectory is not None else None,
        "extracted_data": {
            "state_variables": trace.final_state,
            "tool_interactions": [c.model_dump(exclude_none=True) for c in calls] if trace.tool_interactions is not None else None,
        },
        "final_session_state": trace.final_state,
        "session_trace": [span.model_dump() for span in trace.spans] or _usage_spans(trace) or None,
        "latency_data": {
            "name": "session",
            "duration_seconds": trace.latency_s,
            "children": [{"name": f"turn {i + 1}", "duration_seconds": t.duration_s} for i, t in enumerate(trace.turns)],
        }
        if trace.latency_s is not None
        else None,
        "reference_data": golden_question(question)["reference_data"],
        "question_metadata": question.metadata,
        "status": "error" if trace.error else "skipped" if trace.skipped else "success",
        "error": trace.error or trace.skipped,
        "metric.duration_sec": trace.latency_s,
        "metric.total_tokens": total_tokens,
        "metric.turn_count": len(question.user_inputs),
        "metric.tool_calls": len(counted) if counted is not None else None,
        "metric.tool_errors": sum(1 for c in counted if c.error) if counted is not None else None,
        "metric.unique_tools": len({c.tool_name for c in counted}) if counted is not None else None,
    }
    row.update(recorded_columns(trace))
    if trace.recorded_turn_scores:
        row["turn_scores"] = trace.recorded_turn_scores
    return row


def recorded_columns(trace: Trace) -> dict[str, float]:
    """The figures another tool recorded, as the columns they are read back from: ``score.NAME``
    (ours, ADK's eval history, the seed pipeline's ``adk_score.NAME``) and ``metric.NAME``. A
    recorded ``metric.*`` figure stands over the one computed here: it is what the producer said."""
    return {name if name.startswith("score.") else f"metric.{name}": value for name, value in sorted(trace.recorded_metrics.items())}


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def write_runs(records: Iterable[Record], path: Path, fmt: str) -> int:
    """Writes the runs as the simulation CSV or JSONL; returns how many. Every recorded score and
    figure is kept (``recorded_columns``): reading the file back gives the same recorded values."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [run_row(record) for record in records]
    with atomic_file(path, newline="") as handle:
        if fmt == "csv":
            # The header names every recorded column of any row (their names vary with the producer).
            extra = sorted({key for row in rows for key in row} - set(ROW_COLUMNS))
            writer = csv.DictWriter(handle, fieldnames=ROW_COLUMNS + extra)
            writer.writeheader()
            writer.writerows({key: _cell(value) for key, value in row.items()} for row in rows)
        else:
            handle.writelines(json.dumps({k: v for k, v in row.items() if v is not None}, ensure_ascii=False) + "\n" for row in rows)
    return len(rows)
