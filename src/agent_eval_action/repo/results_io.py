"""Reading and writing ``results.json``: stable, diff-friendly, versioned.

The outline is indented and each question is one line: a diff shows which questions
changed, and the bulk is written by the C JSON encoder (indenting everything costs
several times the whole scoring of a large dataset).

A baseline file holds several runs of each question, mostly alike: there a question's runs are
one line, ``{"id", "shared": {...}, "runs": [{...}, ...]}``, what all its runs have equal (a
field, or one entry of a field that is an object in every run: a metric's score, a part of the
transcript, an observed input) written once in ``shared``, the rest in each run's own object
(:func:`pack_runs`). Every reader gets the runs whole back (:func:`unpack_runs`), and files of
one line per run still read.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from agent_eval_action.models.plan import recorded_plan
from agent_eval_action.models.results import READABLE_VERSIONS, SCHEMA_VERSION, Results
from agent_eval_action.models.scores import Score
from agent_eval_action.system.errors import DatasetError
from agent_eval_action.system.files import write_atomic
from agent_eval_action.text.jsonish import NotFinite, TooDeep, loads
from agent_eval_action.text.redaction import Redactor

EXPAND_LEVELS = 3


# What json.dumps makes with these settings, from one encoder each (json.dumps builds one a call
# for any setting but its defaults: a 10,000-question check's files encode 500,000 pieces).
_COMPACT = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(", ", ": "), allow_nan=False)
_KEY = json.JSONEncoder(ensure_ascii=False)


def _compact(value: Any) -> str:
    return _COMPACT.encode(value)


class _Raw(str):
    """JSON text already encoded (by pydantic's Rust serializer), spliced in as is."""


def _encode(value: Any, level: int) -> Iterator[str]:
    """The text in pieces: a large file is written as it is encoded, never held twice. A model
    (a question) is its JSON text, made as it is written: a large file's questions are never all
    held as text at once (20,000 recorded rows: 145 MB)."""
    if isinstance(value, _Raw):
        yield value
        return
    if isinstance(value, BaseModel):
        yield value.model_dump_json()
        return
    pad = "  " * (level + 1)
    end = "  " * level
    if isinstance(value, dict) and value and level <= EXPAND_LEVELS:
        yield "{\n"
        for i, key in enumerate(sorted(value)):
            yield f"{pad}{_KEY.encode(key)}: "
            yield from _encode(value[key], level + 1)
            yield ",\n" if i < len(value) - 1 else "\n"
        yield end + "}"
    elif isinstance(value, list) and value and any(isinstance(v, dict | list | _Raw | BaseModel) for v in value) and level <= EXPAND_LEVELS:
        yield "[\n"
        for i, item in enumerate(value):
            yield pad
            yield from _encode(item, level + 1)
            yield ",\n" if i < len(value) - 1 else "\n"
        yield end + "]"
    else:
        yield _compact(value)


# Fields added after baselines were first written, left out when they say nothing (every baseline
# file): a baseline made again with unchanged scores keeps its bytes.
OMITTED_WHEN_EMPTY = ("compare_with", "plan", "base_run", "drift", "drift_notes")


def pack_runs(questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The runs (question results as JSON objects) with each question's consecutive runs as one
    entry: a lone run is written as it is."""
    out: list[dict[str, Any]] = []
    start = 0
    while start < len(questions):
        end = start + 1
        while end < len(questions) and questions[end].get("id") == questions[start].get("id"):
            end += 1
        runs = questions[start:end]
        out.append(runs[0] if len(runs) == 1 else _pack(runs))
        start = end
    return out


def _same(values: list[Any]) -> bool:
    # As JSON text: 1, 1.0 and true are equal in Python, never in the file.
    first = json.dumps(values[0], ensure_ascii=False)
    return all(json.dumps(v, ensure_ascii=False) == first for v in values[1:])


def _split(runs: list[dict[str, Any]], nested: bool) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """What every run has equal, and each run's own; with ``nested``, an object-valued key of
    every run is split the same way one level down."""
    shared: dict[str, Any] = {}
    own: list[dict[str, Any]] = [{} for _ in runs]
    for key in dict.fromkeys(k for run in runs for k in run):
        if all(key in run for run in runs) and _same([run[key] for run in runs]):
            shared[key] = runs[0][key]
        elif nested and all(isinstance(run.get(key), dict) for run in runs):
            shared[key], parts = _split([run[key] for run in runs], nested=False)
            for mine, part in zip(own, parts, strict=True):
                if part:
                    mine[key] = part
        else:
            for mine, run in zip(own, runs, strict=True):
                if key in run:
                    mine[key] = run[key]
    return shared, own


def _pack(runs: list[dict[str, Any]]) -> dict[str, Any]:
    shared, own = _split(runs, nested=True)
    return {"id": shared.pop("id"), "shared": shared, "runs": own}


def unpack_runs(questions: Any, where: str, fix: str, *, made: bool = False) -> Any:
    """Each entry of a question's runs (:func:`pack_runs`) as its runs, whole; a list of runs as
    it is. ``made``: the scores the runs share as Score objects (:func:`_with_shared_scores`), not JSON."""
    if not isinstance(questions, list) or not any(isinstance(q, dict) and "runs" in q for q in questions):
        return questions
    out: list[Any] = []
    for i, entry in enumerate(questions):
        if not (isinstance(entry, dict) and "runs" in entry):
            out.append(entry)
            continue
        shared, runs = entry.get("shared", {}), entry.get("runs")
        if not isinstance(shared, dict) or not isinstance(runs, list) or not all(isinstance(r, dict) for r in runs):
            raise DatasetError(where, f'question entry {i} ({entry.get("id")!r}) has no object "shared" and list of objects "runs": {fix}')
        if made:
            shared = _with_shared_scores(shared)
        for run in runs:
            whole = {"id": entry.get("id"), **shared}
            for key, value in run.items():
                whole[key] = {**shared[key], **value} if isinstance(shared.get(key), dict) and isinstance(value, dict) else value
            out.append(whole)
    return out


def _with_shared_scores(shared: dict[str, Any]) -> dict[str, Any]:
    """``shared`` with its scores (those every run of the question has alike) made once, as
    validation would make each run's: one Score object then serves every run (nothing changes a
    score once made), instead of one made per run. A score that does not validate is left as it
    is, for the results' validation to refuse with its place in the file."""
    scores = shared.get("scores")
    if not isinstance(scores, dict) or not scores:
        return shared
    made: dict[str, Any] = {}
    for name, fields in scores.items():
        made[name] = fields
        if isinstance(fields, dict):
            with contextlib.suppress(ValidationError, TypeError):
                made[name] = Score(**fields)
    return {**shared, "scores": made}


def _pieces(results: Results, packed: bool = False) -> Iterator[str]:
    """Sorted keys in the outline, one line per question in schema order (``packed``: one line
    per question's runs, :func:`pack_runs`), rounded figures: an unchanged run writes identical
    bytes."""
    outline = results.model_dump(exclude={"datasets": {"__all__": {"questions"}}})
    for key in OMITTED_WHEN_EMPTY:
        if not outline.get(key):
            outline.pop(key, None)
    gate = outline.get("gate")
    if isinstance(gate, dict):
        # Added later: a gate with none of them reads as before.
        for key, empty in (("within_noise", []), ("inconclusive", []), ("infrastructure", None), ("on_inconclusive", "pass")):
            if gate.get(key, empty) == empty:
                gate.pop(key, None)
    for comparison in outline.get("comparison") or []:
        if comparison.get("pass_test") is None:
            comparison.pop("pass_test", None)
    # Set on the drift's comparisons only (verdict/drift.py): elsewhere it says nothing.
    for comparison in [*(outline.get("comparison") or []), *(outline.get("drift") or [])]:
        if comparison.get("drift_metrics") is None:
            comparison.pop("drift_metrics", None)
    for data, dataset in zip(outline["datasets"], results.datasets, strict=True):
        if packed:
            runs = pack_runs([json.loads(question.model_dump_json()) for question in dataset.questions])
            data["questions"] = [_Raw(json.dumps(entry, ensure_ascii=False, separators=(",", ":"), allow_nan=False)) for entry in runs]
        else:
            data["questions"] = list(dataset.questions)
    yield from _encode(outline, 0)
    yield "\n"


def _redacted_pieces(results: Results, redactor: Redactor | None, packed: bool = False) -> Iterator[str]:
    """The pieces with secrets replaced. Every JSON string lies whole inside one piece, so a
    secret is found where it is (in its JSON-escaped form when it holds quotes or backslashes)."""
    if redactor is None:
        redactor = Redactor.from_env(os.environ)
    if not redactor.active:
        yield from _pieces(results, packed)
        return
    for piece in _pieces(results, packed):
        yield redactor.text(piece)


def dumps(results: Results, redactor: Redactor | None = None, *, packed: bool = False) -> str:
    """The file's text; ``redactor`` defaults to the secrets of this process's environment;
    ``packed``: each question's runs as one entry (a baseline file, :func:`pack_runs`)."""
    return "".join(_redacted_pieces(results, redactor, packed))


def redacted(results: Results, redactor: Redactor) -> Results:
    """A copy without secrets, for views that escape or cut text: the comment escapes
    underscores and cuts errors at 500 characters, and a secret so changed no longer matches."""
    if not redactor.active:
        return results
    text = results.model_dump_json()
    if not redactor.found_in(text):
        return results
    return Results.model_validate_json(redactor.text(text))


def write_results(results: Results, path: str | Path, redactor: Redactor | None = None) -> Path:
    """Writes atomically; ``redactor`` defaults to the secrets of this process's environment."""
    return write_atomic(path, _redacted_pieces(results, redactor))


_QUESTIONS = '"questions": [\n'


def outline_text(text: str) -> str | None:
    """A results or baseline file's text with every dataset's questions left out (``[]``), for a
    reader that wants only the outline (a trend reads each past baseline's summaries: the
    questions are nearly all of the file). Found where the file is laid out as :func:`_encode`
    writes it: a questions list opening at the end of a line, its entries a line each below,
    closed by ``]`` alone at the key's indentation (a JSON string holds no newline, so no entry can
    close it early). None where there is no such list (another layout): then parse it whole."""
    pieces: list[str] = []
    done = 0
    while (key := text.find(_QUESTIONS, done)) >= 0:
        start = text.rfind("\n", 0, key) + 1
        indent = text[start:key]
        end = text.find(f"\n{indent}]", key)
        if indent.strip(" ") or end < 0:
            return None
        pieces += [text[done:key], '"questions": []']
        done = end + len(indent) + 2
    return "".join([*pieces, text[done:]]) if pieces else None


def read_results(path: str | Path) -> Results:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetError(str(path), "no such file") from None
    except IsADirectoryError:
        raise DatasetError(str(path), "a folder, not a results file: give the file in it") from None
    except (OSError, UnicodeDecodeError) as error:
        # The path is said once, by the error itself: not again in the reason.
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise DatasetError(str(path), f"cannot read results: {reason}") from None
    return parse_results(text, str(path))


def from_version_1(data: dict[str, Any]) -> dict[str, Any]:
    """A version-1 file in version 2's shape: the gate's failures were strings (kept as "legacy"
    failures, their message whole) and it had no outcome, only ``passed``."""
    gate = data.get("gate")
    if not isinstance(gate, dict):
        return data
    gate = dict(gate)
    failures = gate.get("failures")
    if isinstance(failures, list):
        gate["failures"] = [{"rule": "legacy", "message": f} if isinstance(f, str) else f for f in failures]
    passed = gate.pop("passed", None)
    if "outcome" not in gate and isinstance(passed, bool):
        gate["outcome"] = "passed" if passed else "failed"
    return {**data, "gate": gate}


def parse_results(text: str, where: str, what: str = "results") -> Results:
    """A results or baseline file's text, validated; version-1 files are read as the current version."""
    fix = "run `baseline update` on the default branch to rewrite it" if what == "baseline" else "re-create it with this version"
    try:
        # Stored figures are finite: a NaN or Infinity (which JSON does not allow) is a corrupt file.
        data = loads(text, finite=True, depth=None)[0]
    except NotFinite as error:
        raise DatasetError(where, f"{what} file is corrupt: it {error}; {fix}") from None
    except TooDeep as error:
        raise DatasetError(where, f"{what} file is {error}") from None
    except ValueError as error:
        raise DatasetError(where, f"{what} file is not valid JSON: {error}") from None
    version = data.get("schema_version") if isinstance(data, dict) else None
    if version not in READABLE_VERSIONS:
        raise DatasetError(where, f"{what} schema_version {version!r} is not one this version reads ({READABLE_VERSIONS}): {fix}")
    if version == 1:
        data = from_version_1(data)
    datasets = data.get("datasets")
    for dataset in datasets if isinstance(datasets, list) else []:
        if isinstance(dataset, dict) and "questions" in dataset:
            dataset["questions"] = unpack_runs(dataset["questions"], where, fix, made=True)
    try:
        results = Results.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        raise DatasetError(
            where, f"{what} file does not match the results schema: {first['msg']}", pointer="$." + ".".join(map(str, first["loc"]))
        ) from None
    results.schema_version = SCHEMA_VERSION
    if results.plan is None:  # written before plans were saved: the plan it recorded
        results.plan = recorded_plan(results.compare_with, results.base_run is not None)
    return results
