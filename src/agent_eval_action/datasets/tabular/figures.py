"""What a run table's producer measured: latency_data (a tree, or the seed pipeline's list of
``invocation`` spans), ``metric.*`` and ``score.*`` / ``adk_score.*`` figures, turn_scores."""

from __future__ import annotations

import math
from typing import Any

from agent_eval_action.datasets.tabular.cells import SCORE_PREFIXES, Cells, as_list, as_number, shown
from agent_eval_action.models.questions import Question, Turn
from agent_eval_action.models.traces import Trace
from agent_eval_action.text.jsonish import NOT_FINITE


def _latency_tree(value: Any) -> float | None:
    if isinstance(value, dict):
        for key in ("duration_seconds", "total_duration_seconds", "duration_sec"):
            if isinstance(value.get(key), int | float):
                return as_number(value[key])
        children = value.get("children") or value.get("spans")
        return _latency_tree(children) if children else None
    if isinstance(value, list):
        parts = [_latency_tree(item) for item in value]
        known = [p for p in parts if p is not None]
        return sum(known) if known else None
    return None


def timing(row: Cells, trace: Trace, question: Question, spans: Any, events: Any) -> None:
    turn_responses = events.turn_responses if events is not None else []
    turn_parts = events.turn_response_parts if events is not None else []
    turn_usage = events.turn_usage if events is not None else []
    turn_said = events.turn_intermediate if events is not None else []
    durations = spans.turn_durations if spans is not None else []
    starts = spans.turn_starts if spans is not None else []
    count = max(len(question.user_inputs), len(durations), len(turn_responses))
    trace.turns = [
        Turn(
            user_input=question.user_inputs[i] if i < len(question.user_inputs) else None,
            response=turn_responses[i] if i < len(turn_responses) else None,
            response_parts=turn_parts[i] if i < len(turn_parts) else None,
            adk_usage=turn_usage[i] if i < len(turn_usage) else None,
            intermediate=turn_said[i] if i < len(turn_said) else None,
            duration_s=durations[i] if i < len(durations) else None,
            start_time=starts[i] if i < len(starts) else None,
        )
        for i in range(count)
    ]
    if spans is not None and spans.timing_note is not None:
        trace.missing["timing"] = spans.timing_note
    if spans is not None and spans.latency_s is not None:
        trace.latency_s, trace.latency_source = spans.latency_s, "session_trace spans"
        return
    latency = row.cell("latency_data")
    invocations = _invocations(latency)
    tree = sum(invocations) if invocations else _latency_tree(latency)
    if tree is not None and not math.isfinite(tree):
        if math.isinf(tree):
            raise row.error("latency_data", NOT_FINITE.format(value="its duration (" + str(tree) + ")"))
        tree = None  # NaN: not measured
    if tree is not None:
        trace.latency_s, trace.latency_source = tree, "latency_data"
        children = latency.get("children") if isinstance(latency, dict) else None
        turns = [c.get("duration_seconds") for c in children or [] if isinstance(c, dict) and str(c.get("name", "")).startswith("turn ")]
        seconds = [s for s in map(as_number, turns) if s is not None and math.isfinite(s)]
        if seconds and len(seconds) == len(turns) == len(trace.turns):
            trace.turns = [turn.model_copy(update={"duration_s": s}) for turn, s in zip(trace.turns, seconds, strict=True)]
        elif invocations:
            # The seed pipeline's latency_data: a list of the trace's top spans, one ``invocation``
            # (ADK's span of one run, one user turn) each; their durations are the turns'.
            trace.turns += [Turn() for _ in range(len(invocations) - len(trace.turns))]
            trace.turns = [
                turn.model_copy(update={"duration_s": invocations[i]}) if i < len(invocations) else turn
                for i, turn in enumerate(trace.turns)
            ]


def _invocations(value: Any) -> list[float]:
    """The durations of the ``invocation`` entries at the top of a list-shaped latency_data (the
    seed pipeline's ``get_latency_from_spans``), as its ``calculate_latency_metrics`` reads them."""
    if not isinstance(value, list):
        return []
    seconds = [as_number(item.get("duration_seconds")) for item in value if isinstance(item, dict) and item.get("name") == "invocation"]
    return [s for s in seconds if s is not None and math.isfinite(s)]


def recorded(row: Cells) -> dict[str, float]:
    """The producer's ``metric.*`` and ``score.*`` figures (the seed pipeline's ``adk_score.NAME``
    kept as ``score.NAME``).

    Numbers (or number text) are kept as numbers; a list in a ``metric.*`` count column counts
    its items (``metric.unique_tools: ["a", "b"]`` is 2). Anything else is left out with one
    warning per column and file: no metric needs these columns, so they never fail a row.
    """
    out: dict[str, float] = {}
    for column, value in row.row.items():
        if value in (None, "") or not (column[:6] in ("metric", "score.", "adk_sc") and column.startswith(("metric.", *SCORE_PREFIXES))):
            continue
        number = as_number(value)
        if number is not None and math.isinf(number):
            raise row.error(column, NOT_FINITE.format(value=value if isinstance(value, str) else shown(value)))
        if number is None:
            from agent_eval_action.metrics.registry import recorded_unit  # only for a cell that is no number

            # A list counts its items, except in a column of times (the registry says which it reads so).
            counted = column.startswith("metric.") and recorded_unit(column.removeprefix("metric.")) != "seconds"
            # One message per column, whatever mix of cells it holds.
            row.warn(
                f"{row.path}: column {column!r} holds values that are not numbers: "
                + ("a list counts as its number of items, other values are left out" if counted else "they are left out")
            )
            items = as_list(value) if counted else None
            if items is None:
                continue
            number = float(len(items))
        if number == number:  # NaN: not measured, so not scored
            out[column.removeprefix("metric.").removeprefix("adk_")] = number
    return out


def turn_scores(row: Cells) -> dict[str, list[float | None]]:
    """The ``turn_scores`` column: ``{metric: [score or null per invocation]}``, as convert writes an
    ADK eval history's per-invocation scores. Only ``adk_agreement`` reads it, so a cell of another
    shape is left out with one warning, never failing the row."""
    value = row.cell("turn_scores")
    if value is None:
        return {}
    out: dict[str, list[float | None]] = {}
    if isinstance(value, dict):
        for name, scores in value.items():
            numbers = [None if s is None else as_number(s) for s in scores] if isinstance(scores, list) else None
            if numbers is None or any(n is None and s is not None for n, s in zip(numbers, scores, strict=True)):
                break
            if any(n is not None and not math.isfinite(n) for n in numbers):
                break
            out[name] = numbers
        else:
            return {name: scores for name, scores in out.items() if any(s is not None for s in scores)}
    row.warn(f"{row.path}: column 'turn_scores' holds values that are not {{metric: [score or null, ...]}}: they are left out")
    return {}
