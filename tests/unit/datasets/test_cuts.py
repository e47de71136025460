"""A large CSV cut at row boundaries, for the scorer's workers to parse (``datasets/tabular/cuts.py``):
the cuts give exactly the rows the whole-file reader gives, and a file whose quotes the scan
cannot follow is found out (``Uncut``), never read wrong."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

from agent_eval_action.datasets.base import Record, Row, Uncut
from agent_eval_action.datasets.tabular import cuts
from agent_eval_action.datasets.tabular.stream import load_csv

HEADER = "question_id,user_inputs,final_response,session_id"
# The quotes of a stretch counted by bytes.count (these rows are short) and, at 0, all by numpy.
WIDE, WIDE_IDS = [cuts.WIDE, 0], ["quotes-counted-by-bytes", "quotes-counted-by-numpy"]


def _lines(count: int = 9) -> list[str]:
    """Rows as a CSV writer quotes them: a cell with a quote, a comma or a newline is quoted, its
    quotes doubled; some cells span lines."""
    lines = []
    for n in range(1, count + 1):
        answer = f'"line one of {n}\nsaid ""hi"", then\nleft"' if n % 3 == 0 else f"plain {n}"
        lines.append(f'q{n},"[""hello, {n}""]",{answer},s{n}')
    return lines


def _write(path: Path, lines: list[str], *, newline: str = "\r\n", last: bool = True, header: str = HEADER) -> str:
    text = newline.join([header, *lines]) + (newline if last else "")
    path.write_bytes(text.replace("\n", newline).replace("\r\r\n", "\r\n").encode())
    return str(path)


def _seen(rows: list[Row]) -> list[tuple[Any, ...]]:
    return [
        (row.number, row.pointer, row.session, row.content, row.item.question if isinstance(row.item, Record) else row.item.message())
        for row in rows
    ]


def _whole(path: str) -> list[Row]:
    batches = load_csv(path).batches
    assert batches is not None
    return [row for batch in batches.read() for row in batches.convert(batch)[0]]


def _cut(path: str) -> tuple[list[Row], int]:
    batches = load_csv(path).batches
    assert batches is not None and batches.cuts is not None and batches.convert_cut is not None
    # As a worker gets it: the converter pickled.
    convert = pickle.loads(pickle.dumps(batches.convert_cut))
    pieces = list(batches.cuts())
    return [row for piece in pieces for row in convert(piece)[0]], len(pieces)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("last", [True, False], ids=["newline-at-end", "none-at-end"])
@pytest.mark.parametrize("block", [3, cuts._BLOCK], ids=["records-across-read-blocks", "whole-blocks"])
@pytest.mark.parametrize("wide", WIDE, ids=WIDE_IDS)
def test_the_cuts_give_the_rows_the_whole_file_reader_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, newline: str, last: bool, block: int, wide: int
) -> None:
    monkeypatch.setattr(cuts, "CUT_ROWS", 2)
    monkeypatch.setattr(cuts, "_BLOCK", block)
    monkeypatch.setattr(cuts, "WIDE", wide)
    lines = _lines()
    lines[3:3] = ["", ""]  # blank rows are records, not numbered rows
    lines.insert(8, "")
    path = _write(tmp_path / "runs.csv", lines, newline=newline, last=last)

    rows, pieces = _cut(path)
    assert pieces >= 5
    assert _seen(rows) == _seen(_whole(path))
    assert [row.number for row in rows] == list(range(1, 10))
    third = rows[2].item
    assert isinstance(third, Record) and third.trace is not None
    assert third.trace.final_response == f'line one of 3{newline}said "hi", then{newline}left'  # as the file has it


def test_a_cut_ends_at_its_byte_budget_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cuts, "CUT_BYTES", 1)  # every record its own cut
    path = _write(tmp_path / "runs.csv", _lines(5))
    rows, pieces = _cut(path)
    assert pieces == 5
    assert _seen(rows) == _seen(_whole(path))


@pytest.mark.parametrize(
    ("place", "line"),
    [
        pytest.param(4, 'q_bare,"[""x""]",a 5" screen,s_bare', id="bare-quote-in-an-unquoted-cell"),
        pytest.param(4, 'q_open,"[""x""]","never closed,s_open', id="unclosed-quote"),
        pytest.param(4, ",,,", id="a-row-of-empty-cells"),
        pytest.param(4, 'q_wide,"[""x""]",a,s,extra', id="a-field-past-the-header"),
        pytest.param(4, 'q_cr,"[""x""]",a\rq_cr2,"[""y""]",b,s', id="a-lone-carriage-return-ends-a-row"),
    ],
)
@pytest.mark.parametrize("wide", WIDE, ids=WIDE_IDS)
def test_a_file_the_scan_cannot_follow_is_found_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, place: int, line: str, wide: int
) -> None:
    """pandas reads a bare quote inside an unquoted cell as text, a lone CR as a row's end, a row
    of empty cells as blank: the scan does not, so the count of some cut disagrees; an unclosed
    quote leaves a cut's last record open; a row past the header is for the whole-file reader to
    refuse in its words. Each raises Uncut, so the scorer reads the file whole."""
    monkeypatch.setattr(cuts, "CUT_ROWS", 2)
    monkeypatch.setattr(cuts, "WIDE", wide)
    lines = _lines()
    lines.insert(place, line)
    path = _write(tmp_path / "runs.csv", lines, newline="\n")
    with pytest.raises(Uncut):
        _cut(path)


def test_a_rows_leading_bytes_are_read_as_the_whole_file_reader_reads_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A BOM at the start of a row that begins a cut is the row's (pandas drops one only at the
    start of what it reads): the cut's bytes are read behind a line of empty cells."""
    monkeypatch.setattr(cuts, "CUT_ROWS", 2)
    lines = _lines(5)
    lines[2] = "\ufeff" + lines[2]  # row 3: the first of the second cut
    path = _write(tmp_path / "runs.csv", lines)
    rows, _ = _cut(path)
    assert _seen(rows) == _seen(_whole(path))
    third = rows[2].item
    assert isinstance(third, Record) and third.question.id == "\ufeffq3"


