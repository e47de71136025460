"""One row of a run table as our models: the question, and its recorded run as a trace (the
session's events, the spans, the extracted calls, the status), told apart from the reading."""

from __future__ import annotations

import re
from typing import Any, Literal, NamedTuple

from agent_eval_action.datasets.fields import reference_data, string_list
from agent_eval_action.datasets.tabular.cells import CONVERT_SPAN, OK_STATUS, SYNTHESIZED_BASE_URL, Cells
from agent_eval_action.datasets.tabular.figures import recorded, timing, turn_scores
from agent_eval_action.models.questions import Question, ToolInteraction, TrajectoryStep
from agent_eval_action.models.traces import SubAgentResponse, Trace
from agent_eval_action.system.errors import DatasetError
from agent_eval_action.text.jsonish import get, loads, opt_str
from agent_eval_action.traces.adk_events import EventFacts, facts_from_events
from agent_eval_action.traces.calls import calls_beyond_events
from agent_eval_action.traces.spans import SpanFacts, facts_from_spans, parse_span, tool_failure


class RowRun(NamedTuple):
    """A row read: its question, its recorded run and session, and the question as the row asks
    it (``asked``): without the user's turns taken from its session, which are what that run's
    user said (ADK's user simulator, in a scenario's runs), not what the question asks."""

    question: Question
    trace: Trace
    session: str | None
    asked: Question


def row_to_run(path: str, where: str, raw: dict[str, Any], warnings: list[str] | None = None) -> RowRun:
    """One row as a question and its recorded run; ``warnings`` collects column warnings.

    A row fails only when a cell that a metric reads is broken; columns no metric needs
    (``metric.*`` lists or text, ``score.*`` text) are kept with one warning per column.
    """
    row = Cells(path, where, raw, warnings)
    qid = row.text("question_id") or row.text("eval_id")
    if not qid:
        raise DatasetError(path, "no question_id or eval_id", pointer=where)
    row.question_id = qid.strip()
    asked = _question(row)
    question, trace = _trace(row, asked)
    return RowRun(question, trace, row.text("session_id"), asked)


def _question(row: Cells) -> Question:
    user_inputs = row.cell("user_inputs")
    user_inputs = [] if user_inputs is None else string_list(row.at("user_inputs"), "", user_inputs, allow_scalar=True)
    agents = row.cell("agents_evaluated")
    if agents is None:
        agents = [row.text("agent_name")] if row.text("agent_name") else []
    agents = string_list(row.at("agents_evaluated"), "", agents, allow_scalar=True)
    reference = row.cell("reference_data")
    metadata = row.typed("question_metadata", dict, "a JSON object") or {}
    return Question(
        id=row.question_id or "",
        user_inputs=user_inputs,
        agents_evaluated=agents,
        metadata=metadata,
        reference_data=reference_data(row.at("reference_data"), "", reference or {}),
    )


def _trace(row: Cells, question: Question) -> tuple[Question, Trace]:
    trace = Trace(app_name=row.text("agent_name") or next(iter(question.agents_evaluated), None))
    extracted = row.typed("extracted_data", dict, "a JSON object") or {}
    final_state, events, session_id = _session(row)
    event_facts = facts_from_events(events, question.initial_state) if events else None
    question = _with_user_inputs(row, question, event_facts)
    span_facts = _spans(row, trace)
    trace.tool_interactions = _tools(row, extracted, event_facts, span_facts, len(question.user_inputs))
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
        beyond = calls_beyond_events(span_facts, event_facts.llm_calls, events or [], session_id or row.text("session_id"))
        trace.llm_calls = event_facts.llm_calls + beyond
    elif span_facts is not None and span_facts.llm_calls is not None:
        trace.llm_calls = span_facts.llm_calls

    timing(row, trace, question, span_facts, event_facts)
    trace.recorded_metrics = recorded(row)
    trace.recorded_turn_scores = turn_scores(row)
    status, message = _status(row)
    if status.lower() == "skipped":
        trace.skipped = row.text("error") or message or "recorded as skipped"
    elif status.lower() not in OK_STATUS:
        trace.error = row.text("error") or message or f"recorded status {status!r}"
    elif event_facts is not None and event_facts.errors:
        trace.error = event_facts.errors[-1]
    return question, trace


def _session(row: Cells) -> tuple[dict[str, Any] | None, list[Any] | None, str | None]:
    """The final state, and the events of the whole run with their session's id, from the session
    objects the state columns may hold (else a state column is the state itself)."""
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
    return final_state, events, session_id


def _with_user_inputs(row: Cells, question: Question, event_facts: EventFacts | None) -> Question:
    """A question without user_inputs gets the user's turns from the session, else none: the seed
    pipeline scores such a row too (its judges see an empty prompt), and the metrics say what
    they cannot score without them."""
    if question.user_inputs:
        return question
    said = [text for text in (event_facts.user_inputs if event_facts is not None else []) if text]
    if said:
        return question.model_copy(update={"user_inputs": said})
    row.warn(f"{row.path}: a row without user_inputs (and no user message in its session) is scored without the user's turns")
    return question


def _spans(row: Cells, trace: Trace) -> SpanFacts | None:
    """The session_trace's spans reduced to the facts metrics use (keeping them all would cost
    memory per row); their statistics on the trace, or why there are none."""
    spans_raw = row.typed("session_trace", list, "a JSON list of spans")
    if not spans_raw:
        return None
    synthesized = (row.text("base_url") or "").strip() == SYNTHESIZED_BASE_URL
    span_facts = facts_from_spans([parse_span(s) for s in spans_raw if isinstance(s, dict)], synthesized=synthesized)
    if all(isinstance(s, dict) and isinstance(s.get("attributes"), dict) and s["attributes"].get(CONVERT_SPAN) is True for s in spans_raw):
        # convert's carriers of the model calls' usage (a run without spans): no span shows anything else.
        trace.missing["spans"] = "no OpenTelemetry spans recorded (convert carried the model calls' usage only)"
    else:
        trace.span_stats = span_facts.stats
    return span_facts


def _tools(
    row: Cells, extracted: dict[str, Any], event_facts: EventFacts | None, span_facts: SpanFacts | None, turns: int
) -> list[ToolInteraction] | None:
    """Tool calls: explicit extraction first (it carries arguments), then the session's events
    (what ADK recorded), then spans (some producers write one span per event, a call twice)."""
    tools = extracted.get("tool_interactions")
    observed = (
        event_facts.tool_interactions if event_facts is not None else span_facts.tool_interactions if span_facts is not None else None
    )
    if tools is not None:
        return _with_errors(_tool_interactions(row, tools), observed, turns)
    return observed


def _status(row: Cells) -> tuple[str, str | None]:
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


def _is_session(value: dict[str, Any]) -> bool:
    return "state" in value and any(k in value for k in ("events", "app_name", "appName", "id", "user_id", "userId"))


def _tool_interactions(row: Cells, value: Any) -> list[ToolInteraction]:
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


def _sub_agents(row: Cells, value: Any) -> list[SubAgentResponse]:
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


def _trajectory(row: Cells, events: Any, spans: Any, tools: list[ToolInteraction] | None) -> tuple[list[TrajectoryStep] | None, str | None]:
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
