"""Run tables read lazily: CSV as the workshop's producer writes it (csv.DictWriter, JSON cells),
JSONL as the seed pipeline's ``write_jsonl`` does, rows the tokenizer refuses or that are not UTF-8
refused alone, and a large table's batches converted in another process as they are here."""

from __future__ import annotations

import pickle
import warnings
from pathlib import Path

import pandas as pd

from agent_eval_action.datasets import Record
from agent_eval_action.datasets.tabular import load_csv, load_jsonl
from agent_eval_action.datasets.tabular.stream import TOO_WIDE_FIX
from agent_eval_action.system.errors import DatasetError
from tests.helpers import seed_pipeline as seed
from tests.helpers import workshop


def _records(items: list[Record | DatasetError]) -> list[Record]:
    assert all(isinstance(item, Record) for item in items), [item for item in items if isinstance(item, DatasetError)]
    return [item for item in items if isinstance(item, Record)]


def test_a_workshop_csv_streams_each_run_with_its_question_tools_and_recorded_figures(tmp_path: Path) -> None:
    chats = workshop.conversations()
    dataset = load_csv(str(workshop.simulation_csv(tmp_path / "runs.csv", count=5)))
    records = _records(list(dataset.records))

    assert dataset.format == "csv"
    assert [r.question.id for r in records] == [c.qid for c in chats]
    second, chat = records[1], chats[1]
    assert second.question.user_inputs == [turn.user for turn in chat.turns]
    assert second.trace is not None
    assert [call.tool_name for call in second.trace.tool_interactions or []] == [t.name for turn in chat.turns for t in turn.tools]
    # score.* kept as is; metric.* without its prefix; a JSON list in a count column counts its items;
    # the empty score.safety_v1 cell (the judge never ran) is left out.
    assert second.trace.recorded_metrics == {
        "score.hallucinations_v1": chat.hallucinations,
        "duration_sec": 18.4,
        "total_tokens": 28854.0,
        "turn_count": 3.0,
        "tool_calls": 4.0,
        "tool_errors": 0.0,
        "unique_tools": 4.0,
    }
    assert second.trace.root_agent == workshop.AGENT
    assert second.trace.final_state == {"customer_profile": workshop.PROFILE, "request_count": 3}
    # One warning for the column, however many rows hold a list there.
    assert dataset.warnings == [
        f"{tmp_path / 'runs.csv'}: column 'metric.unique_tools' holds values that are not numbers: "
        "a list counts as its number of items, other values are left out"
    ]


def test_the_seed_pipelines_jsonl_lines_of_both_paths(tmp_path: Path) -> None:
    path = seed.write_jsonl(tmp_path / "processed.jsonl", [seed.live_row(), seed.sim_row()])
    dataset = load_jsonl(str(path))
    live, sim = _records(list(dataset.records))

    assert dataset.format == "jsonl" and dataset.warnings == []
    assert live.trace is not None and sim.trace is not None
    # The live path: its real spans time the run; the AgentTool's model calls come from the spans too.
    assert (live.trace.latency_s, live.trace.latency_source) == (4.8, "session_trace spans")
    assert [turn.duration_s for turn in live.trace.turns] == [3.0, 1.8]
    assert [call.tool_name for call in live.trace.tool_interactions or []] == [
        "IntakeAgent", "search_places", "transfer_to_agent", "generate_qr_code"
    ]  # fmt: skip
    assert len(live.trace.llm_calls or []) == 7
    # The simulation path: made-up span times are not read; latency_data's invocations time it.
    assert (sim.trace.latency_s, sim.trace.latency_source) == (12.2, "latency_data")
    assert [turn.duration_s for turn in sim.trace.turns] == [9.0, 3.2]
    assert "timing" in sim.trace.missing
    assert sim.trace.recorded_metrics == {f"score.{name}": value for name, value in seed.ADK_SCORES.items() if value is not None}
    # The extracted call carries no error: the session's events give it.
    assert [call.error for call in sim.trace.tool_interactions or []] == ["Over the limit of 100."]


def test_a_csv_row_with_a_field_past_the_header_is_refused_and_reading_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text('question_id,user_inputs\nq1,"[""hi""]"\nq2,hello,extra\n\nq3,yo\n', encoding="utf-8")
    first, refused, third = list(load_csv(str(path)).records)

    assert isinstance(first, Record) and first.question.id == "q1" and first.question.user_inputs == ["hi"]
    assert isinstance(refused, DatasetError)
    assert refused.pointer == "row 2"
    assert refused.reason.startswith("the row has more fields than the header's 2 columns (the first extra one: 'extra')")
    # The blank line is skipped, not counted: q3 is the third row.
    assert isinstance(third, Record) and third.question.id == "q3" and third.question.user_inputs == ["yo"]


