"""Validating ADK eval data with the pinned ADK's own pydantic models, so that what ADK's
schema refuses is refused here too, with the file, the case and the JSON path named.

ADK's models are imported on first use (importing ``google.adk.evaluation`` costs about
half a second); only the validation is used, the loaders keep reading the plain JSON.
"""

from __future__ import annotations

from typing import Any

from agent_eval_action.errors import DatasetError
from agent_eval_action.jsonish import camel


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


def _describe(error: dict[str, Any]) -> str:
    if error["type"] == "extra_forbidden":
        return "not a field of ADK's schema"
    if error["type"] == "missing":
        return "required field is missing"
    message = str(error["msg"])
    return message[0].lower() + message[1:] if message else "invalid"


def validate(model: type[Any], data: Any, *, path: str, pointer: str, question_id: str | None = None, what: str) -> None:
    """Raises a DatasetError naming ``pointer`` + the JSON path of the first problem ADK's ``model`` finds.

    Among the alternatives of a union (``intermediate_data`` is tool uses or events), the
    problem reported is from the alternative that fits the data best.
    """
    from pydantic import ValidationError

    try:
        model.model_validate(data)
    except ValidationError as error:
        items = _best_branches(error.errors())
        item = items[0]
        where, _ = _json_path(data, tuple(item["loc"]))
        raise DatasetError(
            path, f"{_describe(item)} ({what}: ADK's schema refuses it)", question_id=question_id, pointer=f"{pointer}{where}"
        ) from None
    except Exception as error:  # noqa: BLE001 - ADK's validators raise their own errors too (an unknown persona id)
        raise DatasetError(path, f"{error} ({what}: ADK refuses it)", question_id=question_id, pointer=pointer) from None


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
