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
from typing import Any, BinaryIO

from agent_eval_action.datasets.base import Uncut

# A cut ends after this many records or once it holds this many bytes, whichever comes first:
# as many rows as a batch of the whole-file reader, a few MB of work each on large rows.
CUT_ROWS = 64
CUT_BYTES = 4 * 2**20
_BLOCK = 4 * 2**20
# A header longer than this is a quote out of place (parsing it would parse the file here).
MAX_HEADER = 2**20
# A record longer than this is no row a producer wrote but a quote out of place: read the file whole.
MAX_RECORD = 64 * 2**20
# A stretch of a block at least this long has its quotes counted by numpy (a compare the width of
# a vector, then a count of the matches), shorter ones by bytes.count (a byte at a time, no call
# to set up): at 45 KB a row, bytes.count was 0.29 s of the scan's 0.45 s over 864 MB, numpy 0.05.
WIDE = 4096


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
        if head[0] > MAX_HEADER or not header_is(os.pread(handle.fileno(), head[0], 0)):
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
    ``handle`` is; a last record without a newline ends at the end of the file. Block by block,
    keeping of the record being read only where it began, its quotes' parity and its first two
    bytes (whether it is blank); :class:`Uncut` for a record longer than :data:`MAX_RECORD` (an
    unclosed quote, most likely) or one still inside quotes at the end of the file."""
    base = offset  # the file offset of the block's first byte
    start = offset  # where the record being read begins
    quotes = 0
    head = b""
    while True:
        block = handle.read(_BLOCK)
        if not block:
            if quotes % 2:
                raise Uncut(f"a quote opened at byte {start} is never closed")
            if base > start:
                yield base, _blank(base - start, head)
            return
        if len(head) < 2:
            head += block[: 2 - len(head)]
        count = _quote_counter(block)
        scanned = 0
        while True:
            newline = block.find(b"\n", scanned)
            if newline < 0:
                quotes += count(scanned, len(block))
                break
            quotes += count(scanned, newline)
            scanned = newline + 1
            if quotes % 2 == 0:
                end = base + scanned
                yield end, _blank(base + newline - start, head)
                start, quotes, head = end, 0, block[scanned : scanned + 2]
        base += len(block)
        if base - start > MAX_RECORD:
            raise Uncut(f"a record from byte {start} runs past {MAX_RECORD} bytes")


def _quote_counter(block: bytes) -> Callable[[int, int], int]:
    """The number of quotes in ``block[start:end]``, for any stretch of ``block``."""
    marks: Any = None  # where the block's quotes are, made for its first wide stretch

    def count(start: int, end: int) -> int:
        nonlocal marks
        if end - start < WIDE:
            return block.count(b'"', start, end)
        import numpy  # pandas' own dependency: a file large enough to be cut is read by pandas

        if marks is None:
            marks = numpy.frombuffer(block, dtype=numpy.uint8) == ord('"')
        return int(numpy.count_nonzero(marks[start:end]))

    return count


def _blank(length: int, head: bytes) -> bool:
    """Whether a record of ``length`` bytes before its newline, beginning with ``head``, is blank."""
    return length == 0 or (length == 1 and head[:1] == b"\r")
