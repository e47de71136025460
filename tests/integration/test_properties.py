"""Property tests: whatever a dataset file holds, the loader refuses it with a DatasetError that
names the file, or yields one record or one error per question, each error naming the file and
the place in it; every record that loads scores without a metric failing. On the command line
broken files are exit 2 with one error line each, naming the file and the place, and the valid
datasets, and the valid rows of a broken table, are still scored."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_eval_action.datasets import Record, load_dataset
from agent_eval_action.metrics import MetricContext
from agent_eval_action.scoring.scorer import Scorer
from agent_eval_action.system.errors import DatasetError
from agent_eval_action.system.inside import OUTSIDE
from tests.helpers.commands import run_cli
from tests.helpers.factories import csv_row, customer_service_runs, write_csv, write_jsonl

ROOT = Path(__file__).resolve().parents[2]
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12,
)
KEYS = ["id", "user_inputs", "agents_evaluated", "metadata", "reference_data", "extra"]
REF_KEYS = ["reference_tool_interactions", "reference_trajectory", "reference_state_variables", "reference_response", "custom"]
question = st.dictionaries(st.sampled_from(KEYS), json_values, max_size=6) | st.fixed_dictionaries(
    {
        "id": st.text(min_size=1, max_size=5),
        "user_inputs": st.lists(st.text(max_size=5), max_size=3),
        "agents_evaluated": st.lists(st.text(max_size=5), max_size=2),
        "reference_data": st.dictionaries(st.sampled_from(REF_KEYS), json_values, max_size=4),
    }
)
SCORER = Scorer.for_names([], MetricContext(prices={"gemini": {"input": 1, "output": 1}}))
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# Temporary files are made under a temporary working directory: inputs must lie inside it.
pytestmark = pytest.mark.usefixtures("in_tmp")


def names_the_file(error: DatasetError, path: Path) -> None:
    assert error.path == str(path) and error.message().startswith(f"{path}"), error.message()


def load(path: Path) -> list[Record | DatasetError] | DatasetError:
    """The file's records and per-question errors in file order, or the DatasetError that refused
    it; either way every error names the file, a question's also the place in it, and every
    record with a trace scores without a metric failing."""
    try:
        items = list(load_dataset(str(path)).records)
    except DatasetError as error:
        assert OUTSIDE not in error.reason  # the loader must have been reached
        names_the_file(error, path)
        return error
    for item in items:
        if isinstance(item, DatasetError):
            names_the_file(item, path)
            assert item.pointer, item.message()
        elif item.trace is not None:
            result = SCORER.score_record(item)
            crashed = [name for name, score in result.scores.items() if score.explanation.startswith("metric failed")]
            assert not crashed, (crashed, result)
    return items


def one_per_question(loaded: list[Record | DatasetError] | DatasetError, places: list[str]) -> list[Record | DatasetError]:
    """Loaded, one item per question, each error pointing at its own question's place."""
    assert not isinstance(loaded, DatasetError), loaded.message()
    assert len(loaded) == len(places), (loaded, places)
    for item, place in zip(loaded, places, strict=True):
        if isinstance(item, DatasetError):
            assert at(item.pointer, place), (item.message(), place)
    return loaded


def at(pointer: str | None, place: str) -> bool:
    """Whether ``pointer`` is ``place`` or inside it (``row 1, column x`` is in row 1, ``row 10`` is not)."""
    return pointer is not None and (pointer == place or (pointer.startswith(place) and pointer[len(place)] in ".,[:"))


@SETTINGS
@given(st.one_of(json_values, st.fixed_dictionaries({"golden_questions": st.lists(question, max_size=4)})))
def test_any_json_as_golden(content: Any) -> None:
    with tempfile.TemporaryDirectory(dir=".") as tmp:
        path = Path(tmp) / "x_golden.json"
        path.write_text(json.dumps(content))
        loaded = load(path)
        if isinstance(content, dict) and isinstance(content.get("golden_questions"), list):
            questions = content["golden_questions"]
            one_per_question(loaded, [f"$.golden_questions[{i}]" for i in range(len(questions))])


