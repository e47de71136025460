"""The columns of a run table and typed access to one row's cells.

Cells may be JSON text (CSV) or native JSON (JSONL); any may be missing or empty.
"""

from __future__ import annotations

import json
import math
from typing import Any

from agent_eval_action.datasets.fields import Where
from agent_eval_action.system.errors import DatasetError
from agent_eval_action.text.jsonish import LONE_SURROGATES, TooDeep, loads, parse_cell

KNOWN_COLUMNS = {
    "eval_id", "question_id", "session_id", "agent_name", "timestamp", "user_id", "agents_evaluated",
    "final_response", "system_instructions", "sub_agent_trace", "trace_summary", "user_inputs",
    "extracted_data", "custom_extract", "session_state", "final_session_state", "session_trace",
    "latency_data", "reference_data", "question_metadata", "status", "error", "request", "response", "eval_set_result_id",
    # The scores ADK recorded for each invocation, by metric (convert writes them from an eval history).
    "turn_scores",
    # The seed pipeline's own columns (its interactions, processor and converters write them).
    "base_url", "app_name", "ADK_USER_ID", "USER", "run_id", "interaction_datetime", "missing_information",
}  # fmt: skip
# Columns whose content no deterministic metric reads: not parsed at all (they are the bulk of a row).
UNPARSED = {
    "system_instructions", "custom_extract", "request", "response", "timestamp", "user_id", "eval_set_result_id",
    "ADK_USER_ID", "USER", "run_id", "interaction_datetime", "missing_information",
}  # fmt: skip
# Scores another tool recorded, kept as ``score.NAME``: ours (and ADK's eval history) write
# ``score.NAME``, the seed pipeline ``adk_score.NAME`` (the scores ADK recorded for the run).
SCORE_PREFIXES = ("score.", "adk_score.")
# The seed pipeline's converter writes this base_url on rows whose session_trace it made up from
# the session's events (every model and tool span 1 s long).
SYNTHESIZED_BASE_URL = "simulation"
# The attribute convert sets on the spans it writes for a run without spans, to carry its model calls' usage.
CONVERT_SPAN = "agent_eval.synthetic"
OK_STATUS = {"", "ok", "success", "succeeded", "completed", "complete", "done", "finished", "passed"}


class Cells:
    """Typed access to one row's cells, with errors that name row and column."""

    def __init__(self, path: str, where: str, row: dict[str, Any], warnings: list[str] | None = None):
        self.path, self.where, self.row = path, where, row
        self.question_id: str | None = None
        # Column warnings: one message per column, so a file repeats none however many rows share it.
        self.warnings: list[str] = warnings if warnings is not None else []

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    def cell(self, column: str) -> Any:
        try:
            value, replaced = parse_cell(self.row.get(column))
        except TooDeep as error:
            raise self.error(column, str(error)) from None
        except ValueError as error:
            raise self.error(column, f"not valid JSON ({error.args[0]})") from None
        if replaced:
            self.warn(f"{self.path}: {LONE_SURROGATES}")
        return value

    def error(self, column: str, reason: str) -> DatasetError:
        return DatasetError(self.path, reason, question_id=self.question_id, pointer=f"{self.where}, column {column}")

    def typed(self, column: str, kind: type, what: str) -> Any:
        value = self.cell(column)
        if value is not None and not isinstance(value, kind):
            raise self.error(column, f"expected {what}, got {type(value).__name__}")
        return value

    def at(self, column: str) -> Where:
        """Errors that point at a place inside one of this row's cells."""
        return Where(self.path, self.question_id, prefix=f"{self.where}, column {column}: $")

    def text(self, column: str) -> str | None:
        value = self.row.get(column)
        if value is None or (isinstance(value, float) and value != value):
            return None
        text = value if isinstance(value, str) else json.dumps(value)
        return text if text.strip() else None


def shown(value: int | float) -> str:
    """A native JSON number as it was written: ``Infinity``, not Python's ``inf``."""
    if isinstance(value, int):
        return f"an integer of {len(str(abs(value)))} digits"
    return json.dumps(value)


def as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        if isinstance(value, int | float):
            return float(value)
        if isinstance(value, str):
            return float(value)
    except ValueError:
        return None
    except OverflowError:  # an integer past a float's range
        return math.inf
    return None


def as_list(value: Any) -> list[Any] | None:
    if isinstance(value, list):
        return value
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            parsed = loads(value)[0]
        except ValueError:
            return None
        return parsed if isinstance(parsed, list) else None
    return None