def test_a_row_with_fields_past_the_header_first_in_a_cut_is_the_whole_file_readers_to_refuse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pandas cuts off the extra fields of the first line it reads, with a warning, where it
    refuses them in any other line: first in a cut, such a row is found out too."""
    monkeypatch.setattr(cuts, "CUT_BYTES", 1)  # every record its own cut
    lines = _lines(3)
    lines[1] += ",,extra"
    path = _write(tmp_path / "runs.csv", lines)
    with pytest.raises(Uncut):
        _cut(path)


def test_a_record_past_its_bound_is_found_out_by_the_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A quote out of place makes the scan run one record on through the rest of the file: past
    MAX_RECORD it stops there, holding no more than a read block, and no cut of it is parsed."""
    monkeypatch.setattr(cuts, "_BLOCK", 16)
    monkeypatch.setattr(cuts, "MAX_RECORD", 64)
    lines = _lines(9)
    lines[1] = 'q2,"[""x""]",a 5" screen,s2'  # a bare quote: the rest is one record to the scan
    path = _write(tmp_path / "runs.csv", lines + ["q_odd,x,y,s"] * 20)
    batches = load_csv(path).batches
    assert batches is not None and batches.cuts is not None
    with pytest.raises(Uncut, match="runs past 64 bytes"):
        list(batches.cuts())


def test_a_header_the_scan_misreads_is_found_out(tmp_path: Path) -> None:
    # The bare quote makes the scan run the header on into the rows: they would be lost unsaid.
    path = _write(tmp_path / "runs.csv", _lines(), header='question_id,user_inputs,final_response,session_id,note"s')
    with pytest.raises(Uncut):
        _cut(path)


def test_an_empty_table_has_no_cuts(tmp_path: Path) -> None:
    assert _cut(_write(tmp_path / "runs.csv", [], last=True)) == ([], 0)