@SETTINGS
@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(["query", "expected_tool_use", "reference", "data", "name", "initial_session"]), json_values, max_size=4
        ),
        max_size=3,
    )
)
def test_any_test_json(content: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory(dir=".") as tmp:
        path = Path(tmp) / "x.test.json"
        path.write_text(json.dumps(content))
        loaded = load(path)
        if not all("query" in turn or "data" in turn for turn in content):
            assert isinstance(loaded, DatasetError) and "unrecognised dataset" in loaded.reason
        elif content and all("data" in case for case in content):  # several cases, each its turns under "data"
            one_per_question(loaded, [f"$[{i}].data" for i in range(len(content))])
        else:  # the turns of one conversation
            one_per_question(loaded, ["$"])


@SETTINGS
@given(
    st.dictionaries(
        st.sampled_from(["eval_set_id", "eval_cases", "evalCases", "name"]),
        json_values
        | st.lists(
            st.dictionaries(
                st.sampled_from(["eval_id", "conversation", "session_input", "final_session_state", "conversation_scenario"]),
                json_values,
                max_size=4,
            ),
            max_size=3,
        ),
        max_size=3,
    ).filter(lambda d: "eval_cases" in d or "evalCases" in d)
)
def test_any_eval_set(content: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory(dir=".") as tmp:
        path = Path(tmp) / "x.evalset.json"
        path.write_text(json.dumps(content))
        loaded = load(path)
        cases = content.get("eval_cases", content.get("evalCases"))
        if isinstance(cases, list):
            # The JSON path is written with ADK's field names, whichever spelling the file uses.
            one_per_question(loaded, [f"$.eval_cases[{i}]" for i in range(len(cases))])
        else:
            assert isinstance(loaded, DatasetError) and at(loaded.pointer, "$.eval_cases"), loaded


COLUMNS = [
    "user_inputs",
    "agents_evaluated",
    "reference_data",
    "extracted_data",
    "session_state",
    "final_session_state",
    "session_trace",
    "latency_data",
    "sub_agent_trace",
    "trace_summary",
    "metric.duration_sec",
    "status",
    "final_response",
]
cell = st.one_of(st.text(max_size=10), json_values.map(json.dumps))


@SETTINGS
@given(st.data())
def test_any_cell_in_a_realistic_csv(data: st.DataObject) -> None:
    """Corrupt cells of real rows: each row loads or is one error naming its row; untouched rows load."""
    rows = [csv_row(run) for run in customer_service_runs()[:3]]
    touched: list[bool] = []
    for row in rows:
        columns = data.draw(st.lists(st.sampled_from(COLUMNS), max_size=3, unique=True))
        for column in columns:
            row[column] = data.draw(cell)
        touched.append(bool(columns))
    with tempfile.TemporaryDirectory(dir=".") as tmp:
        loaded = one_per_question(load(write_csv(Path(tmp) / "runs.csv", rows)), [f"row {i}" for i in range(1, len(rows) + 1)])
        assert all(isinstance(item, Record) for item, bad in zip(loaded, touched, strict=True) if not bad), loaded
        lines = [{k: data.draw(json_values) if k in COLUMNS[:3] else v for k, v in row.items()} for row in rows]
        one_per_question(load(write_jsonl(Path(tmp) / "runs.jsonl", lines)), [f"line {i}" for i in range(1, len(rows) + 1)])


@SETTINGS
@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(["name", "span_id", "parent_span_id", "start_time", "end_time", "attributes"]), json_values, max_size=6
        ),
        max_size=5,
    )
)
def test_any_spans(spans: list[Any]) -> None:
    row = {
        "question_id": "q",
        "user_inputs": "hi",
        "session_trace": json.dumps(spans),
        "reference_data": json.dumps({"reference_trajectory": ["a"]}),
    }
    with tempfile.TemporaryDirectory(dir=".") as tmp:
        one_per_question(load(write_csv(Path(tmp) / "r.csv", [row])), ["row 1, column session_trace"])


SPAN_ATTRS = [
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.request.model",
    "gen_ai.agent.name",
    "gen_ai.tool.name",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "gen_ai.tool.call.id",
    "gcp.vertex.agent.llm_response",
    "gcp.vertex.agent.tool_call_args",
    "error.type",
    "gen_ai.operation.name",
]
NAMES = ["invoke_agent a", "generate_content m", "call_llm", "execute_tool t", "agent_run [b]", "invocation", "execute_tool (merged tools)"]


@SETTINGS
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "name": st.sampled_from(NAMES),
                "start_time": json_values,
                "end_time": json_values,
                "attributes": st.dictionaries(st.sampled_from(SPAN_ATTRS), json_values | json_values.map(json.dumps), max_size=6),
            }
        ),
        max_size=6,
    )
)
def test_adk_shaped_spans_with_hostile_attribute_values(spans: list[Any]) -> None:
    """ADK's span names with any attribute values: the run loads (what cannot be read is left out)."""
    row = {
        "question_id": "q",
        "user_inputs": "hi",
        "session_trace": json.dumps(spans),
        "reference_data": json.dumps({"reference_trajectory": ["a"], "reference_tool_interactions": [{"tool_name": "t"}]}),
    }
    with tempfile.TemporaryDirectory(dir=".") as tmp:
        loaded = load(write_csv(Path(tmp) / "r.csv", [row]))
        assert isinstance(loaded, list) and [type(item) for item in loaded] == [Record], loaded


