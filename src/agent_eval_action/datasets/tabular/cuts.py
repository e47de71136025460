"""A large CSV file cut at row boundaries, so the scorer's worker processes parse it too.

The process that hands out the work finds where records end without parsing them: a newline ends
a record when the quotes before it, since the record began, pair up (a quoted cell's quotes come
in pairs, its doubled ones too). That is how a CSV writer quotes; a file can break the rule (a
bare quote inside an unquoted cell, an unclosed one), so each cut says what the scan found in it
and the worker that parses it checks: a cut that ends inside a quoted cell leaves the tokenizer
there at its end (pandas refuses it), and a count that differs says the scan misread a quote.
Either raises :class:`Uncut`, and the file is read whole, in order, as before.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from agent_eval_action.datasets.base import Uncut

# A cut ends after this many records or once it holds this many bytes, whichever comes first:
# as many rows as a batch of the whole-file reader, a few MB of work each on large rows.
CUT_ROWS = 64
CUT_BYTES = 4 * 2**20
_BLOCK = 4 * 2**20


@dataclass(frozen=True)
class Cut:
    """Bytes ``start:end`` of the file: whole records, and what the scan counted in them."""

    start: int
    end: int
    # The number of its first row that is not blank (the file's rows are numbered from 1, blank
    # ones left out, as the whole-file reader numbers them).
    first: int
    records: int  # every record, blank ones too
    rows: int  # the records that are not blank


def cuts(path: str, header_is: Callable[[bytes], bool]) -> Iterator[Cut]:
    """The data records of ``path`` in cuts, in file order. The first record is the header:
    ``header_is`` is given its bytes and says whether they parse as the header the reader read
    (a scan that misread a quote in it would lose rows unsaid); if not, :class:`Uncut`."""
    with open(path, "rb") as handle:
        ends = _record_ends(handle)
        head = next(ends, None)
        if head is None:
            return
        if not header_is(os.pread(handle.fileno(), head[0], 0)):
            raise Uncut(f"{path}: the header does not end where the scan put it")
        begin, first, records, rows = head[0], 1, 0, 0
        for end, blank in ends:
            records += 1
            rows += not blank
            if records == CUT_ROWS or end - begin >= CUT_BYTES:
                yield Cut(begin, end, first, records, rows)
                begin, first, records, rows = end, first + rows, 0, 0
        if records:
            yield Cut(begin, end, first, records, rows)


def _record_ends(handle: BinaryIO, offset: int = 0) -> Iterator[tuple[int, bool]]:
    """(offset past its end, whether it is blank) of each record from ``offset``, where
    ``handle`` is; a last record without a newline ends at the end of the file."""
    buffer = b""
    base = offset  # the file offset of buffer[0]
    start = 0  # where the current record begins in buffer
    scanned = 0  # where its quotes are counted up to
    quotes = 0
    while True:
        block = handle.read(_BLOCK)
        if not block:
            if start < len(buffer):
                yield base + len(buffer), buffer[start:] in (b"", b"\r")
            return
        buffer = buffer[start:] + block
        base += start
        scanned -= start
        start = 0
        while True:
            newline = buffer.find(b"\n", scanned)
            if newline < 0:
                quotes += buffer.count(b'"', scanned)
                scanned = len(buffer)
                break
            quotes += buffer.count(b'"', scanned, newline)
            scanned = newline + 1
            if quotes % 2 == 0:
                yield base + scanned, newline == start or (newline == start + 1 and buffer[start] == 0x0D)
                start, quotes = scanned, 0