def test_a_cell_that_is_not_utf8_names_its_row_and_column(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_bytes(b"question_id,user_inputs\nq1,hi\nq2,caf\xe9\n")
    first, refused = list(load_csv(str(path)).records)

    assert isinstance(first, Record)
    assert isinstance(refused, DatasetError)
    assert refused.pointer == "row 2, column user_inputs"
    assert refused.reason.startswith("not UTF-8 text (byte 0xE9 at character 4)")


def test_a_jsonl_line_that_is_no_object_is_refused_alone(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text('{"question_id": "q1", "user_inputs": ["hi"]}\n[1, 2]\n{broken\n\n{"eval_id": "q4", "user_inputs": "yo"}\n')
    first, listed, broken, fourth = list(load_jsonl(str(path)).records)

    assert isinstance(first, Record) and first.question.user_inputs == ["hi"]
    assert isinstance(listed, DatasetError) and (listed.pointer, listed.reason) == ("line 2", "expected a JSON object per line")
    assert isinstance(broken, DatasetError) and broken.pointer == "line 3" and broken.reason.startswith("not valid JSON")
    # Numbered as in the file (the blank line 4 counted); a lone string is one user input.
    assert isinstance(fourth, Record) and fourth.question.id == "q4" and fourth.question.user_inputs == ["yo"]


def test_repeated_runs_of_a_question_are_numbered_by_session(tmp_path: Path) -> None:
    dataset = load_csv(str(workshop.simulation_csv(tmp_path / "runs.csv", count=10)))
    records = _records(list(dataset.records))

    first = workshop.conversations()[0].qid
    assert [(r.question.id, r.run) for r in records if r.question.id == first] == [(first, 0), (first, 1)]


def test_a_tables_batches_convert_in_another_process_as_they_do_here(tmp_path: Path) -> None:
    """The scorer's workers get ``batches.convert`` pickled: it must pickle, and give the rows the
    records came from."""
    dataset = load_csv(str(workshop.simulation_csv(tmp_path / "runs.csv", count=5)))
    assert dataset.batches is not None
    convert = pickle.loads(pickle.dumps(dataset.batches.convert))
    rows = [row for batch in dataset.batches.read() for row in convert(batch)[0]]
    records = _records(list(dataset.records))

    assert [(row.number, row.pointer) for row in rows] == [(n, f"row {n}") for n in range(1, 6)]
    assert [row.item.question for row in rows if isinstance(row.item, Record)] == [r.question for r in records]
    assert [row.session for row in rows] == [workshop.row(c)["session_id"] for c in workshop.conversations()]


def test_rows_the_tokenizer_refuses_across_read_chunks_are_refused_alone_and_every_other_row_read_once(tmp_path: Path) -> None:
    """pandas reads 64 rows at a time (``CHUNK_ROWS``) and refuses a whole chunk for one bad row:
    the chunk's rows are read again one at a time, up to the refused one, and reading goes on."""
    bad = {63, 64, 65, 100, 129, 513}  # about the chunks' ends; two fields too many stop the tokenizer
    lines = [f"q{n},hi,x,y" if n in bad else f"q{n},hi" for n in range(1, 601)]
    path = tmp_path / "runs.csv"
    path.write_text("question_id,user_inputs\n" + "\n".join(lines) + "\n", encoding="utf-8")
    with warnings.catch_warnings(record=True) as heard:
        warnings.simplefilter("always")
        items = list(load_csv(str(path)).records)

    # A bad row first in a chunk made pandas warn on stderr ("Length of header or names does not
    # match ..."): the row's refusal says it already.
    assert not [str(w.message) for w in heard if issubclass(w.category, pd.errors.ParserWarning)]

    assert [item.pointer for item in items if isinstance(item, DatasetError)] == [f"row {n}" for n in sorted(bad)]
    assert all(item.reason.endswith(TOO_WIDE_FIX) for item in items if isinstance(item, DatasetError))
    assert [item.question.id for item in items if isinstance(item, Record)] == [f"q{n}" for n in range(1, 601) if n not in bad]