EVENT_KEYS = ["author", "invocationId", "content", "actions", "usageMetadata", "partial", "errorCode", "errorMessage", "modelVersion"]


@SETTINGS
@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(EVENT_KEYS),
            json_values
            | st.fixed_dictionaries(
                {
                    "parts": st.lists(
                        st.dictionaries(
                            st.sampled_from(["text", "functionCall", "functionResponse", "thought"]),
                            json_values
                            | st.fixed_dictionaries({"name": json_values, "args": json_values, "id": json_values, "response": json_values}),
                            max_size=2,
                        ),
                        max_size=3,
                    )
                }
            ),
            max_size=6,
        ),
        max_size=6,
    )
)
def test_adk_shaped_events_with_hostile_values(events: list[Any]) -> None:
    """An ADK session with any event contents: the run loads (what cannot be read is left out)."""
    session = {"id": "s", "appName": "a", "state": {}, "events": events}
    row = {"question_id": "q", "user_inputs": "hi", "final_session_state": json.dumps(session)}
    with tempfile.TemporaryDirectory(dir=".") as tmp:
        loaded = load(write_csv(Path(tmp) / "r.csv", [row]))
        assert isinstance(loaded, list) and [type(item) for item in loaded] == [Record], loaded


@pytest.mark.parametrize(
    ("name", "content", "place"),
    [
        ("latin1.csv", b"question_id,user_inputs\nq1,hi\nq2,caf\xe9\n", "row 2, column user_inputs"),
        ("latin1.jsonl", b'{"question_id": "q1", "user_inputs": "hi"}\n{"question_id": "q2", "user_inputs": "caf\xe9"}\n', "line 2"),
    ],
    ids=["csv", "jsonl"],
)
def test_a_table_with_bytes_that_are_not_utf8_refuses_that_row_naming_the_file(name: str, content: bytes, place: str) -> None:
    path = Path(name)
    path.write_bytes(content)
    loaded = one_per_question(load(path), ["row 1" if name.endswith(".csv") else "line 1", place])
    assert isinstance(loaded[0], Record) and isinstance(loaded[1], DatasetError), loaded
    assert loaded[1].pointer == place and "not UTF-8" in loaded[1].reason and "save the file as UTF-8" in loaded[1].reason


@pytest.mark.parametrize(
    ("content", "places", "refused", "why"),
    [
        # One field too many in the second row: a comma that should have been quoted.
        (
            "question_id,user_inputs\nq1,hi\nq2,hello, there\nq3,bye\n",
            ["row 1", "row 2", "row 3"],
            "row 2",
            "more fields than the header's 2 columns",
        ),
        # The first row wider: pandas would have made its first field an index and shifted the row.
        ("question_id,user_inputs\nq1,hi,stray\nq2,hello\n", ["row 1", "row 2"], "row 1", "more fields than the header's 2 columns"),
        # More fields than can be held: the tokenizer refuses the row, and reading goes on after it.
        (
            "question_id,user_inputs\nq1,hi\nq2," + ",".join("x" * 90) + "\nq3,bye\n",
            ["row 1", "row 2", "row 3"],
            "row 2",
            "the row has 91 fields",
        ),
        # An unclosed quote: the rows before it stand.
        ('question_id,user_inputs\nq1,hi\nq2,"never closed\nq3,bye\n', ["row 1", "row 2"], "row 2", "unclosed quote"),
    ],
    ids=["comma", "first-row", "very-wide", "unclosed-quote"],
)
def test_a_csv_row_the_header_does_not_cover_is_refused_and_the_others_load(
    content: str, places: list[str], refused: str, why: str
) -> None:
    path = Path("runs.csv")
    path.write_text(content, encoding="utf-8")
    loaded = one_per_question(load(path), places)
    errors = [item for item in loaded if isinstance(item, DatasetError)]
    assert [item.pointer for item in errors] == [refused], errors
    assert why in errors[0].reason, errors[0].reason


def test_a_csv_whose_header_was_cut_short_refuses_every_row_saying_so() -> None:
    path = Path("runs.csv")
    path.write_text("question_id\nq1,hi\nq2,hello\n", encoding="utf-8")
    loaded = one_per_question(load(path), ["row 1", "row 2"])
    assert all(isinstance(item, DatasetError) and "a header cut short" in item.reason for item in loaded), loaded


