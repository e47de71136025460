"""Reading and writing ``results.json``: stable, diff-friendly, versioned."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agent_eval_action.errors import DatasetError
from agent_eval_action.models import SCHEMA_VERSION, Results

FLOAT_DIGITS = 6


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, FLOAT_DIGITS) if value == value else None
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_rounded(v) for v in value]
    return value


def dumps(results: Results) -> str:
    """Sorted keys and fixed float precision, so an unchanged run writes identical bytes."""
    return json.dumps(_rounded(results.model_dump(mode="json")), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_results(results: Results, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(dumps(results), encoding="utf-8")
    os.replace(tmp, path)  # never leave a half-written file behind
    return path


def read_results(path: str | Path) -> Results:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise DatasetError(str(path), f"cannot read results: {error}") from None
    version = data.get("schema_version") if isinstance(data, dict) else None
    if version != SCHEMA_VERSION:
        raise DatasetError(str(path), f"results schema_version {version!r} is not {SCHEMA_VERSION}; re-create it with this version")
    try:
        return Results.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        raise DatasetError(str(path), first["msg"], pointer="$." + ".".join(map(str, first["loc"]))) from None
