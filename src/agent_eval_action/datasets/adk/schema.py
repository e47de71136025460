"""Validating ADK eval data with ADK's own pydantic models, so that what ADK's schema refuses is
refused here too, with the file, the case and the JSON path named.

The models are the pinned ADK's, and files in the wild were written by every released ADK:
a field an older ADK wrote that the pinned one dropped or renamed (:data:`HISTORIC_FIELDS`) is
accepted, on the model that held it only, and read as the pinned ADK would read the file
(dropped, or under its new name). Anything no ADK version wrote is still refused.

ADK's models are imported on first use (importing ``google.adk.evaluation`` costs about
half a second); only the validation is used, the loaders keep reading the plain JSON.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from agent_eval_action.system.errors import DatasetError
from agent_eval_action.text.jsonish import camel
from agent_eval_action.text.spelling import did_you_mean, field_names, model_at


@dataclass(frozen=True, kw_only=True)
class HistoricField:
    """A field that released ADK versions wrote into eval data and the pinned ADK's models lack."""

    model: str  # the ADK model (class name) that held it; its subclasses inherit it
    name: str  # as ADK wrote it (model_dump_json writes field names; the camelCase alias is accepted too)
    written_by: str  # the ADK versions whose models had it (read from their wheels)
    renamed_to: str | None  # the pinned field it became, or None: dropped (ignored here)
    why: str


# Found by reading every model reachable from EvalSetResult in the wheels of ADK 1.0.0, 1.5.0,
# 1.6.1, 1.7.0, 1.8.0, 1.10.0, 1.12.0, 1.14.0, 1.15.0, 1.15.1, 1.16.0, 1.17.0, 1.20.0, 1.21.0,
# 1.22.0, 1.23.0, 1.24.0, 1.25.0, 1.30.0, 1.35.0, 1.39.1 and 2.0.0, against the pinned 2.x. Every
# other field those versions wrote is still a field of the pinned models (camelCase aliases
# included); type changes there only widened (a required float became optional, and so on).
HISTORIC_FIELDS = (
    HistoricField(
        model="EvalMetric",
        name="judge_model_options",
        written_by="1.6.1-1.23.0",
        renamed_to=None,
        why="the LLM judge's settings moved into criterion.judge_model_options; every metric result of those "
        "versions writes it, null for metrics that are not judges",
    ),
    HistoricField(
        model="CacheMetadata",
        name="cached_contents_count",
        written_by="1.15.0-1.16.0",
        renamed_to="contents_count",
        why="an event's context-cache metadata; renamed contents_count in 1.17.0",
    ),
)
# ADK 1.0.0-1.21.0 wrote eval history as json.dumps(result.model_dump_json()): the file's JSON
# is a string holding the EvalSetResult. 1.22.0 and later write the object itself.
DOUBLE_ENCODED_HISTORY = "1.0.0-1.21.0"


def _json_path(data: Any, loc: tuple[int | str, ...]) -> tuple[str, int]:
    """The JSON path of a pydantic error location in ``data``, and how many location parts were
    not keys of the data (a union member's name): fewer means the error is from the branch
    that fits the data."""
    path = ""
    skipped = 0
    node = data
    for part in loc:
        if isinstance(part, int) and isinstance(node, list) and 0 <= part < len(node):
            path += f"[{part}]"
            node = node[part]
        elif isinstance(part, str) and isinstance(node, dict) and (part in node or camel(part) in node):
            key = part if part in node else camel(part)
            path += f".{key}"
            node = node[key]
        elif isinstance(part, str) and isinstance(node, dict) and part[:1].islower() and "[" not in part:
            # A required key the data lacks, spelt as the data spells its keys.
            snake_style = any("_" in key for key in node if isinstance(key, str))
            path += f".{_snake(part) if snake_style else part}"
            node = None
        else:
            skipped += 1
    return path, skipped


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def _describe(model: type[Any], error: dict[str, Any]) -> str:
    if error["type"] == "extra_forbidden":
        loc = tuple(error["loc"])
        holder = model_at(model, loc[:-1]) if loc else None
        hint = did_you_mean(str(loc[-1]), field_names(holder)) if holder is not None else ""
        return f"not a field of ADK's schema{hint}"
    if error["type"] == "missing":
        return "required field is missing"
    message = str(error["msg"])
    return message[0].lower() + message[1:] if message else "invalid"


