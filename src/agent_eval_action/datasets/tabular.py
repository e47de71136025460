"""Simulation / processed runs: CSV (pandas, streamed in chunks) and the same rows as JSONL.

One row is one recorded run of one question. List and dict cells are JSON strings in CSV
and may be native JSON in JSONL. Any column may be missing or empty: we use what is there
and the metrics say what could not be scored.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from agent_eval_action.core.errors import DatasetError
from agent_eval_action.core.jsonish import LONE_SURROGATES, NOT_FINITE, TooDeep, get, loads, opt_str, parse_cell
from agent_eval_action.core.models import (
    LlmCall,
    Question,
    SubAgentResponse,
    ToolInteraction,
    Trace,
    TrajectoryStep,
    Turn,
)
from agent_eval_action.core.spelling import did_you_mean
from agent_eval_action.datasets.base import LoadedDataset, RawBatch, Record, Row, RunResolver, question_content
from agent_eval_action.datasets.fields import Where, reference_data, string_list
from agent_eval_action.traces.adk_events import facts_from_events
from agent_eval_action.traces.spans import SpanFacts, facts_from_spans, parse_span, tool_failure

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

    _attach(dataset, batches)
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


def _read_csv(path: str, names: list[str], *, skip: int, chunk_rows: int) -> Iterator[tuple[str, ...]]:
    import warnings

    import pandas as pd

    # The header row is skipped and named again with the overflow column. No usecols (to skip the
    # columns no metric reads): pandas then drops extra fields unsaid, and refuses names longer
    # than the rows. Blank rows are kept so that ``skiprows`` and our count agree on where a row is.
    with pd.read_csv(
        path,
        header=None,
        skiprows=skip,
        names=names,
        index_col=False,
        dtype=str,
        keep_default_na=False,
        skip_blank_lines=False,
        chunksize=chunk_rows,
        engine="c",
        encoding_errors="surrogateescape",
    ) as reader:
        # A first row wider than the names makes pandas warn that it cuts it: the row is refused
        # for that anyway. (No yield inside: the filter must not outlive this statement.)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pd.errors.ParserWarning)
            first = next(reader, None)
        for chunk in itertools.chain([] if first is None else [first], reader):
            # itertuples skips the per-cell boxing that to_dict("records") does.
            yield from chunk.itertuples(index=False, name=None)


def _until_refused(path: str, names: list[str], *, skip: int) -> tuple[list[tuple[str, ...]], Exception | None]:
    """Up to a chunk's rows read one at a time from ``skip`` on, and the error that stopped them."""
    import pandas as pd

    rows: list[tuple[str, ...]] = []
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


def _cells(columns: list[str], values: tuple[str, ...], width: int) -> dict[str, str] | BadRow:
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
    dataset.batches = batches


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
            question, trace, session = row_to_run(path, pointer, row, warnings)
        except DatasetError as error:
            out.append(Row(number=number, pointer=pointer, session=None, item=error))
            continue
        out.append(Row(number=number, pointer=pointer, session=session, item=Record(question=question, trace=trace)))
    return out, warnings


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
        run = resolver.admit(row.item.question.id, row.session, row.pointer, question_content(row.item.question))
        if isinstance(run, DatasetError):
            yield run
        else:
            row.item.run = run
            yield row.item
    yield from resolver.uneven()


class _Row:
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

    def text(self, column: str) -> str | None:
        value = self.row.get(column)
        if value is None or (isinstance(value, float) and value != value):
            return None
        text = value if isinstance(value, str) else json.dumps(value)
        return text if text.strip() else None


def row_to_run(path: str, where: str, raw: dict[str, Any], warnings: list[str] | None = None) -> tuple[Question, Trace, str | None]:
    """One row as a question and its recorded run; ``warnings`` collects column warnings.

    A row fails only when a cell that a metric reads is broken; columns no metric needs
    (``metric.*`` lists or text, ``score.*`` text) are kept with one warning per column.
    """
    row = _Row(path, where, raw, warnings)
    qid = row.text("question_id") or row.text("eval_id")
    if not qid:
        raise DatasetError(path, "no question_id or eval_id", pointer=where)
    row.question_id = qid.strip()
    question = _question(row)
    question, trace = _trace(row, question)
    return question, trace, row.text("session_id")


