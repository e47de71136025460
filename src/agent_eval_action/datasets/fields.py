"""Reading loosely typed fields (JSON-string cells, camelCase or snake_case keys) into our models."""

from __future__ import annotations

from typing import Any

from agent_eval_action.models.questions import ReferenceData, ReferenceToolCall
from agent_eval_action.system.errors import DatasetError
from agent_eval_action.text.spelling import closest, did_you_mean

QUESTION_KEYS = {"id", "user_inputs", "agents_evaluated", "metadata", "reference_data"}
RESPONSE_KEYS = ("reference_response", "expected_response", "expected_final_response", "reference_answer")
# The reference_data keys the metrics read; any other key is kept for judges' prompts.
REFERENCE_KEYS = ("reference_tool_interactions", "reference_trajectory", "reference_state_variables", *RESPONSE_KEYS)
# A reference tool call: its name and arguments as the dataset guide spells them, the spellings of
# ADK's test files and eval sets (tool_input; name and args), and the keys of a recorded call
# copied into a reference (read as nothing: only the name and arguments are checked).
# reference_data keeps the user's own keys, and many share a `reference_` start with ours: only a
# near-certain misspelling (`refrence_trajectory`, `reference_responses`) is refused, not
# `reference_notes` (0.77 like `reference_answer`).
CUSTOM_CLOSE = 0.85
TOOL_CALL_KEYS = ("tool_name", "input_arguments")
TOOL_CALL_ALIASES = ("name", "tool_input", "args")
TOOL_CALL_IGNORED = ("output_result", "mock_tool_output", "call_id", "id", "agent", "error", "turn")


class Where:
    """Builds DatasetErrors that point at one place in one file."""

    def __init__(self, path: str, question_id: str | None = None, prefix: str = "$"):
        self.path = path
        self.question_id = question_id
        self.prefix = prefix

    def error(self, pointer: str, reason: str) -> DatasetError:
        return DatasetError(self.path, reason, question_id=self.question_id, pointer=f"{self.prefix}{pointer}")


def expect_type(where: Where, pointer: str, value: Any, kind: type | tuple[type, ...], what: str) -> Any:
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise where.error(pointer, f"expected {what}, got {type(value).__name__}")
    return value


def string_list(where: Where, pointer: str, value: Any, *, allow_scalar: bool = False) -> list[str]:
    if allow_scalar and isinstance(value, str):
        return [value]
    expect_type(where, pointer, value, list, "a list of strings")
    for i, item in enumerate(value):
        expect_type(where, f"{pointer}[{i}]", item, str, "a string")
    return list(value)


def reference_data(where: Where, pointer: str, raw: Any) -> ReferenceData:
    """Parses ``reference_data``; standard keys are typed, every other key is kept in ``custom``."""
    expect_type(where, pointer, raw, dict, "an object")
    custom: dict[str, Any] = {}
    fields: dict[str, Any] = {}
    for key, value in raw.items():
        sub = f"{pointer}.{key}"
        if key == "reference_tool_interactions":
            if value is not None:
                fields[key] = tool_calls(where, sub, value)
        elif key == "reference_trajectory":
            if value is not None:
                fields[key] = string_list(where, sub, value)
        elif key == "reference_state_variables":
            if value is not None:
                fields[key] = expect_type(where, sub, value, dict, "an object")
        elif key in RESPONSE_KEYS and "reference_response" not in fields:
            if value is not None:
                fields["reference_response"] = expect_type(where, sub, value, str, "a string")
        else:
            near = closest(key, REFERENCE_KEYS, CUSTOM_CLOSE)
            if near is not None:
                # A misspelt reference is no reference: the metric it feeds would check nothing.
                raise where.error(sub, f"unknown key {key!r} (did you mean `{near}`?)")
            custom[key] = value
    return ReferenceData(**fields, custom=custom)


def tool_calls(where: Where, pointer: str, value: Any) -> list[ReferenceToolCall]:
    expect_type(where, pointer, value, list, "a list of tool calls")
    out = []
    for i, item in enumerate(value):
        sub = f"{pointer}[{i}]"
        expect_type(where, sub, item, dict, "an object with tool_name and input_arguments")
        for key in item:
            if key not in (*TOOL_CALL_KEYS, *TOOL_CALL_ALIASES, *TOOL_CALL_IGNORED):
                # A misspelt input_arguments would read as "no arguments" and pass any call.
                hint = did_you_mean(key, TOOL_CALL_KEYS + TOOL_CALL_ALIASES) or "; a tool call has tool_name and input_arguments"
                raise where.error(f"{sub}.{key}", f"unknown key {key!r} in a tool call{hint}")
        name = item.get("tool_name", item.get("name"))
        if not isinstance(name, str) or not name:
            raise where.error(f"{sub}.tool_name", "missing or not a string")
        args = item.get("input_arguments", item.get("tool_input", item.get("args", {})))
        if args is None:
            args = {}
        expect_type(where, f"{sub}.input_arguments", args, dict, "an object")
        out.append(ReferenceToolCall(tool_name=name, input_arguments=args))
    return out
