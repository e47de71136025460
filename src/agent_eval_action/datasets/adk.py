"""ADK eval data: the old ``*.test.json`` turn lists, the ``EvalSet`` JSON, and eval history.

An old ``.test.json`` file is one multi-turn conversation (as ADK's AgentEvaluator reads
it); the older ``[{name, data, initial_session}]`` form holds several. An EvalSet's
``final_session_state`` becomes our state reference, which ADK itself never scores. An eval
case with a ``conversation_scenario`` is run with ADK's user simulator. Eval cases and eval
history are checked against the pinned ADK's own schema: what ADK refuses is refused here.
``test_config.json`` beside the file gives criteria (pass thresholds and gate minimums) and
the user simulator's settings.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_eval_action.core.errors import DatasetError
from agent_eval_action.core.inside import is_inside, outside_reason
from agent_eval_action.core.jsonish import NOT_FINITE, get, loads
from agent_eval_action.core.models import Question, ReferenceData, ReferenceToolCall
from agent_eval_action.core.spelling import closest
from agent_eval_action.datasets.adk_schema import eval_case_model, eval_case_result_model, eval_set_result_model, validate
from agent_eval_action.datasets.base import LoadedDataset, Record
from agent_eval_action.datasets.fields import Where, expect_type, tool_calls

# ADK's prebuilt metrics that are LLM judges, Vertex services or efficiency reports: criteria
# naming them are read but not computed here (docs/metrics.md, "ADK's metrics").
ADK_NOT_COMPUTED = {
    "response_evaluation_score", "safety_v1", "final_response_match_v2", "rubric_based_final_response_quality_v1",
    "hallucinations_v1", "rubric_based_tool_use_quality_v1", "per_turn_user_simulator_quality_v1",
    "multi_turn_task_success_v1", "multi_turn_trajectory_quality_v1", "multi_turn_tool_use_quality_v1",
    "rubric_based_multi_turn_trajectory_quality_v1", "tool_call_count_v1", "inference_call_count_v1",
    "token_usage_v1", "invocation_duration_v1",
}  # fmt: skip
NOT_EVALUATED = (3, "NOT_EVALUATED")


def dataset_stem(path: str) -> str:
    name = os.path.basename(path)
    for suffix in (".evalset_result.json", ".test.json", ".evalset.json", ".json", ".jsonl", ".csv"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return Path(name).stem


@dataclass
class AdkConfig:
    """What a ``test_config.json`` gives: thresholds, each criterion as written, simulator settings."""

    thresholds: dict[str, float] = field(default_factory=dict)
    criteria: dict[str, dict[str, Any]] = field(default_factory=dict)
    user_simulator: dict[str, Any] = field(default_factory=dict)


def read_test_config(path: str, warnings: list[str]) -> AdkConfig:
    """The ``test_config.json`` beside an ADK eval file, if any (ADK's AgentEvaluator reads it there)."""
    config = Path(path).parent / "test_config.json"
    if not config.is_file():
        return AdkConfig()
    # Inside the repository, or in the folder where the dataset it configures really is (one the user named).
    if not is_inside(config, also=(os.path.dirname(os.path.realpath(path)),)):
        warnings.append(f"{config}: {outside_reason()}; its criteria are ignored")
        return AdkConfig()
    try:
        data = loads(config.read_text(encoding="utf-8"))[0]
    except (ValueError, OSError) as error:
        warnings.append(f"{config}: unreadable ({error}); its criteria are ignored")
        return AdkConfig()
    if not isinstance(data, dict):
        warnings.append(f"{config}: not a JSON object; its criteria are ignored")
        return AdkConfig()
    out = criteria_from(str(config), get(data, "criteria") or {}, warnings)
    simulator = get(data, "user_simulator_config")
    if isinstance(simulator, dict):
        out.user_simulator = simulator
    elif simulator is not None:
        raise DatasetError(str(config), "expected an object", pointer="$.user_simulator_config")
    return out


def criteria_from(source: str, criteria: Any, warnings: list[str]) -> AdkConfig:
    """ADK criteria (``{name: threshold}`` or ``{name: {threshold, match_type, ...}}``) as thresholds and options."""
    from agent_eval_action.metrics import REGISTRY
    from agent_eval_action.metrics.adk import match_type

    out = AdkConfig()
    if not isinstance(criteria, dict):
        raise DatasetError(source, "expected an object of criteria", pointer="$.criteria")
    for name, value in criteria.items():
        threshold = value.get("threshold") if isinstance(value, dict) else value
        if not isinstance(threshold, int | float) or isinstance(threshold, bool) or not math.isfinite(threshold):
            raise DatasetError(source, "needs a finite numeric threshold", pointer=f"$.criteria.{name}")
        if name not in REGISTRY:
            what = "one of ADK's judged or informational metrics" if name in ADK_NOT_COMPUTED else "not a metric known here"
            warnings.append(f"{source}: criterion {name!r} is {what}; it is not computed here (docs/metrics.md: ADK's metrics)")
            continue
        options = dict(value) if isinstance(value, dict) else {"threshold": threshold}
        try:
            match_type(options)
        except ValueError as error:
            raise DatasetError(source, str(error), pointer=f"$.criteria.{name}.match_type") from None
        out.thresholds[name] = float(threshold)
        out.criteria[name] = options
    return out


def _use_config(dataset: LoadedDataset, config: AdkConfig) -> None:
    dataset.criteria = config.thresholds
    dataset.criterion_options = config.criteria


# The keys of a turn of ADK's old test files, as ADK's local_eval_sets_manager reads them.
TEST_TURN_KEYS = ("query", "expected_tool_use", "reference", "expected_intermediate_agent_responses")


def load_test_json(path: str, data: list[Any]) -> LoadedDataset:
    dataset = LoadedDataset(path=path, name="", format="adk_test", records=iter(()))
    _use_config(dataset, read_test_config(path, dataset.warnings))
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
    _use_config(dataset, config)
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


def _content_text(content: Any) -> str | None:
    """The user's text of a genai Content (thoughts left out)."""
    parts = get(content, "parts") or []
    texts = [str(p["text"]) for p in parts if isinstance(p, dict) and p.get("text") and not p.get("thought")]
    return "".join(texts) if texts else None


def _reference_text(content: Any) -> str | None:
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
    for j, invocation in enumerate(conversation):
        sub = f"{pointer}.conversation[{j}]"
        text = _content_text(get(invocation, "user_content"))
        if text is None:
            raise where.error(f"{sub}.user_content", "no text: a question needs the user's input")
        inputs.append(text)
        references.append(_reference_text(get(invocation, "final_response")))
        per_turn.append(_expected_calls(get(invocation, "intermediate_data")))
    if not inputs:
        raise where.error(f"{pointer}.conversation", "no invocations: a question needs the user's input")
    return Question(
        user_inputs=inputs,
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


def _expected_calls(intermediate: Any) -> list[ReferenceToolCall]:
    out = []
    for call in _function_calls(intermediate):
        if call.get("name"):
            args = call.get("args") or {}
            out.append(ReferenceToolCall(tool_name=str(call["name"]), input_arguments=args if isinstance(args, dict) else {}))
    return out


def load_eval_history(path: str, data: dict[str, Any]) -> LoadedDataset:
    """ADK eval history (``.adk/eval_history/*.evalset_result.json``): recorded runs with their references.

    The expected invocations give the references, the session (or else the actual
    invocations) the trace, and the scores ADK recorded stay beside ours (``score.*``). The
    criteria ADK ran with become the dataset's criteria.
    """
    where = Where(path)
    cases = get(data, "eval_case_results")
    expect_type(where, ".eval_case_results", cases, list, "a list of eval case results")
    top = {key: value for key, value in data.items() if key not in ("eval_case_results", "evalCaseResults")}
    validate(eval_set_result_model(), top, path=path, pointer="$", what="an eval set result")
    dataset = LoadedDataset(path=path, name=str(get(data, "eval_set_id") or ""), format="adk_history", records=iter(()))
    _use_config(dataset, _recorded_criteria(path, cases, dataset.warnings))
    dataset.records = _history_records(path, cases)
    return dataset


def _recorded_criteria(path: str, cases: list[Any], warnings: list[str]) -> AdkConfig:
    """The criteria ADK ran with, from the first case that recorded its metrics."""
    for case in cases:
        results = get(case, "overall_eval_metric_results") if isinstance(case, dict) else None
        if not isinstance(results, list) or not results:
            continue
        criteria: dict[str, Any] = {}
        for result in results:
            name = get(result, "metric_name")
            criterion = get(result, "criterion")
            threshold = get(result, "threshold")
            if isinstance(criterion, dict) and isinstance(get(criterion, "threshold"), int | float):
                criteria[str(name)] = criterion
            elif isinstance(threshold, int | float) and not isinstance(threshold, bool):
                criteria[str(name)] = threshold
        try:
            return criteria_from(f"{path} (the criteria ADK recorded)", criteria, warnings)
        except DatasetError as error:
            warnings.append(f"{error.message()}; the recorded criteria are ignored")
            return AdkConfig()
    return AdkConfig()


def _history_records(path: str, cases: list[Any]) -> Iterator[Record | DatasetError]:
    runs: dict[str, int] = {}
    for i, case in enumerate(cases):
        pointer = f"$.eval_case_results[{i}]"
        try:
            record = _history_case(path, pointer, case)
        except DatasetError as error:
            yield error
            continue
        run = runs.get(record.question.id, -1) + 1
        runs[record.question.id] = run
        record.run = run
        yield record


def _history_case(path: str, pointer: str, case: Any) -> Record:
    from agent_eval_action.traces.adk_events import trace_from_run

    expect_type(Where(path, prefix=""), pointer, case, dict, "an object")
    qid = get(case, "eval_id")
    qid = qid if isinstance(qid, str) and qid else None
    case = validate(eval_case_result_model(), case, path=path, pointer=pointer, question_id=qid, what="an eval case result")
    if qid is None:
        raise DatasetError(path, "missing eval_id: a question needs an id", pointer=f"{pointer}.eval_id")
    where = Where(path, qid, prefix="")
    per_invocation = get(case, "eval_metric_result_per_invocation") or []
    if not per_invocation:
        status = "ADK did not evaluate this case: " if get(case, "final_eval_status") in NOT_EVALUATED else ""
        raise where.error(f"{pointer}.eval_metric_result_per_invocation", f"{status}no invocations: a question needs the user's input")
    actual = [get(item, "actual_invocation") for item in per_invocation]
    expected = [get(item, "expected_invocation") for item in per_invocation]
    inputs = []
    for j, invocation in enumerate(actual):
        text = _content_text(get(invocation, "user_content"))
        if text is None:
            raise where.error(
                f"{pointer}.eval_metric_result_per_invocation[{j}].actual_invocation.user_content",
                "no text: a question needs the user's input",
            )
        inputs.append(text)
    has_expected = any(isinstance(inv, dict) for inv in expected)
    references = [_reference_text(get(inv, "final_response")) if isinstance(inv, dict) else None for inv in expected]
    per_turn = [_expected_calls(get(inv, "intermediate_data")) if isinstance(inv, dict) else [] for inv in expected]
    session = get(case, "session_details")
    app = get(session, "app_name") if isinstance(session, dict) else None
    question = Question(
        id=qid,
        user_inputs=inputs,
        agents_evaluated=[str(app)] if app else [],
        reference_data=ReferenceData(
            reference_tool_interactions=[call for calls in per_turn for call in calls] if has_expected else None,
            reference_response=next((r for r in reversed(references) if r), None),
            # Expected invocations without a final response are kept (as None): ADK scored them
            # against an empty reference.
            turn_references=references if any(references) or has_expected else None,
            turn_tool_calls=per_turn if has_expected else None,
        ),
    )
    events = get(session, "events") if isinstance(session, dict) else None
    calls_known = True
    if not events:
        events, calls_known = _invocation_events(actual)
    state = get(session, "state") if isinstance(session, dict) else None
    durations = [get(inv, "duration") for inv in actual]
    timed = all(isinstance(d, int | float) and not isinstance(d, bool) and d == d for d in durations)  # NaN: not timed
    for i, duration in enumerate(durations):
        place = f"{pointer}.eval_metric_result_per_invocation[{i}].actual_invocation.duration"
        if isinstance(duration, float) and math.isinf(duration):
            raise DatasetError(path, NOT_FINITE.format(value=duration), question_id=qid, pointer=place)
        if isinstance(duration, int | float) and not isinstance(duration, bool) and duration < 0:
            # A clock that went backwards (or a hand-edited file): scored, it would be a latency
            # below zero that makes the mean look faster than any run was.
            raise DatasetError(
                path,
                f"{duration} is a negative duration: record the seconds the invocation took (0 or more)",
                question_id=qid,
                pointer=place,
            )
    trace = trace_from_run(
        question,
        events,
        final_state=state if isinstance(state, dict) else None,
        turn_times=[(float(get(inv, "creation_timestamp") or 0.0), float(d)) for inv, d in zip(actual, durations, strict=True)]
        if timed
        else [],
        app_name=str(app) if app else None,
        models={},
    )
    if not timed:
        trace.missing["timing"] = "the eval history records no duration for its invocations"
    if not calls_known:
        why = "the eval history keeps no session, and its invocations list tool calls only: model calls and tokens are not recorded"
        trace.llm_calls = None
        trace.missing["llm_calls"] = trace.missing["tokens"] = why
    if state is None:
        trace.final_state = None
        trace.missing["state"] = "the eval history keeps no session state"
    for i, result in enumerate(get(case, "overall_eval_metric_results") or []):
        score = get(result, "score")
        if isinstance(score, float) and math.isinf(score):
            raise DatasetError(
                path, NOT_FINITE.format(value=score), question_id=qid, pointer=f"{pointer}.overall_eval_metric_results[{i}].score"
            )
        number = _number(score)
        if number is not None:  # NaN: not scored
            trace.recorded_metrics[f"score.{get(result, 'metric_name')}"] = number
    trace.recorded_turn_scores = _turn_scores(per_invocation)
    if get(case, "final_eval_status") in NOT_EVALUATED and not events:
        trace.error = "ADK did not evaluate this case"
    return Record(question=question, trace=trace)


def _number(value: Any) -> float | None:
    """A recorded score as a float; None for no number, NaN (not scored) or one past the float range."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _turn_scores(per_invocation: list[Any]) -> dict[str, list[float | None]]:
    """The scores ADK recorded for each invocation, by metric (None where it scored none)."""
    out: dict[str, list[float | None]] = {}
    for j, item in enumerate(per_invocation):
        for result in get(item, "eval_metric_results") or []:
            name = get(result, "metric_name")
            if isinstance(name, str):
                out.setdefault(name, [None] * len(per_invocation))[j] = _number(get(result, "score"))
    return {name: scores for name, scores in out.items() if any(s is not None for s in scores)}


def _invocation_events(invocations: list[Any]) -> tuple[list[dict[str, Any]], bool]:
    """Events rebuilt from the actual invocations, and whether they show the model calls.

    ADK writes an invocation's intermediate data as events (``invocation_events``: authors,
    content, usage; since 2.x the final response's event is kept with its content moved to
    ``final_response``) or, in older files, as bare ``tool_uses`` / ``tool_responses``, which
    show neither authors nor model calls. No author is made up: a step without one stays
    without one.
    """
    events: list[dict[str, Any]] = []
    calls_known = True
    for n, inv in enumerate(invocations):
        invocation_id = f"{n}:{get(inv, 'invocation_id') or ''}"
        events.append({"author": "user", "invocation_id": invocation_id, "content": get(inv, "user_content")})
        data = get(inv, "intermediate_data") or {}
        final = get(inv, "final_response")
        recorded = get(data, "invocation_events")
        if isinstance(recorded, list):
            own = [{**event, "invocation_id": invocation_id} for event in recorded if isinstance(event, dict)]
            # ADK keeps the final response's event without content (the text is in final_response).
            stripped = [event for event in own if not get(event, "content")]
            if final and stripped:
                stripped[-1]["content"] = final
            elif final:
                own.append({"invocation_id": invocation_id, "content": final})
            events.extend(own)
            continue
        calls_known = False
        for call in get(data, "tool_uses") or []:
            events.append({"invocation_id": invocation_id, "content": {"role": "model", "parts": [{"function_call": call}]}})
        for response in get(data, "tool_responses") or []:
            events.append({"invocation_id": invocation_id, "content": {"role": "user", "parts": [{"function_response": response}]}})
        if final:
            events.append({"invocation_id": invocation_id, "content": final})
    return events, calls_known