def _question(row: _Row) -> Question:
    user_inputs = row.cell("user_inputs")
    user_inputs = [] if user_inputs is None else string_list(_where(row, "user_inputs"), "", user_inputs, allow_scalar=True)
    agents = row.cell("agents_evaluated")
    if agents is None:
        agents = [row.text("agent_name")] if row.text("agent_name") else []
    agents = string_list(_where(row, "agents_evaluated"), "", agents, allow_scalar=True)
    reference = row.cell("reference_data")
    metadata = row.typed("question_metadata", dict, "a JSON object") or {}
    return Question(
        id=row.question_id or "",
        user_inputs=user_inputs,
        agents_evaluated=agents,
        metadata=metadata,
        reference_data=reference_data(_where(row, "reference_data"), "", reference or {}),
    )


def _where(row: _Row, column: str) -> Where:
    return Where(row.path, row.question_id, prefix=f"{row.where}, column {column}: $")


def _trace(row: _Row, question: Question) -> tuple[Question, Trace]:
    trace = Trace(app_name=row.text("agent_name") or next(iter(question.agents_evaluated), None))
    extracted = row.typed("extracted_data", dict, "a JSON object") or {}
    initial_state = question.initial_state

    # Session objects may carry the events of the whole run.
    final_state: dict[str, Any] | None = None
    events: list[Any] | None = None
    session_id: str | None = None  # the id of the session the events are of
    for column in ("final_session_state", "session_state"):
        value = row.typed(column, dict, "a JSON object")
        if value is None:
            continue
        if _is_session(value):
            if final_state is None and isinstance(get(value, "state"), dict):
                final_state = get(value, "state")
            if events is None and isinstance(get(value, "events"), list) and get(value, "events"):
                events = get(value, "events")
                session_id = opt_str(get(value, "id"))
        elif final_state is None:
            final_state = value
    event_facts = facts_from_events(events, initial_state) if events else None
    if not question.user_inputs:
        # The user's turns from the session, else none: the seed pipeline scores such a row too
        # (its judges see an empty prompt), and the metrics say what they cannot score without them.
        said = [text for text in (event_facts.user_inputs if event_facts is not None else []) if text]
        if said:
            question = question.model_copy(update={"user_inputs": said})
        else:
            row.warn(f"{row.path}: a row without user_inputs (and no user message in its session) is scored without the user's turns")

    spans_raw = row.typed("session_trace", list, "a JSON list of spans")
    span_facts = None
    if spans_raw:
        # The spans are reduced to the facts metrics use; keeping them all would cost memory per row.
        synthesized = (row.text("base_url") or "").strip() == SYNTHESIZED_BASE_URL
        span_facts = facts_from_spans([parse_span(s) for s in spans_raw if isinstance(s, dict)], synthesized=synthesized)
        if all(
            isinstance(s, dict) and isinstance(s.get("attributes"), dict) and s["attributes"].get(CONVERT_SPAN) is True for s in spans_raw
        ):
            # convert's carriers of the model calls' usage (a run without spans): no span shows anything else.
            trace.missing["spans"] = "no OpenTelemetry spans recorded (convert carried the model calls' usage only)"
        else:
            trace.span_stats = span_facts.stats

    # Tool calls: explicit extraction first (it carries arguments), then the session's events
    # (what ADK recorded), then spans (some producers write one span per event, a call twice).
    tools = extracted.get("tool_interactions")
    observed = (
        event_facts.tool_interactions if event_facts is not None else span_facts.tool_interactions if span_facts is not None else None
    )
    if tools is not None:
        trace.tool_interactions = _with_errors(_tool_interactions(row, tools), observed, len(question.user_inputs))
    elif event_facts is not None:
        trace.tool_interactions = event_facts.tool_interactions
    elif span_facts is not None:
        trace.tool_interactions = span_facts.tool_interactions

    trace.trajectory, trace.root_agent = _trajectory(row, event_facts, span_facts, trace.tool_interactions)

    subs = row.cell("sub_agent_trace") or extracted.get("sub_agent_trace")
    if subs:
        trace.sub_agent_trace = _sub_agents(row, subs)
    elif event_facts is not None:
        trace.sub_agent_trace = event_facts.sub_agent_trace

    trace.final_response = row.text("final_response") or (event_facts.final_response if event_facts else None)
    if final_state is None and event_facts is not None:
        final_state = event_facts.state
    if final_state is None and isinstance(extracted.get("state_variables"), dict):
        final_state = extracted["state_variables"]
    trace.final_state = final_state

    if event_facts is not None and event_facts.llm_calls:
        trace.llm_calls = event_facts.llm_calls + _calls_beyond_events(span_facts, events or [], session_id or row.text("session_id"))
    elif span_facts is not None and span_facts.llm_calls is not None:
        trace.llm_calls = span_facts.llm_calls

    _timing(row, trace, question, span_facts, event_facts)
    trace.recorded_metrics = _recorded(row)
    trace.recorded_turn_scores = _turn_scores(row)
    status, message = _status(row)
    if status.lower() == "skipped":
        trace.skipped = row.text("error") or message or "recorded as skipped"
    elif status.lower() not in OK_STATUS:
        trace.error = row.text("error") or message or f"recorded status {status!r}"
    elif event_facts is not None and event_facts.errors:
        trace.error = event_facts.errors[-1]
    return question, trace