# The command line on broken files beside a valid one.
RUNS = customer_service_runs()
# Columns a metric reads, so a broken cell there is the row's error (README: recorded runs).
# Where a broken file gets a byte that is not UTF-8 (Latin-1's é).
NOT_UTF8 = "<not utf-8>"
READ_COLUMNS = ["user_inputs", "agents_evaluated", "reference_data", "extracted_data", "final_session_state", "question_metadata"]


@dataclass
class Broken:
    """A broken dataset file: where the command line must say it is broken, and the questions
    still scored from it (None: the whole file is refused)."""

    place: str
    scored: set[str] | None


def cut(data: st.DataObject, text: str) -> str:
    """A proper prefix of JSON text: never valid JSON (what a truncated write leaves)."""
    return text[: data.draw(st.integers(1, len(text) - 1))]


def broken_file(data: st.DataObject, stem: Path) -> tuple[str, Broken]:
    """Writes a broken golden file (truncated), table (a cell a metric reads truncated, a byte that
    is not UTF-8, a field past the header) or JSONL file (a line truncated, a byte that is not
    UTF-8) at ``stem`` + its suffix: its name and what the CLI must make of it."""
    kind = data.draw(st.sampled_from([".json", ".csv", ".jsonl"]))
    path = stem.with_suffix(kind)
    if kind == ".json":
        text = cut(data, json.dumps({"golden_questions": data.draw(st.lists(question, max_size=3))}, indent=2))
        path.write_text(text, encoding="utf-8")
        try:
            json.loads(text)
        except json.JSONDecodeError as error:
            return path.name, Broken(f"line {error.lineno}, column {error.colno}", None)
        raise AssertionError(f"{text!r} is valid JSON")
    rows = [csv_row(run) for run in RUNS]
    k = data.draw(st.integers(0, len(rows) - 1))
    others = {run.qid for i, run in enumerate(RUNS) if i != k}
    flaw = data.draw(st.sampled_from(["cut", "bytes", "fields"] if kind == ".csv" else ["cut", "bytes"]))
    if flaw == "bytes":  # a byte that is not UTF-8 (the file was saved as Latin-1 by hand, say)
        rows[k]["final_response"] = f"caf{NOT_UTF8}"
    if kind == ".csv":
        column = "final_response" if flaw == "bytes" else data.draw(st.sampled_from(READ_COLUMNS))
        if flaw == "cut":
            rows[k][column] = cut(data, json.dumps(data.draw(st.lists(json_values, min_size=1) | st.dictionaries(st.text(), json_values))))
        write_csv(path, rows)
        if flaw == "fields":  # a field past the header's last column
            records = path.read_bytes().split(b"\r\n")
            records[k + 1] += b",stray"
            path.write_bytes(b"\r\n".join(records))
        path.write_bytes(path.read_bytes().replace(NOT_UTF8.encode(), b"\xe9"))
        return path.name, Broken(f"row {k + 1}" + ("" if flaw == "fields" else f", column {column}"), others)
    lines = [json.dumps(row) for row in rows]
    if flaw == "cut":
        lines[k] = cut(data, lines[k])
    path.write_bytes("".join(line + "\n" for line in lines).encode().replace(NOT_UTF8.encode(), b"\xe9"))
    return path.name, Broken(f"line {k + 1}", others)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_the_cli_names_each_broken_file_and_the_place_and_scores_the_rest(data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory(dir=".") as tmp:
        work = Path(tmp)
        write_csv(work / "valid.csv", [csv_row(run) for run in RUNS])
        broken = dict(broken_file(data, work / f"broken{i}") for i in range(data.draw(st.integers(1, 3))))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
        done = run_cli(["evaluate", "valid.csv", *broken, "--output-dir", "out"], cwd=work, env={**env, "PYTHONPATH": str(ROOT / "src")})
        assert done.returncode == 2, done.stdout + done.stderr
        assert "Traceback" not in done.stderr
        errors = sorted(line for line in done.stderr.splitlines() if line.startswith("error:"))
        assert len(errors) == len(broken), errors
        for line, (name, b) in zip(errors, sorted(broken.items()), strict=True):
            assert line.startswith(f"error: {name}, ") and f"at {b.place}: " in line, (line, b.place)
        results = json.loads((work / "out" / "results.json").read_text())
        scored = {d["path"]: {q["id"] for q in d["questions"] if q["status"] == "ok"} for d in results["datasets"]}
        assert scored == {"valid.csv": {run.qid for run in RUNS}} | {name: b.scored for name, b in broken.items() if b.scored is not None}
        assert sorted(p["path"] for p in results["problems"]) == sorted(broken)
