"""What every loader produces: a stream of records (question, optional trace) or problems."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from agent_eval_action.errors import DatasetError
from agent_eval_action.models import Question, Trace


@dataclass(kw_only=True)
class Record:
    question: Question
    trace: Trace | None = None  # None: the agent has to be run
    run: int = 0


@dataclass(kw_only=True)
class LoadedDataset:
    path: str
    name: str
    format: str
    # Records are produced lazily so large tables stream; a bad question is yielded as a
    # DatasetError in its place and the others still load.
    records: Iterator[Record | DatasetError]
    warnings: list[str] = field(default_factory=list)
    # Thresholds that came with the dataset (ADK test_config.json criteria).
    criteria: dict[str, float] = field(default_factory=dict)
