"""ADK's eval history (``.adk/eval_history/*.evalset_result.json``): recorded runs with their
references, checked against the pinned ADK's own schema."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from agent_eval_action.datasets.adk.config import NOT_EVALUATED, AdkConfig, criteria_from, use_config
from agent_eval_action.datasets.adk.eval_sets import content_text, expected_calls, reference_text
from agent_eval_action.datasets.adk.schema import eval_case_result_model, eval_set_result_model, validate
from agent_eval_action.datasets.base import LoadedDataset, Record
from agent_eval_action.datasets.fields import Where, expect_type
from agent_eval_action.models.questions import Question, ReferenceData
from agent_eval_action.system.errors import DatasetError
from agent_eval_action.text.jsonish import NOT_FINITE, get


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
    use_config(dataset, _recorded_criteria(path, cases, dataset.warnings))
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
    per_invocation = get(case, "eval_metric_result_per_invocation") or []
    if not per_invocation:
        status = "ADK did not evaluate this case: " if get(case, "final_eval_status") in NOT_EVALUATED else ""
        raise Where(path, qid, prefix="").error(
            f"{pointer}.eval_metric_result_per_invocation", f"{status}no invocations: a question needs the user's input"
        )
    actual = [get(item, "actual_invocation") for item in per_invocation]
    session = get(case, "session_details")
    app = get(session, "app_name") if isinstance(session, dict) else None
    question = _history_question(path, pointer, qid, per_invocation, app)
    events = get(session, "events") if isinstance(session, dict) else None
    calls_known = True
    if not events:
        events, calls_known = _invocation_events(actual)
    state = get(session, "state") if isinstance(session, dict) else None
    timed = _durations_checked(path, pointer, qid, actual)
    trace = trace_from_run(
        question,
        events,
        final_state=state if isinstance(state, dict) else None,
        turn_times=[(float(get(inv, "creation_timestamp") or 0.0), float(get(inv, "duration"))) for inv in actual] if timed else [],
        app_name=str(app) if app else None,
        models={},
    )
    if not timed:
        trace.missing["timing"] = "the eval history records no duration for its invocations"
    if not calls_known:
        why = "the eval history keeps no session, and its invocations list tool calls only: model calls and tokens are not recorded"
        trace.llm_calls = None
        trace.missing["llm_calls"] = trace.missing["tokens"] = why
        # As ADK's inference_call_count_v1 reads bare tool uses: the turns' model calls are not known.
        trace.turns = [
            turn.model_copy(update={"adk_usage": turn.adk_usage.model_copy(update={"model_calls": None})}) if turn.adk_usage else turn
            for turn in trace.turns
        ]
    if state is None:
        trace.final_state = None
        trace.missing["state"] = "the eval history keeps no session state"
    trace.recorded_metrics.update(_recorded_scores(path, pointer, qid, case))
    trace.recorded_turn_scores = _turn_scores(per_invocation)
    if get(case, "final_eval_status") in NOT_EVALUATED and not events:
        trace.error = "ADK did not evaluate this case"
    return Record(question=question, trace=trace)


def _history_question(path: str, pointer: str, qid: str, per_invocation: list[Any], app: Any) -> Question:
    """The question a case asked (the actual invocations' user content) and what it expected
    (the expected invocations' responses and tool calls)."""
    where = Where(path, qid, prefix="")
    actual = [get(item, "actual_invocation") for item in per_invocation]
    expected = [get(item, "expected_invocation") for item in per_invocation]
    inputs = []
    for j, invocation in enumerate(actual):
        text = content_text(get(invocation, "user_content"))
        if text is None:
            raise where.error(
                f"{pointer}.eval_metric_result_per_invocation[{j}].actual_invocation.user_content",
                "no text: a question needs the user's input",
            )
        inputs.append(text)
    has_expected = any(isinstance(inv, dict) for inv in expected)
    references = [reference_text(get(inv, "final_response")) if isinstance(inv, dict) else None for inv in expected]
    per_turn = [expected_calls(get(inv, "intermediate_data")) if isinstance(inv, dict) else [] for inv in expected]
    return Question(
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


def _durations_checked(path: str, pointer: str, qid: str, actual: list[Any]) -> bool:
    """Whether every invocation records its duration (NaN: not timed); an infinite or negative
    one is refused."""
    durations = [get(inv, "duration") for inv in actual]
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
    return all(isinstance(d, int | float) and not isinstance(d, bool) and d == d for d in durations)


def _recorded_scores(path: str, pointer: str, qid: str, case: Any) -> dict[str, float]:
    """The overall scores ADK recorded for the case, as ``score.NAME`` (NaN: not scored, left out)."""
    out: dict[str, float] = {}
    for i, result in enumerate(get(case, "overall_eval_metric_results") or []):
        score = get(result, "score")
        if isinstance(score, float) and math.isinf(score):
            raise DatasetError(
                path, NOT_FINITE.format(value=score), question_id=qid, pointer=f"{pointer}.overall_eval_metric_results[{i}].score"
            )
        number = _number(score)
        if number is not None:
            out[f"score.{get(result, 'metric_name')}"] = number
    return out


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