def validate(model: type[Any], data: Any, *, path: str, pointer: str, question_id: str | None = None, what: str) -> Any:
    """``data`` as the pinned ADK's ``model`` reads it: a copy without the historic fields an older
    ADK wrote (renamed ones under their new name), or ``data`` itself when it has none.

    Raises a DatasetError naming ``pointer`` + the JSON path of the first problem ADK's
    ``model`` finds that is not a historic field. Among the alternatives of a union
    (``intermediate_data`` is tool uses or events), the problem reported is from the
    alternative that fits the data best.
    """
    from pydantic import ValidationError

    read = data
    # Each round drops or moves every historic field pydantic reported (a moved field can show a
    # problem of its own only after the move); it ends when the data validates or nothing moved.
    while True:
        try:
            model.model_validate(read)
            return read
        except ValidationError as error:
            items = _best_branches(error.errors())
            historic = [(tuple(item["loc"]), field) for item in items if (field := _historic(model, item)) is not None]
            if historic and read is data:
                read = copy.deepcopy(data)
            moved = [_read_as_pinned(read, loc, field) for loc, field in historic]  # every one, not up to the first
            if not any(moved):
                others = [item for item in items if _historic(model, item) is None]
                item = (others or items)[0]
                where = _where(model, data, read, tuple(item["loc"]))
                raise DatasetError(
                    path,
                    f"{_describe(model, item)} ({what}: ADK's schema refuses it)",
                    question_id=question_id,
                    pointer=f"{pointer}{where}",
                ) from None
        except Exception as error:  # noqa: BLE001 - ADK's validators raise their own errors too (an unknown persona id)
            raise DatasetError(path, f"{error} ({what}: ADK refuses it)", question_id=question_id, pointer=pointer) from None


def _where(model: type[Any], data: Any, read: Any, loc: tuple[Any, ...]) -> str:
    """The JSON path of ``loc`` as the file spells it: a renamed field under its old name."""
    where, _ = _json_path(read, loc)
    if read is data or not loc or not isinstance(loc[-1], str):
        return where
    holder = model_at(model, loc[:-1])
    names = {cls.__name__ for cls in holder.__mro__} if holder is not None else set()
    node = _node_at(data, loc[:-1])
    for field in HISTORIC_FIELDS:
        if field.model in names and field.renamed_to in (loc[-1], camel(loc[-1])) and isinstance(node, dict):
            for old in (field.name, camel(field.name)):
                if old in node:
                    return _json_path(data, (*loc[:-1], old))[0]
    return where


def _historic(model: type[Any], item: Any) -> HistoricField | None:
    """The historic field an error is about: a field the pinned schema forbids, or misses under
    its new name, on the model that held it in an older ADK."""
    loc = tuple(item["loc"])
    if not loc or not isinstance(loc[-1], str) or item["type"] not in ("extra_forbidden", "missing"):
        return None
    holder = model_at(model, loc[:-1])
    if holder is None:
        return None
    names = {cls.__name__ for cls in holder.__mro__}
    key = loc[-1]
    for field in HISTORIC_FIELDS:
        if field.model not in names:
            continue
        if item["type"] == "extra_forbidden" and key in (field.name, camel(field.name)):
            return field
        if item["type"] == "missing" and field.renamed_to is not None and key in (field.renamed_to, camel(field.renamed_to)):
            return field
    return None


def _node_at(data: Any, loc: tuple[Any, ...]) -> Any:
    """The JSON value at a pydantic location (union member names skipped), or None."""
    node = data
    for part in loc:
        if isinstance(part, int) and isinstance(node, list) and 0 <= part < len(node):  # noqa: SIM114 - mypy narrows the index per branch
            node = node[part]
        elif isinstance(part, str) and isinstance(node, dict) and part in node:
            node = node[part]
        elif not _is_member(part):
            return None
    return node


def _read_as_pinned(data: Any, loc: tuple[Any, ...], field: HistoricField) -> bool:
    """Drops the historic field at ``loc`` from ``data``, or moves it to its new name; False: it is not there."""
    node = _node_at(data, loc[:-1])
    if not isinstance(node, dict):
        return False
    for old in (field.name, camel(field.name)):
        if old in node:
            value = node.pop(old)
            if field.renamed_to is not None and field.renamed_to not in node and camel(field.renamed_to) not in node:
                node[field.renamed_to if old == field.name else camel(field.renamed_to)] = value
            return True
    return False


def _is_member(part: Any) -> bool:
    """A location part that names a union member (a model name such as ``IntermediateData``), not a field."""
    return isinstance(part, str) and not part[:1].islower()


def _best_branches(errors: list[Any]) -> list[Any]:
    """The errors, with those of a union's other members dropped where one member fits better
    (fewer errors): ``intermediate_data`` with ``tool_uses`` is judged as tool uses, not events."""
    counts: dict[tuple[Any, ...], int] = {}
    for item in errors:
        loc = tuple(item["loc"])
        for i, part in enumerate(loc):
            if _is_member(part):
                counts[loc[: i + 1]] = counts.get(loc[: i + 1], 0) + 1
    best: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    for branch, count in counts.items():
        point = branch[:-1]
        if point not in best or count < counts[best[point]]:
            best[point] = branch
    kept = []
    for item in errors:
        loc = tuple(item["loc"])
        if all(loc[: i + 1] == best.get(loc[:i], loc[: i + 1]) for i, part in enumerate(loc) if _is_member(part)):
            kept.append(item)
    return kept or errors


def eval_case_result_model() -> type[Any]:
    from google.adk.evaluation.eval_result import EvalCaseResult

    return EvalCaseResult


def eval_set_result_model() -> type[Any]:
    from google.adk.evaluation.eval_result import EvalSetResult

    return EvalSetResult


def eval_case_model() -> type[Any]:
    from google.adk.evaluation.eval_case import EvalCase

    return EvalCase
