"""Simulation / processed runs read lazily: CSV (pandas, in chunks) and the same rows as JSONL.

One row is one recorded run of one question. Rows come in batches of raw cells (a CSV row's
texts, a JSONL line), each batch turned into records by ``convert_batch`` (``rows.row_to_run``
for each row) where it is read or, for a large table, in a scorer's worker process.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from agent_eval_action.datasets.base import (
    Batches,
    LoadedDataset,
    RawBatch,
    Record,
    Row,
    RunResolver,
    Uncut,
    question_key,
)
from agent_eval_action.datasets.tabular.cells import KNOWN_COLUMNS, SCORE_PREFIXES, UNPARSED
from agent_eval_action.datasets.tabular.cuts import Cut, cuts
from agent_eval_action.datasets.tabular.rows import row_to_run
from agent_eval_action.system.errors import DatasetError
from agent_eval_action.text.jsonish import LONE_SURROGATES, TooDeep, loads
from agent_eval_action.text.spelling import did_you_mean

CHUNK_ROWS = 64
# One column past the header's last: a row's first extra field lands there and the row is refused
# (pandas drops extra fields unsaid, or makes a wide first row's leading fields an index). A row
# with more extra fields than that makes the tokenizer stop, and is found as such (``_csv_rows``).
# One column, not more: each costs as much to read as a column of data.
OVERFLOW = "\x00fields past the header"
# Rows the tokenizer refuses after which the rest of a file is given up (each one reads it again).
MAX_BAD_ROWS = 20
TOO_WIDE_FIX = "a delimiter or quote out of place in the row (quote cells that hold commas), or a header cut short"
NOT_UTF8_FIX = "save the file as UTF-8 (from Windows-1252 or Latin-1: iconv -f cp1252 -t utf-8 IN > OUT)"


@dataclass(frozen=True)
class BadRow:
    """In a batch in place of a raw row that cannot be used at all: the reason it is refused."""

    reason: str


def load_csv(path: str) -> LoadedDataset:
    import pandas as pd

    try:
        # Bytes that are not UTF-8 are kept as lone surrogates, so the row holding them is named.
        header = [str(c) for c in pd.read_csv(path, nrows=0, encoding_errors="surrogateescape").columns]
    except (ValueError, pd.errors.ParserError) as error:
        raise DatasetError(path, f"not a readable CSV file: {error}") from None
    for name in header:
        bad = _not_utf8(name)
        if bad:
            raise DatasetError(path, f"the header is {bad}", pointer="the header row")
    dataset = LoadedDataset(path=path, name="", format="csv", records=iter(()))
    _check_columns(path, header, dataset.warnings)

    def batches() -> Iterator[RawBatch]:
        yield from _batched(_csv_rows(path, header))

    names = [*header, OVERFLOW]
    _attach(dataset, batches)
    assert dataset.batches is not None
    dataset.batches = replace(
        dataset.batches,
        cuts=functools.partial(cuts, path, functools.partial(_is_header, header)),
        convert_cut=functools.partial(convert_cut, path, names, len(header)),
    )
    return dataset


def _csv_rows(path: str, header: list[str]) -> Iterator[tuple[int, dict[str, str] | BadRow]]:
    """The data rows in file order, numbered from 1 (blank ones are skipped), as the cells of the
    columns a metric may read; a row with more fields than the header names, or that the tokenizer
    refuses (an unclosed quote), comes as a BadRow, and reading goes on after it."""
    import pandas as pd

    names = [*header, OVERFLOW]
    records = 0  # records read after the header, blank ones too: where a new reader starts
    number = 0
    refused = 0
    while True:
        try:
            for values in _read_csv(path, names, skip=1 + records, chunk_rows=CHUNK_ROWS):
                records += 1
                if any(values):
                    number += 1
                    yield number, _cells(names, values, len(header))
            return
        except pd.errors.EmptyDataError:  # nothing after the rows read
            return
        except pd.errors.ParserError:
            pass
        # A chunk was refused: its rows again, one at a time, up to the one refused.
        rows, error = _until_refused(path, names, skip=1 + records)
        for values in rows:
            records += 1
            if any(values):
                number += 1
                yield number, _cells(names, values, len(header))
        if error is None:
            continue
        records += 1
        number += 1
        yield number, BadRow(_refusal(error, len(header)))
        refused += 1
        if refused == MAX_BAD_ROWS:
            yield number + 1, BadRow(f"{MAX_BAD_ROWS} rows could not be read as CSV: the rest of the file is left out")
            return


# How rows are read, by the whole-file reader and from a cut alike.
_READING: dict[str, Any] = {
    "header": None,
    "index_col": False,
    "dtype": str,
    "keep_default_na": False,
    "skip_blank_lines": False,
    "engine": "c",
    "encoding": "utf-8",
    "encoding_errors": "surrogateescape",
}


def _read_csv(path: str, names: list[str], *, skip: int, chunk_rows: int) -> Iterator[list[str]]:
    import warnings

    import pandas as pd

    # The header row is skipped and named again with the overflow column. No usecols (to skip the
    # columns no metric reads): pandas then drops extra fields unsaid, and refuses names longer
    # than the rows. Blank rows are kept so that ``skiprows`` and our count agree on where a row is.
    with pd.read_csv(path, skiprows=skip, names=names, chunksize=chunk_rows, **_READING) as reader:
        while True:
            # A chunk's first row wider than the names makes pandas warn that it cuts it: the row is
            # refused for that anyway. (No yield inside: the filter must not outlive this statement.)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", pd.errors.ParserWarning)
                chunk = next(reader, None)
            if chunk is None:
                return
            yield from _values(chunk)


def _read_cut(path: str, names: list[str], width: int, cut: Cut) -> RawBatch:
    """A cut's rows, numbered as the whole-file reader numbers them, once its parse agrees with
    the scan (:class:`Uncut` if not, or if a row in it is refused: the whole-file reader says why)."""
    import io
    import itertools

    import pandas as pd

    with open(path, "rb") as handle:
        data = os.pread(handle.fileno(), cut.end - cut.start, cut.start)
    # A line of empty cells first, read and dropped: pandas reads the first line of what it is
    # given as the start of a file (a BOM there dropped, extra fields cut off with a warning),
    # and a cut's first row is no file's first row.
    lead = b"," * (len(names) - 1) + b"\n"
    try:
        frame = pd.read_csv(io.BytesIO(lead + data), names=names, **_READING)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as error:
        raise Uncut(f"{path}: bytes {cut.start}-{cut.end}: {error}") from None
    batch: RawBatch = []
    records = 0
    number = cut.first - 1
    for values in itertools.islice(_values(frame), 1, None):
        records += 1
        if any(values):
            number += 1
            cells = _cells(names, values, width)
            if isinstance(cells, BadRow):
                raise Uncut(f"{path}: row {number}: {cells.reason}")
            batch.append((number, cells))
    if (records, number + 1 - cut.first) != (cut.records, cut.rows):
        raise Uncut(
            f"{path}: bytes {cut.start}-{cut.end}: {records} records, {number + 1 - cut.first} rows; the scan counted {cut.records}, {cut.rows}"
        )
    return batch


def _values(frame: Any) -> list[list[str]]:
    """A frame's rows as lists of their cells: one conversion of the whole frame (its columns are
    text), a third of what ``itertuples`` costs, which builds each row column by column."""
    return frame.to_numpy(dtype=object).tolist()  # type: ignore[no-any-return]


def convert_cut(path: str, names: list[str], width: int, cut: Cut) -> tuple[list[Row], list[str]]:
    """A cut's rows read and converted: what a worker process does with the cut it is sent."""
    return convert_batch("csv", path, _read_cut(path, names, width, cut))


