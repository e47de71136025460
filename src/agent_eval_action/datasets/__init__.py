"""One loader per input format, chosen by extension and content.

Internal: the public API is ``import agent_eval_action`` (its ``__all__``); ``__all__`` here
names what the rest of the package uses.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from agent_eval_action.datasets.adk import dataset_stem, load_eval_history, load_eval_set, load_test_json
from agent_eval_action.datasets.base import LoadedDataset, Record
from agent_eval_action.datasets.golden import load_golden
from agent_eval_action.datasets.tabular import load_csv, load_jsonl
from agent_eval_action.system.errors import DatasetError
from agent_eval_action.system.inside import is_inside, outside_reason
from agent_eval_action.text.jsonish import LONE_SURROGATES, TooDeep, loads

__all__ = ["LoadedDataset", "Record", "adk_file", "dataset_stem", "load_dataset"]

# Files ADK itself reads or writes beside eval sets that are no datasets, by name: what each is.
ADK_FILES = {
    "test_config.json": "ADK's eval criteria (read beside the eval files)",
    "eval_config.json": "ADK's eval config (what `adk eval --config_file_path` takes)",
    "session_input.json": "ADK's session input (`adk eval_set add_eval_case --session_input_file`)",
    "conversation_scenarios.json": "ADK's conversation scenarios (`adk eval_set add_eval_case --scenarios_file`)",
}
# ... and by the end of their name: `adk run --save_session` writes <session id>.session.json, which
# `adk run --resume` and AgentEvaluator's initial session read.
ADK_SUFFIXES = {".session.json": "an ADK session (`adk run --save_session` writes it, `--resume` reads it)"}


def adk_file(path: str) -> str | None:
    """What an ADK file that is no dataset is, by its name; None for any other file."""
    name = os.path.basename(path).lower()
    if name in ADK_FILES:
        return ADK_FILES[name]
    return next((what for suffix, what in ADK_SUFFIXES.items() if name.endswith(suffix)), None)


def load_dataset(path: str, also: Sequence[str] = ()) -> LoadedDataset:
    """Opens ``path`` with the loader its extension and content call for.

    File-level problems raise :class:`DatasetError`; problems with single questions come
    out of ``records`` in their place. A file that resolves outside the repository (and outside
    the places ``also`` the user named) is refused before it is read (see :mod:`agent_eval_action.system.inside`).
    """
    if not is_inside(path, also=also):
        raise DatasetError(path, outside_reason())
    if not os.path.isfile(path):
        raise DatasetError(path, "no such file" if not os.path.exists(path) else "not a file")
    dataset = _open(path)
    dataset.name = dataset.name or dataset_stem(path)
    return dataset


def _open(path: str) -> LoadedDataset:
    lower = path.lower()
    what = adk_file(path)
    if what is not None:
        raise DatasetError(path, f"this is {what}, not a dataset: name the eval set files, or their folder (such files are skipped there)")
    if lower.endswith(".csv"):
        return load_csv(path)
    if lower.endswith((".jsonl", ".ndjson")):
        return load_jsonl(path)
    if not lower.endswith(".json"):
        raise DatasetError(path, "unsupported file type: use .json (golden, ADK eval set, .test.json), .csv or .jsonl")
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        data, replaced = loads(text)
    except UnicodeDecodeError:
        raise DatasetError(path, "not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise DatasetError(path, f"not valid JSON: {error.msg}", pointer=f"line {error.lineno}, column {error.colno}") from None
    except TooDeep as error:
        raise DatasetError(path, str(error)) from None
    if isinstance(data, str):
        data, inner = _inner_json(path, data)
        replaced += inner
    dataset = _by_content(path, lower, data, text)
    if replaced:
        dataset.warnings.append(f"{path}: {LONE_SURROGATES}")
    return dataset


def _by_content(path: str, lower: str, data: Any, text: str) -> LoadedDataset:
    if isinstance(data, dict) and "golden_questions" in data:
        return load_golden(path, data, text)
    if isinstance(data, dict) and ("eval_case_results" in data or "evalCaseResults" in data):
        return load_eval_history(path, data)
    if isinstance(data, dict) and ("eval_cases" in data or "evalCases" in data):
        return load_eval_set(path, data)
    if isinstance(data, list) and all(isinstance(item, dict) and ("query" in item or "data" in item) for item in data):
        return load_test_json(path, data)
    if isinstance(data, dict) and "schema_version" in data and "datasets" in data:
        raise DatasetError(
            path, "this is a results file of agent-eval-action (a baseline, or results.json), not a dataset: name the datasets' folder"
        )
    if isinstance(data, dict) and "metric_type" in json.dumps(data)[:2000]:
        raise DatasetError(path, "this looks like a judge metric definition, not a dataset")
    raise DatasetError(
        path,
        'unrecognised dataset: expected {"golden_questions": [...]}, an ADK EvalSet ({"eval_cases": [...]}), '
        'ADK eval history ({"eval_case_results": [...]}, or that as a JSON string) '
        'or an ADK .test.json list of {"query", "expected_tool_use", "reference"} turns',
    )


def _inner_json(path: str, text: str) -> tuple[object, int]:
    """The document a file holds as a JSON string, and how many lone surrogates were replaced in
    it: ADK 1.0.0-1.21.0 wrote its eval history as ``json.dumps(result.model_dump_json())``
    (``adk.schema.DOUBLE_ENCODED_HISTORY``), and such files are renamed and moved, so the
    content decides, not the name."""
    try:
        inner, replaced = loads(text)
    except json.JSONDecodeError as error:
        if path.lower().endswith(".evalset_result.json"):
            raise DatasetError(path, f"not valid JSON inside the JSON string (ADK's eval history): {error.msg}") from None
        return text, 0
    except TooDeep as error:
        raise DatasetError(path, str(error)) from None
    if isinstance(inner, dict) and ("eval_case_results" in inner or "evalCaseResults" in inner):
        return inner, replaced
    return text, 0
