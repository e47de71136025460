"""What every loader produces: a stream of records (question, optional trace) or problems."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from agent_eval_action.models.questions import DatasetFormat, Question
from agent_eval_action.models.traces import Trace
from agent_eval_action.system.errors import DatasetError
from agent_eval_action.text.jsonish import dumps_sorted


@dataclass(kw_only=True)
class Record:
    question: Question
    trace: Trace | None = None  # None: the agent has to be run
    run: int = 0
    # The question's content key (``question_key``), when the reader computed it with its content.
    content_key: str | None = None


# (row or line number, raw row): a CSV row as a dict of cell texts, or a JSONL line.
RawBatch = list[tuple[int, Any]]


@dataclass(kw_only=True)
class Row:
    """A table row before repeated runs are told apart: what a shard of a large file yields."""

    number: int
    pointer: str
    session: str | None
    item: Record | DatasetError
    # What the row asks (``question_key`` of its question as the row states it), by which its
    # repeated runs are told from another question under the same id; None: the record's question.
    content: str | None = None


# Rows and column warnings, from one batch of raw rows (or one cut of a file).
Converted = tuple[list[Row], list[str]]
Converter = Callable[[RawBatch], Converted]


class Uncut(Exception):
    """A cut of a file whose parse disagrees with the scan that cut it, or a file the scan cannot
    cut: the file is read whole instead (``Batches.read``)."""


@dataclass(frozen=True, kw_only=True)
class Batches:
    """A large table's raw rows, for scoring in worker processes: ``read`` yields them in batches
    (in the process that reads the file); ``convert`` turns one batch into rows and column
    warnings, and pickles (a module-level function's partial), so a worker runs it on the batches
    sent to it. The reader's parsing stays its own: the scorer calls only these two."""

    read: Callable[[], Iterator[RawBatch]]
    convert: Converter
    # A file its workers can read too (CSV): ``cuts`` yields pieces of it, which ``convert_cut``
    # reads and converts where it runs, or raises ``Uncut`` when the file must be read whole.
    cuts: Callable[[], Iterator[Any]] | None = None
    convert_cut: Callable[[Any], Converted] | None = None


def question_key(question: Question) -> str:
    """What a question asks and expects whatever it is called (its content without its id),
    hashed: stable across runs, machines and key order. It also tells a question's repeated runs
    from another question under the same id (``Row.content``): within one id, the ids are equal."""
    return _hashed(question.model_dump(mode="json", exclude={"line", "id"}))


def _hashed(content: dict[str, Any]) -> str:
    return hashlib.sha256(dumps_sorted(content).encode()).hexdigest()[:20]


class RunResolver:
    """Numbers repeated runs of a question (by session id) and refuses duplicates, in file order:
    the same session twice, or one id given to two different questions (whatever their sessions:
    a second question under a known id would pass as a run of the first)."""

    def __init__(self, path: str):
        self.path = path
        self.runs: dict[str, int] = {}
        self.sessions: set[tuple[str, str]] = set()
        # Each id's first row: where it is, and its question's content; and every row of it.
        self.first: dict[str, tuple[str, str | None]] = {}
        self.rows: dict[str, list[str]] = {}

    def admit(self, question_id: str, session: str | None, pointer: str, content: str | None = None) -> int | DatasetError:
        where, before = self.first.setdefault(question_id, (pointer, content))
        self.rows.setdefault(question_id, []).append(pointer)
        if content is not None and before is not None and content != before:
            reason = (
                f"duplicate question id: {where} and {pointer} both say {question_id!r} but ask different questions "
                "(rows of repeated runs repeat their question exactly): give each question an id of its own"
            )
            return DatasetError(self.path, reason, question_id=question_id, pointer=pointer)
        if session and (question_id, session) in self.sessions:
            return DatasetError(self.path, f"duplicate run of session {session!r}", question_id=question_id, pointer=pointer)
        if session:
            self.sessions.add((question_id, session))
        elif question_id in self.runs:
            reason = "duplicate question id (give repeated runs distinct session_id values)"
            return DatasetError(self.path, reason, question_id=question_id, pointer=pointer)
        run = self.runs.get(question_id, -1) + 1
        self.runs[question_id] = run
        return run

    def uneven(self) -> list[DatasetError]:
        """Once the file is read: the ids with more rows than the file's questions have runs (the
        most common count), whatever their sessions. A file of K runs a question repeats every
        question K times; one question repeated alone is a second question under a known id
        (a regressed copy would pass as a run of the first)."""
        counts = Counter(len(rows) for rows in self.rows.values())
        if len(counts) < 2:
            return []
        usual = min(counts, key=lambda count: (-counts[count], count))
        return [
            DatasetError(
                self.path,
                f"duplicate question id: {' and '.join(rows[:2])}{f' (and {len(rows) - 2} more rows)' if len(rows) > 2 else ''} "
                f"both say {question_id!r}, while the file's other questions have {usual} row{'s' if usual != 1 else ''} each: "
                "give each question an id of its own (repeated runs repeat every question as often)",
                question_id=question_id,
                pointer=rows[usual],
            )
            for question_id, rows in self.rows.items()
            if len(rows) > usual
        ]


@dataclass(kw_only=True)
class LoadedDataset:
    path: str
    name: str
    format: DatasetFormat
    # Records are produced lazily so large tables stream; a bad question is yielded as a
    # DatasetError in its place and the others still load.
    records: Iterator[Record | DatasetError]
    warnings: list[str] = field(default_factory=list)
    # Thresholds that came with the dataset (ADK test_config.json criteria).
    criteria: dict[str, float] = field(default_factory=dict)
    # Those criteria as written, by metric (``{"threshold": 1.0, "match_type": "IN_ORDER"}``):
    # how ADK's own metrics are computed for this dataset.
    criterion_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Large tables: raw rows in batches, which worker processes can convert (the records above
    # come from the same batches).
    batches: Batches | None = None
    # A shard's slice (``--shard i/n``): how many questions the whole dataset holds, once its
    # records have been read; None for a whole dataset. The shard's re-runs decide at the level
    # the whole check's merge will test at.
    whole: int | None = None