def _is_header(header: list[str], data: bytes) -> bool:
    """Whether ``data`` parses as one row, the header ``load_csv`` read."""
    import io

    import pandas as pd

    try:
        frame = pd.read_csv(io.BytesIO(data), **_READING)
    except (pd.errors.ParserError, pd.errors.EmptyDataError):
        return False
    return _values(frame) == [header]


def _until_refused(path: str, names: list[str], *, skip: int) -> tuple[list[list[str]], Exception | None]:
    """Up to a chunk's rows read one at a time from ``skip`` on, and the error that stopped them."""
    import pandas as pd

    rows: list[list[str]] = []
    try:
        for values in _read_csv(path, names, skip=skip, chunk_rows=1):
            rows.append(values)
            if len(rows) == CHUNK_ROWS:
                break
    except pd.errors.EmptyDataError:
        return rows, None
    except pd.errors.ParserError as error:
        return rows, error
    return rows, None


def _refusal(error: Exception, width: int) -> str:
    # pandas counts rows from where its reader began, not as we do: its row numbers are left out.
    text = re.sub(r" (starting )?at row \d+", "", str(error).strip().removeprefix("Error tokenizing data. C error: "))
    wide = re.match(r"Expected \d+ fields in line \d+, saw (\d+)", text)
    if wide:
        return f"the row has {wide.group(1)} fields, the header names {width} columns: {TOO_WIDE_FIX}"
    return f"the row cannot be read as CSV ({text}): look for an unclosed quote"


def _cells(columns: list[str], values: list[str], width: int) -> dict[str, str] | BadRow:
    """The row's cells by column (those no metric reads left out), or a BadRow when it has a field
    past the header's columns (an empty one at its end loses nothing)."""
    row = dict(zip(columns, values, strict=True))
    extra = row.pop(OVERFLOW)
    if extra:
        return BadRow(f"the row has more fields than the header's {width} columns (the first extra one: {extra[:40]!r}): {TOO_WIDE_FIX}")
    for column in UNPARSED.intersection(row):  # read (see _read_csv), not passed on
        del row[column]
    return row


def load_jsonl(path: str) -> LoadedDataset:
    dataset = LoadedDataset(path=path, name="", format="jsonl", records=iter(()))

    def batches() -> Iterator[RawBatch]:
        # Lines are parsed where they are converted, so that work is shared too. Bytes that are
        # not UTF-8 become lone surrogates there, so their line is refused, not the file.
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            yield from _batched((number, line) for number, line in enumerate(handle, start=1) if line.strip())

    _attach(dataset, batches)
    return dataset


