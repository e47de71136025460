"""ADK's eval files without runs: the old ``*.test.json`` turn lists and the ``EvalSet`` JSON.

An old ``.test.json`` file is one multi-turn conversation (as ADK's AgentEvaluator reads
it); the older ``[{name, data, initial_session}]`` form holds several. An EvalSet's
``final_session_state`` becomes our state reference, which ADK itself never scores. An eval
case with a ``conversation_scenario`` is run with ADK's user simulator. Eval cases are
checked against the pinned ADK's own schema: what ADK refuses is refused here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agent_eval_action.datasets.adk.config import dataset_stem, read_test_config, use_config
from agent_eval_action.datasets.adk.schema import eval_case_model, validate
from agent_eval_action.datasets.base import LoadedDataset, Record
from agent_eval_action.datasets.fields import Where, expect_type, tool_calls
from agent_eval_action.models.questions import Question, ReferenceData, ReferenceToolCall
from agent_eval_action.system.errors import DatasetError
from agent_eval_action.text.jsonish import get
from agent_eval_action.text.spelling import closest

# Where a question keeps ADK's rubrics (its metadata): the eval case's, and each turn's.
RUBRICS, TURN_RUBRICS = "adk_rubrics", "adk_turn_rubrics"
TEST_TURN_KEYS = ("query", "expected_tool_use", "reference", "expected_intermediate_agent_responses")


def load_test_json(path: str, data: list[Any]) -> LoadedDataset:
    dataset = LoadedDataset(path=path, name="", format="adk_test", records=iter(()))
    use_config(dataset, read_test_config(path, dataset.warnings))
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
    per_turn: list[list[ReferenceToolCall]] = []
    references: list[str | None] = []
    for i, turn in enumerate(turns):
        sub = f"{pointer}[{i}]"
        expect_type(where, sub, turn, dict, "an object with a query")
        for key in turn:
            near = closest(key, TEST_TURN_KEYS) if key not in TEST_TURN_KEYS else None
            if near is not None:  # `refrence`: the turn's expected answer would be lost unsaid
                raise where.error(f"{sub}.{key}", f"unknown key {key!r} (did you mean `{near}`?)")
        query = turn.get("query")
        if not isinstance(query, str) or not query.strip():
            raise where.error(f"{sub}.query", "missing or not a non-empty string")
        inputs.append(query)
        per_turn.append(tool_calls(where, f"{sub}.expected_tool_use", turn.get("expected_tool_use") or []))
        reference = turn.get("reference")
        references.append(reference if isinstance(reference, str) and reference.strip() else None)
    state = get(session, "state") if isinstance(session, dict) else None
    return Question(
        id=qid,
        user_inputs=inputs,
        agents_evaluated=[str(get(session, "app_name"))] if isinstance(session, dict) and get(session, "app_name") else [],
        reference_data=ReferenceData(
            reference_tool_interactions=[call for calls in per_turn for call in calls],
            reference_response=references[-1],
            turn_references=references,
            turn_tool_calls=per_turn,
        ),
        initial_state=state if isinstance(state, dict) else {},
    )


def load_eval_set(path: str, data: dict[str, Any]) -> LoadedDataset:
    where = Where(path)
    cases = get(data, "eval_cases")
    expect_type(where, ".eval_cases", cases, list, "a list of eval cases")
    dataset = LoadedDataset(path=path, name=str(get(data, "name") or ""), format="adk_evalset", records=iter(()))
    config = read_test_config(path, dataset.warnings)
    use_config(dataset, config)
    simulator = dict(config.user_simulator)
    # Some projects keep the simulator's settings in the eval set itself ({"user_simulator":
    # {"user_simulator_config": {...}}}); ADK's EvalSet ignores the key, the scenarios here use it.
    own = get(get(data, "user_simulator"), "user_simulator_config")
    if isinstance(own, dict):
        simulator.update(own)
        dataset.warnings.append(
            f"{path}: 'user_simulator' is not part of ADK's EvalSet (ADK ignores it); its user_simulator_config is used "
            "for this file's conversation scenarios"
        )
    dataset.records = _eval_records(path, cases, simulator)
    return dataset


def _eval_records(path: str, cases: list[Any], simulator: dict[str, Any]) -> Iterator[Record | DatasetError]:
    seen: set[str] = set()
    for i, case in enumerate(cases):
        try:
            question = _eval_case(path, i, case, simulator)
            if question.id in seen:
                raise DatasetError(path, "duplicate eval_id", question_id=question.id, pointer=f"$.eval_cases[{i}].eval_id")
            seen.add(question.id)
            yield Record(question=question)
        except DatasetError as error:
            yield error


def content_text(content: Any) -> str | None:
    """The user's text of a genai Content (thoughts left out)."""
    parts = get(content, "parts") or []
    texts = [str(p["text"]) for p in parts if isinstance(p, dict) and p.get("text") and not p.get("thought")]
    return "".join(texts) if texts else None