def _status(row: _Row) -> tuple[str, str | None]:
    """The row's status word and the error message it carries. The seed pipeline writes
    ``{"boolean": "success"}`` or ``{"boolean": "failed", "error_message": ...}``: as JSON text
    (its interactions step), an object (JSONL) or Python's repr of one (a CSV written by pandas)."""
    value = row.row.get("status")
    if isinstance(value, str) and value.strip().startswith("{"):
        for text in (value, value.replace("'", '"')):
            try:
                value = loads(text)[0]
                break
            except ValueError:
                continue
    if isinstance(value, dict):
        message = value.get("error_message") or value.get("error")
        said = str(message) if message else None
        for key in ("boolean", "status", "state", "value"):
            word = value.get(key)
            if isinstance(word, str):
                return word.strip(), said
        if isinstance(value.get("boolean"), bool):  # {"boolean": true}: it succeeded
            return ("success" if value["boolean"] else "failed"), said
    return (row.text("status") or "").strip(), None


def _calls_beyond_events(spans: SpanFacts | None, events: list[Any], session: str | None) -> list[LlmCall]:
    """Model calls the spans show and the session's events do not: an AgentTool runs its agent in
    a session of its own, so its calls are only in the spans. A span's call is beyond the events
    when the event it wrote is not among them, or (no event id recorded) its session is another."""
    if spans is None or not spans.llm_calls or not spans.llm_call_origins:
        return []
    ids = {str(get(event, "id")) for event in events if isinstance(event, dict) and get(event, "id")}
    out = []
    for call, (event_id, span_session) in zip(spans.llm_calls, spans.llm_call_origins, strict=True):
        if (event_id is not None and ids and event_id not in ids) or (
            event_id is None and span_session and session and span_session != session
        ):
            out.append(call)
    return out


def _is_session(value: dict[str, Any]) -> bool:
    return "state" in value and any(k in value for k in ("events", "app_name", "appName", "id", "user_id", "userId"))


def _tool_interactions(row: _Row, value: Any) -> list[ToolInteraction]:
    if not isinstance(value, list):
        raise row.error("extracted_data", "tool_interactions must be a list")
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, dict) or not isinstance(item.get("tool_name"), str):
            raise row.error("extracted_data", f"tool_interactions[{i}] needs a tool_name")
        args = item.get("input_arguments") or {}
        if not isinstance(args, dict):
            raise row.error("extracted_data", f"tool_interactions[{i}].input_arguments must be an object")
        error = item.get("error")
        turn = item.get("turn")
        out.append(
            ToolInteraction(
                tool_name=item["tool_name"],
                input_arguments=args,
                output_result=item.get("output_result"),
                agent=item.get("agent"),
                error=str(error) if error else None,
                call_id=str(item["call_id"]) if item.get("call_id") is not None else None,
                turn=turn if isinstance(turn, int) and not isinstance(turn, bool) and turn >= 0 else None,
            )
        )
    return out