def _batched(rows: Iterable[tuple[int, Any]]) -> Iterator[RawBatch]:
    batch: RawBatch = []
    for row in rows:
        batch.append(row)
        if len(batch) == CHUNK_ROWS:
            yield batch
            batch = []
    if batch:
        yield batch


def _attach(dataset: LoadedDataset, batches: Callable[[], Iterator[RawBatch]]) -> None:
    def rows() -> Iterator[Row]:
        for batch in batches():
            converted, warnings = convert_batch(dataset.format, dataset.path, batch)
            dataset.warnings.extend(w for w in warnings if w not in dataset.warnings)
            yield from converted

    dataset.records = _records(dataset.path, rows())
    dataset.batches = Batches(read=batches, convert=functools.partial(convert_batch, dataset.format, dataset.path))


def convert_batch(fmt: str, path: str, batch: RawBatch) -> tuple[list[Row], list[str]]:
    """Raw rows (CSV dicts or JSONL lines) -> rows with question and trace, and any column warnings.

    A module-level function so worker processes can run it on batches sent to them.
    """
    unit = "line" if fmt == "jsonl" else "row"
    warnings: list[str] = []
    columns: set[str] = set()
    out = []
    for number, raw in batch:
        pointer = f"{unit} {number}"
        try:
            if isinstance(raw, BadRow):
                raise DatasetError(path, raw.reason, pointer=pointer)
            row = _jsonl_object(path, pointer, raw, warnings) if fmt == "jsonl" else _csv_row(path, pointer, raw)
            if fmt == "jsonl" and not set(row) <= columns:
                _check_columns(path, sorted(set(row) - columns - KNOWN_COLUMNS), warnings)
                columns.update(row)
            read = row_to_run(path, pointer, row, warnings)
        except DatasetError as error:
            out.append(Row(number=number, pointer=pointer, session=None, item=_unwound(error)))
            continue
        # What the row asks, hashed: its runs' content key too where the row states the question whole.
        content = question_key(read.asked)
        record = Record(question=read.question, trace=read.trace, content_key=content if read.question is read.asked else None)
        out.append(Row(number=number, pointer=pointer, session=read.session, item=record, content=content))
    return out, warnings


def _unwound(error: DatasetError) -> DatasetError:
    """A row's error kept as its item, without its traceback and the exception it was raised
    over: their frames hold this batch's rows (the list this error goes into), a reference cycle
    that scoring, with the cyclic collector paused, would keep with the whole batch."""
    error.__traceback__ = None
    error.__context__ = None
    return error


def _not_utf8(text: str) -> str | None:
    """What is wrong with text read with ``surrogateescape``, or None when it was all UTF-8."""
    if text.isascii():  # the common case, and O(1): str knows it
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        byte = ord(text[error.start]) - 0xDC00
        return f"not UTF-8 text (byte 0x{byte:02X} at character {error.start + 1}): {NOT_UTF8_FIX}"
    return None


def _csv_row(path: str, pointer: str, row: dict[str, Any]) -> dict[str, Any]:
    """The row's cells, once every one is known to be UTF-8."""
    for column, value in row.items():
        bad = _not_utf8(value) if isinstance(value, str) else None
        if bad:
            raise DatasetError(path, bad, pointer=f"{pointer}, column {column}")
    return row


def _jsonl_object(path: str, pointer: str, line: str, warnings: list[str]) -> dict[str, Any]:
    bad = _not_utf8(line)
    if bad:
        raise DatasetError(path, bad, pointer=pointer)
    try:
        row, replaced = loads(line)
    except TooDeep as error:
        raise DatasetError(path, str(error), pointer=pointer) from None
    except ValueError as error:
        raise DatasetError(path, f"not valid JSON: {error.args[0]}", pointer=pointer) from None
    if not isinstance(row, dict):
        raise DatasetError(path, "expected a JSON object per line", pointer=pointer)
    if replaced and f"{path}: {LONE_SURROGATES}" not in warnings:
        warnings.append(f"{path}: {LONE_SURROGATES}")
    return row


def _check_columns(path: str, columns: list[str], warnings: list[str]) -> None:
    unknown = [c for c in columns if c not in KNOWN_COLUMNS and not c.startswith(("metric.", *SCORE_PREFIXES))]
    if unknown:
        named = ", ".join(repr(c) + did_you_mean(c, KNOWN_COLUMNS) for c in unknown)
        warnings.append(f"{path}: unknown column(s) {named} (ignored)")


def _records(path: str, rows: Iterator[Row]) -> Iterator[Record | DatasetError]:
    resolver = RunResolver(path)
    for row in rows:
        if isinstance(row.item, DatasetError):
            yield row.item
            continue
        run = resolver.admit(row.item.question.id, row.session, row.pointer, row.content or question_key(row.item.question))
        if isinstance(run, DatasetError):
            yield run
        else:
            row.item.run = run
            yield row.item
    yield from resolver.uneven()
