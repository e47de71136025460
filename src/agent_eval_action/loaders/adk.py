"""ADK eval data: the old ``*.test.json`` turn lists and the ``EvalSet`` JSON.

An old ``.test.json`` file is one multi-turn conversation (as ADK's AgentEvaluator reads
it); the older ``[{name, data, initial_session}]`` form holds several. An EvalSet's
``final_session_state`` becomes our state reference, which ADK itself never scores.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agent_eval_action.errors import DatasetError
from agent_eval_action.inside import is_inside, outside_reason
from agent_eval_action.jsonish import get
from agent_eval_action.loaders.base import LoadedDataset, Record
from agent_eval_action.loaders.fields import Where, expect_type, tool_calls
from agent_eval_action.models import Question, ReferenceData, ReferenceToolCall


def dataset_stem(path: str) -> str:
    name = os.path.basename(path)
    for suffix in (".evalset_result.json", ".test.json", ".evalset.json", ".json", ".jsonl", ".csv"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return Path(name).stem


def load_test_json(path: str, data: list[Any]) -> LoadedDataset:
    dataset = LoadedDataset(path=path, name="", format="adk_test", records=iter(()))
    dataset.criteria = read_test_config(path, dataset.warnings)
    if data and all(isinstance(item, dict) and "data" in item for item in data):
        cases = [
            (str(item.get("name") or f"case_{i}"), item.get("data"), f"$[{i}].data", item.get("initial_session"))
            for i, item in enumerate(data)
        ]
    else:
        cases = [(dataset_stem(path), data, "$", None)]
    dataset.records = _test_records(path, cases)
    return dataset


def _test_records(path: str, cases: list[tuple[str, Any, str, Any]]) -> Iterator[Record | DatasetError]:
    seen: set[str] = set()
    for qid, turns, pointer, session in cases:
        try:
            if qid in seen:
                raise DatasetError(path, "duplicate case name", question_id=qid, pointer=pointer)
            seen.add(qid)
            yield Record(question=_test_case(path, qid, turns, pointer, session))
        except DatasetError as error:
            yield error


def _test_case(path: str, qid: str, turns: Any, pointer: str, session: Any) -> Question:
    where = Where(path, qid, prefix="")
    expect_type(where, pointer, turns, list, "a list of turns")
    if not turns:
        raise where.error(pointer, "needs at least one turn")
    inputs: list[str] = []
    calls: list[ReferenceToolCall] = []
    references: list[str | None] = []
    for i, turn in enumerate(turns):
        sub = f"{pointer}[{i}]"
        expect_type(where, sub, turn, dict, "an object with a query")
        query = turn.get("query")
        if not isinstance(query, str):
            raise where.error(f"{sub}.query", "missing or not a string")
        inputs.append(query)
        calls.extend(tool_calls(where, f"{sub}.expected_tool_use", turn.get("expected_tool_use") or []))
        reference = turn.get("reference")
        references.append(reference if isinstance(reference, str) and reference.strip() else None)
    state = get(session, "state") if isinstance(session, dict) else None
    return Question(
        id=qid,
        user_inputs=inputs,
        agents_evaluated=[str(get(session, "app_name"))] if isinstance(session, dict) and get(session, "app_name") else [],
        reference_data=ReferenceData(
            reference_tool_interactions=calls,
            reference_response=references[-1],
            turn_references=references,
        ),
        initial_state=state if isinstance(state, dict) else {},
    )


def read_test_config(path: str, warnings: list[str]) -> dict[str, float]:
    """Numeric thresholds from the ``test_config.json`` beside an ADK eval file, if any."""
    config = Path(path).parent / "test_config.json"
    if not config.is_file():
        return {}
    if not is_inside(config):
        warnings.append(f"{config}: {outside_reason()}; its criteria are ignored")
        return {}
    try:
        criteria = json.loads(config.read_text(encoding="utf-8")).get("criteria", {})
    except (ValueError, AttributeError, OSError) as error:
        warnings.append(f"{config}: unreadable ({error}); its criteria are ignored")
        return {}
    out: dict[str, float] = {}
    for name, value in criteria.items() if isinstance(criteria, dict) else ():
        threshold = value.get("threshold") if isinstance(value, dict) else value
        if isinstance(threshold, int | float) and not isinstance(threshold, bool):
            out[name] = float(threshold)
    return out


def load_eval_set(path: str, data: dict[str, Any]) -> LoadedDataset:
    where = Where(path)
    cases = get(data, "eval_cases")
    expect_type(where, ".eval_cases", cases, list, "a list of eval cases")
    dataset = LoadedDataset(path=path, name=str(get(data, "name") or ""), format="adk_evalset", records=iter(()))
    dataset.criteria = read_test_config(path, dataset.warnings)
    dataset.records = _eval_records(path, cases)
    return dataset


def _eval_records(path: str, cases: list[Any]) -> Iterator[Record | DatasetError]:
    seen: set[str] = set()
    for i, case in enumerate(cases):
        try:
            question = _eval_case(path, i, case)
            if question.id in seen:
                raise DatasetError(path, "duplicate eval_id", question_id=question.id, pointer=f"$.eval_cases[{i}].eval_id")
            seen.add(question.id)
            yield Record(question=question)
        except DatasetError as error:
            yield error


def _content_text(content: Any) -> str | None:
    parts = get(content, "parts") or []
    texts = [str(p["text"]) for p in parts if isinstance(p, dict) and p.get("text") and not p.get("thought")]
    return "".join(texts) if texts else None


def _eval_case(path: str, index: int, case: Any) -> Question:
    pointer = f"$.eval_cases[{index}]"
    where = Where(path, prefix="")
    expect_type(where, pointer, case, dict, "an object")
    qid = get(case, "eval_id")
    if not isinstance(qid, str) or not qid:
        raise where.error(f"{pointer}.eval_id", "missing or not a string")
    where = Where(path, qid, prefix="")
    conversation = get(case, "conversation")
    if conversation is None:
        if get(case, "conversation_scenario") is not None:
            raise where.error(
                f"{pointer}.conversation_scenario", "simulated-user scenarios are not supported yet; give a static conversation"
            )
        raise where.error(f"{pointer}.conversation", "required field is missing")
    expect_type(where, f"{pointer}.conversation", conversation, list, "a list of invocations")
    inputs: list[str] = []
    calls: list[ReferenceToolCall] = []
    references: list[str | None] = []
    for j, invocation in enumerate(conversation):
        sub = f"{pointer}.conversation[{j}]"
        expect_type(where, sub, invocation, dict, "an invocation object")
        text = _content_text(get(invocation, "user_content"))
        if text is None:
            raise where.error(f"{sub}.user_content", "needs a text part")
        inputs.append(text)
        references.append(_content_text(get(invocation, "final_response")))
        calls.extend(_expected_calls(get(invocation, "intermediate_data")))
    session = get(case, "session_input") or {}
    state = get(session, "state") if isinstance(session, dict) else None
    expected_state = get(case, "final_session_state")
    app = get(session, "app_name") if isinstance(session, dict) else None
    return Question(
        id=qid,
        user_inputs=inputs,
        agents_evaluated=[str(app)] if app else [],
        reference_data=ReferenceData(
            reference_tool_interactions=calls,
            reference_response=references[-1] if references else None,
            turn_references=references,
            reference_state_variables=expected_state if isinstance(expected_state, dict) and expected_state else None,
        ),
        initial_state=state if isinstance(state, dict) else {},
    )


def _expected_calls(intermediate: Any) -> list[ReferenceToolCall]:
    if not isinstance(intermediate, dict):
        return []
    calls = get(intermediate, "tool_uses")
    if calls is None:  # InvocationEvents form
        calls = []
        for event in get(intermediate, "invocation_events") or []:
            for part in get(get(event, "content"), "parts") or []:
                call = get(part, "function_call") if isinstance(part, dict) else None
                if isinstance(call, dict):
                    calls.append(call)
    out = []
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict) and call.get("name"):
            args = call.get("args") or {}
            out.append(ReferenceToolCall(tool_name=str(call["name"]), input_arguments=args if isinstance(args, dict) else {}))
    return out


def load_eval_history(path: str, data: dict[str, Any]) -> LoadedDataset:
    """ADK eval history (``.adk/eval_history/*.evalset_result.json``): recorded runs with their references.

    The expected invocations give the references, the session (or else the actual
    invocations) gives the trace.
    """
    where = Where(path)
    cases = get(data, "eval_case_results")
    expect_type(where, ".eval_case_results", cases, list, "a list of eval case results")
    dataset = LoadedDataset(path=path, name=str(get(data, "eval_set_id") or ""), format="adk_history", records=iter(()))
    dataset.records = _history_records(path, cases)
    return dataset


def _history_records(path: str, cases: list[Any]) -> Iterator[Record | DatasetError]:
    from agent_eval_action.adk_events import trace_from_run

    runs: dict[str, int] = {}
    for i, case in enumerate(cases):
        pointer = f"$.eval_case_results[{i}]"
        try:
            expect_type(Where(path, prefix=""), pointer, case, dict, "an object")
            qid = get(case, "eval_id")
            if not isinstance(qid, str) or not qid:
                raise DatasetError(path, "missing eval_id", pointer=f"{pointer}.eval_id")
            per_invocation = get(case, "eval_metric_result_per_invocation") or []
            actual = [get(item, "actual_invocation") for item in per_invocation if isinstance(item, dict)]
            expected = [get(item, "expected_invocation") for item in per_invocation if isinstance(item, dict)]
            inputs = [_content_text(get(inv, "user_content")) or "" for inv in actual]
            references = [_content_text(get(inv, "final_response")) if isinstance(inv, dict) else None for inv in expected]
            calls = [call for inv in expected if isinstance(inv, dict) for call in _expected_calls(get(inv, "intermediate_data"))]
            question = Question(
                id=qid,
                user_inputs=inputs,
                agents_evaluated=[],
                reference_data=ReferenceData(
                    reference_tool_interactions=calls if any(isinstance(inv, dict) for inv in expected) else None,
                    reference_response=next((r for r in reversed(references) if r), None),
                    turn_references=references if any(references) else None,
                ),
            )
            session = get(case, "session_details")
            events = get(session, "events") if isinstance(session, dict) else None
            if not events:
                events = _invocation_events(actual)
            state = get(session, "state") if isinstance(session, dict) else None
            times = [(0.0, float(get(inv, "duration"))) for inv in actual if isinstance(get(inv, "duration"), int | float)]
            trace = trace_from_run(
                question,
                events,
                final_state=state if isinstance(state, dict) else None,
                turn_times=times if len(times) == len(actual) else [],
                app_name=get(session, "app_name") if isinstance(session, dict) else None,
                models={},
            )
            if get(case, "final_eval_status") in (3, "NOT_EVALUATED") and not events:
                trace.error = "ADK did not evaluate this case"
            run = runs.get(qid, -1) + 1
            runs[qid] = run
            yield Record(question=question, trace=trace, run=run)
        except DatasetError as error:
            yield error


def _invocation_events(invocations: list[Any]) -> list[dict[str, Any]]:
    """Events rebuilt from actual invocations (ADK writes either intermediate data or events)."""
    events: list[dict[str, Any]] = []
    for n, inv in enumerate(invocations):
        if not isinstance(inv, dict):
            continue
        invocation_id = f"inv-{n}"
        events.append({"author": "user", "invocation_id": invocation_id, "content": get(inv, "user_content")})
        data = get(inv, "intermediate_data") or {}
        author = str((get(inv, "app_details") or {}).get("name") or "agent") if isinstance(get(inv, "app_details"), dict) else "agent"
        for event in get(data, "invocation_events") or []:
            if isinstance(event, dict):
                events.append({**event, "invocation_id": invocation_id})
        for call in get(data, "tool_uses") or []:
            events.append({"author": author, "invocation_id": invocation_id, "content": {"parts": [{"function_call": call}]}})
        for response in get(data, "tool_responses") or []:
            events.append({"author": author, "invocation_id": invocation_id, "content": {"parts": [{"function_response": response}]}})
        final = get(inv, "final_response")
        if final:
            events.append({"author": author, "invocation_id": invocation_id, "content": final})
    return events
