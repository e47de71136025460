"""Golden JSON (``*_golden.json``): ``{"golden_questions": [...]}`` as in the dataset guide."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from agent_eval_action.datasets.base import LoadedDataset, Record
from agent_eval_action.datasets.fields import QUESTION_KEYS, REFERENCE_KEYS, Where, expect_type, reference_data, string_list
from agent_eval_action.models.questions import Question
from agent_eval_action.system.errors import DatasetError
from agent_eval_action.text.spelling import closest

_ID_LINE = re.compile(r'"id"\s*:\s*"((?:[^"\\]|\\.)*)"')


def id_lines(text: str) -> dict[str, int]:
    """1-based line of each ``"id": "..."`` in the file, for annotations on the dataset."""
    lines: dict[str, int] = {}
    for match in _ID_LINE.finditer(text):
        lines.setdefault(match.group(1), text.count("\n", 0, match.start()) + 1)
    return lines


def load_golden(path: str, data: dict[str, Any], text: str) -> LoadedDataset:
    where = Where(path)
    questions: list[Any] = expect_type(where, ".golden_questions", data.get("golden_questions"), list, "a list of questions")
    dataset = LoadedDataset(path=path, name="", format="golden", records=iter(()))
    dataset.records = _records(path, questions, id_lines(text), dataset.warnings)
    return dataset


def _records(path: str, questions: list[Any], lines: dict[str, int], warnings: list[str]) -> Iterator[Record | DatasetError]:
    seen: set[str] = set()
    drafts = []
    unread: dict[str, int] = {}  # reference-like keys no metric reads (a misspelt reference checks nothing)
    for index, raw in enumerate(questions):
        try:
            question = parse_question(path, index, raw, lines, warnings)
        except DatasetError as error:
            yield error
            continue
        if question.id in seen:
            yield DatasetError(path, "duplicate id", question_id=question.id, pointer=f"$.golden_questions[{index}].id")
            continue
        seen.add(question.id)
        if _TODO.search(json.dumps([raw.get("user_inputs"), raw.get("reference_data")])):
            drafts.append(question.id)
        for key in question.reference_data.custom:
            if key.startswith(("reference_", "expected_")):
                unread[key] = unread.get(key, 0) + 1
        yield Record(question=question)
    if drafts:
        # init's placeholders: valid, so a draft loads, but a baseline of them would record nonsense.
        shown = ", ".join(drafts[:5]) + (", ..." if len(drafts) > 5 else "")
        warnings.append(
            f"{path}: {len(drafts)} question{'s' if len(drafts) != 1 else ''} still {'holds' if len(drafts) == 1 else 'hold'} TODO placeholders ({shown}): "
            "write the user's words and the references before recording a baseline"
        )
    if unread:
        keys = ", ".join(f"{key} ({n} question{'s' if n != 1 else ''})" for key, n in sorted(unread.items()))
        warnings.append(
            f"{path}: reference_data keys no metric reads (kept for judges' prompts): {keys}; "
            f"the metrics read {', '.join(REFERENCE_KEYS[:4])}"
        )


_TODO = re.compile(r'"TODO\b')


def parse_question(path: str, index: int, raw: Any, lines: dict[str, int], warnings: list[str]) -> Question:
    pointer = f".golden_questions[{index}]"
    where = Where(path)
    expect_type(where, pointer, raw, dict, "an object")
    qid = raw.get("id")
    if not isinstance(qid, str) or not qid.strip():
        raise where.error(f"{pointer}.id", "missing or not a non-empty string")
    where = Where(path, qid)
    for key in raw:
        if key in QUESTION_KEYS:
            continue
        near = closest(key, QUESTION_KEYS)
        if near is not None:  # `user_input` for `user_inputs`: the question would lose what the key holds
            raise where.error(f"{pointer}.{key}", f"unknown key {key!r} (did you mean `{near}`?)")
        warnings.append(f"{path}: question {qid!r} has unknown key {key!r} (ignored)")
    for key in ("user_inputs", "agents_evaluated", "reference_data"):
        if key not in raw:
            raise where.error(f"{pointer}.{key}", "required field is missing")
    user_inputs = string_list(where, f"{pointer}.user_inputs", raw["user_inputs"])
    if not user_inputs:
        raise where.error(f"{pointer}.user_inputs", "needs at least one message")
    agents = string_list(where, f"{pointer}.agents_evaluated", raw["agents_evaluated"])
    metadata = raw.get("metadata") or {}
    expect_type(where, f"{pointer}.metadata", metadata, dict, "an object")
    return Question(
        id=qid,
        user_inputs=user_inputs,
        agents_evaluated=agents,
        metadata=metadata,
        reference_data=reference_data(where, f"{pointer}.reference_data", raw["reference_data"]),
        initial_state=_initial_state(metadata),
        line=lines.get(qid),
    )


def _initial_state(metadata: dict[str, Any]) -> dict[str, Any]:
    state = metadata.get("initial_state", metadata.get("session_state", {}))
    return state if isinstance(state, dict) else {}