def reference_text(content: Any) -> str | None:
    """A response's text as ADK's eval reads it: every part with text, joined by newlines."""
    parts = get(content, "parts") or []
    texts = [str(p["text"]) for p in parts if isinstance(p, dict) and p.get("text")]
    return "\n".join(texts) if texts else None


def _eval_case(path: str, index: int, case: Any, simulator: dict[str, Any]) -> Question:
    pointer = f"$.eval_cases[{index}]"
    where = Where(path, prefix="")
    expect_type(where, pointer, case, dict, "an object")
    qid = get(case, "eval_id")
    if not isinstance(qid, str) or not qid:
        raise where.error(f"{pointer}.eval_id", "missing or not a string")
    where = Where(path, qid, prefix="")
    conversation = get(case, "conversation")
    scenario = get(case, "conversation_scenario")
    if conversation is None and scenario is None:
        raise where.error(f"{pointer}.conversation", "required field is missing (or give a conversation_scenario)")
    if conversation is not None:
        expect_type(where, f"{pointer}.conversation", conversation, list, "a list of invocations")
    case = validate(eval_case_model(), case, path=path, pointer=pointer, question_id=qid, what="an eval case")
    session = get(case, "session_input") or {}
    state = get(session, "state") if isinstance(session, dict) else None
    expected_state = get(case, "final_session_state")
    app = get(session, "app_name") if isinstance(session, dict) else None
    common: dict[str, Any] = {
        "id": qid,
        "agents_evaluated": [str(app)] if app else [],
        "initial_state": state if isinstance(state, dict) else {},
    }
    state_reference = expected_state if isinstance(expected_state, dict) and expected_state else None
    if scenario is not None:
        starting = get(scenario, "starting_prompt")
        if not isinstance(starting, str) or not starting.strip():
            raise where.error(f"{pointer}.conversation_scenario.starting_prompt", "needs the user's first message")
        return Question(
            user_inputs=[starting],
            conversation_scenario=_snake_scenario(scenario),
            user_simulator=dict(simulator),
            reference_data=ReferenceData(reference_state_variables=state_reference),
            **common,
        )
    inputs: list[str] = []
    per_turn: list[list[ReferenceToolCall]] = []
    references: list[str | None] = []
    turn_rubrics: list[Any] = []
    for j, invocation in enumerate(conversation):
        sub = f"{pointer}.conversation[{j}]"
        text = content_text(get(invocation, "user_content"))
        if text is None:
            raise where.error(f"{sub}.user_content", "no text: a question needs the user's input")
        inputs.append(text)
        references.append(reference_text(get(invocation, "final_response")))
        per_turn.append(expected_calls(get(invocation, "intermediate_data")))
        turn_rubrics.append(get(invocation, "rubrics"))
    if not inputs:
        raise where.error(f"{pointer}.conversation", "no invocations: a question needs the user's input")
    # ADK's rubrics (the case's, each turn's), for its rubric-based judged criteria; kept only
    # where given, so a question without them is the question it was.
    rubrics: dict[str, Any] = {}
    if get(case, "rubrics"):
        rubrics[RUBRICS] = get(case, "rubrics")
    if any(turn_rubrics):
        rubrics[TURN_RUBRICS] = turn_rubrics
    return Question(
        user_inputs=inputs,
        metadata=rubrics,
        reference_data=ReferenceData(
            reference_tool_interactions=[call for calls in per_turn for call in calls],
            reference_response=references[-1] if references else None,
            turn_references=references,
            turn_tool_calls=per_turn,
            reference_state_variables=state_reference,
        ),
        **common,
    )


def _snake_scenario(scenario: dict[str, Any]) -> dict[str, Any]:
    """The scenario with ADK's field names (it validated against ConversationScenario already)."""
    out = {key: get(scenario, key) for key in ("starting_prompt", "conversation_plan", "user_persona")}
    return {key: value for key, value in out.items() if value is not None}


def _function_calls(intermediate: Any) -> list[dict[str, Any]]:
    """The function calls of an invocation's intermediate data, in either of ADK's forms."""
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
    return [call for call in calls if isinstance(call, dict)] if isinstance(calls, list) else []


def expected_calls(intermediate: Any) -> list[ReferenceToolCall]:
    out = []
    for call in _function_calls(intermediate):
        if call.get("name"):
            args = call.get("args") or {}
            out.append(ReferenceToolCall(tool_name=str(call["name"]), input_arguments=args if isinstance(args, dict) else {}))
    return out