def _with_errors(extracted: list[ToolInteraction], observed: list[ToolInteraction] | None, turns: int) -> list[ToolInteraction]:
    """Extracted calls carry no error field and no turn: take them from the spans or events where they agree.

    Pairs by call id where both have one, else by position when the tool names line up. In a
    one-turn conversation every call belongs to that turn.
    """
    out = []
    by_id = {call.call_id: call for call in observed or [] if call.call_id}
    aligned = observed if observed is not None and [c.tool_name for c in observed] == [c.tool_name for c in extracted] else None
    for index, call in enumerate(extracted):
        error = call.error or tool_failure(call.output_result)
        twin = by_id.get(call.call_id) if call.call_id else None
        if twin is None and aligned is not None:
            twin = aligned[index]
        if error is None and twin is not None:
            error = twin.error
        turn = call.turn
        if turn is None and twin is not None:
            turn = twin.turn
        if turn is None and turns == 1:
            turn = 0
        if error != call.error or turn != call.turn:
            call = call.model_copy(update={"error": error, "turn": turn})
        out.append(call)
    return out


def _sub_agents(row: _Row, value: Any) -> list[SubAgentResponse]:
    if not isinstance(value, list):
        raise row.error("sub_agent_trace", "expected a JSON list of {name, text}")
    out = []
    for item in value:
        if isinstance(item, dict):
            name = item.get("agent_name", item.get("name", item.get("author")))
            text = item.get("text_response", item.get("text", item.get("response")))
            if name is not None:
                out.append(SubAgentResponse(agent_name=str(name), text_response="" if text is None else str(text)))
    return out


_STEP = re.compile(r"^\s*(agent|tool)\s*:\s*(.+?)\s*$", re.IGNORECASE)
_TOOL_LINE = re.compile(r"(?:tool[ _]?call|function[ _]?call|calling tool|tool)\s*[:=]?\s*`?([A-Za-z_][\w.]*)`?\s*\(", re.IGNORECASE)
_AUTHOR_LINE = re.compile(r"^\s*\[?([A-Za-z_][\w\-]*)\]?\s*:")
_NOT_AGENTS = {"user", "human", "system", "tool", "function", "tool_call", "function_call", "tool_response", "function_response"}


def _trajectory(row: _Row, events: Any, spans: Any, tools: list[ToolInteraction] | None) -> tuple[list[TrajectoryStep] | None, str | None]:
    # The session's events name the agents that answered; producers' spans may name the app instead.
    for facts in (events, spans):
        if facts is not None and facts.trajectory:
            return facts.trajectory, facts.root_agent
    try:
        summary = row.cell("trace_summary")
    except DatasetError:  # a transcript that happens to start with "[" or "{"
        summary = row.text("trace_summary")
    steps: list[TrajectoryStep] = []
    if isinstance(summary, list):
        for item in summary:
            text = str(item.get("name", "")) if isinstance(item, dict) else str(item)
            match = _STEP.match(text)
            kind: Literal["agent", "tool"] = "tool" if match and match.group(1).lower() == "tool" else "agent"
            step = TrajectoryStep(kind=kind, name=match.group(2) if match else text.strip())
            if step.name:
                steps.append(step)
    elif isinstance(summary, str):
        steps = _transcript_steps(summary)
    if steps:
        root = next((s.name for s in steps if s.kind == "agent"), None)
        return steps, root
    if tools is not None:
        return [TrajectoryStep(kind="tool", name=t.tool_name) for t in tools], None
    return None, None


def _transcript_steps(text: str) -> list[TrajectoryStep]:
    """Agent and tool steps from a plain-text transcript (``agent_name: ...`` lines, tool call lines)."""
    steps: list[TrajectoryStep] = []
    last_agent = None
    for line in text.splitlines():
        tool = _TOOL_LINE.search(line)
        author = _AUTHOR_LINE.match(line)
        if author and author.group(1).lower() not in _NOT_AGENTS and author.group(1) != last_agent:
            last_agent = author.group(1)
            steps.append(TrajectoryStep(kind="agent", name=last_agent))
        if tool:
            steps.append(TrajectoryStep(kind="tool", name=tool.group(1)))
    return steps


def _latency_tree(value: Any) -> float | None:
    if isinstance(value, dict):
        for key in ("duration_seconds", "total_duration_seconds", "duration_sec"):
            if isinstance(value.get(key), int | float):
                return _number(value[key])
        children = value.get("children") or value.get("spans")
        return _latency_tree(children) if children else None
    if isinstance(value, list):
        parts = [_latency_tree(item) for item in value]
        known = [p for p in parts if p is not None]
        return sum(known) if known else None
    return None


def _timing(row: _Row, trace: Trace, question: Question, spans: Any, events: Any) -> None:
    turn_responses = events.turn_responses if events is not None else []
    turn_parts = events.turn_response_parts if events is not None else []
    durations = spans.turn_durations if spans is not None else []
    starts = spans.turn_starts if spans is not None else []
    count = max(len(question.user_inputs), len(durations), len(turn_responses))
    trace.turns = [
        Turn(
            user_input=question.user_inputs[i] if i < len(question.user_inputs) else None,
            response=turn_responses[i] if i < len(turn_responses) else None,
            response_parts=turn_parts[i] if i < len(turn_parts) else None,
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
        seconds = [s for s in map(_number, turns) if s is not None and math.isfinite(s)]
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
    seconds = [_number(item.get("duration_seconds")) for item in value if isinstance(item, dict) and item.get("name") == "invocation"]
    return [s for s in seconds if s is not None and math.isfinite(s)]


def _recorded(row: _Row) -> dict[str, float]:
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
        number = _number(value)
        if number is not None and math.isinf(number):
            raise row.error(column, NOT_FINITE.format(value=value if isinstance(value, str) else _shown(value)))
        if number is None:
            from agent_eval_action.metrics.registry import recorded_unit  # only for a cell that is no number

            # A list counts its items, except in a column of times (the registry says which it reads so).
            counted = column.startswith("metric.") and recorded_unit(column.removeprefix("metric.")) != "seconds"
            # One message per column, whatever mix of cells it holds.
            row.warn(
                f"{row.path}: column {column!r} holds values that are not numbers: "
                + ("a list counts as its number of items, other values are left out" if counted else "they are left out")
            )
            items = _list(value) if counted else None
            if items is None:
                continue
            number = float(len(items))
        if number == number:  # NaN: not measured, so not scored
            out[column.removeprefix("metric.").removeprefix("adk_")] = number
    return out


def _turn_scores(row: _Row) -> dict[str, list[float | None]]:
    """The ``turn_scores`` column: ``{metric: [score or null per invocation]}``, as convert writes an
    ADK eval history's per-invocation scores. Only ``adk_agreement`` reads it, so a cell of another
    shape is left out with one warning, never failing the row."""
    value = row.cell("turn_scores")
    if value is None:
        return {}
    out: dict[str, list[float | None]] = {}
    if isinstance(value, dict):
        for name, scores in value.items():
            numbers = [None if s is None else _number(s) for s in scores] if isinstance(scores, list) else None
            if numbers is None or any(n is None and s is not None for n, s in zip(numbers, scores, strict=True)):
                break
            if any(n is not None and not math.isfinite(n) for n in numbers):
                break
            out[name] = numbers
        else:
            return {name: scores for name, scores in out.items() if any(s is not None for s in scores)}
    row.warn(f"{row.path}: column 'turn_scores' holds values that are not {{metric: [score or null, ...]}}: they are left out")
    return {}


def _shown(value: int | float) -> str:
    """A native JSON number as it was written: ``Infinity``, not Python's ``inf``."""
    if isinstance(value, int):
        return f"an integer of {len(str(abs(value)))} digits"
    return json.dumps(value)


def _number(value: Any) -> float | None:
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


def _list(value: Any) -> list[Any] | None:
    if isinstance(value, list):
        return value
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            parsed = loads(value)[0]
        except ValueError:
            return None
        return parsed if isinstance(parsed, list) else None
    return None
