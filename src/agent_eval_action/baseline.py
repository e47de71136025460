"""Baseline files: one results file per dataset at ``<baselines_dir>/<dataset stem>.json``.

Written by ``baseline update`` on the default branch; a PR run reads them as they were at the
merge-base (``git show MERGE_BASE:PATH``) and never writes them.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from agent_eval_action.errors import DatasetError
from agent_eval_action.git_ops import Git
from agent_eval_action.loaders import dataset_stem
from agent_eval_action.models import SCHEMA_VERSION, DatasetResult, Results
from agent_eval_action.redaction import Redactor
from agent_eval_action.results_io import dumps


def baseline_path(baselines_dir: str, dataset_path: str) -> str:
    return f"{baselines_dir.rstrip('/')}/{dataset_stem(dataset_path)}.json"


def parse_baseline(text: str, where: str, dataset_name: str) -> DatasetResult | None:
    try:
        data = json.loads(text)
    except ValueError as error:
        raise DatasetError(where, f"baseline is not valid JSON: {error}") from None
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        found = data.get("schema_version") if isinstance(data, dict) else None
        raise DatasetError(where, f"baseline schema_version {found!r} is not {SCHEMA_VERSION}: run `baseline update` to rewrite it")
    try:
        results = Results.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        raise DatasetError(
            where, f"baseline does not match the results schema: {first['msg']}", pointer="$." + ".".join(map(str, first["loc"]))
        ) from None
    return next((d for d in results.datasets if d.name == dataset_name), results.datasets[0] if len(results.datasets) == 1 else None)


def read_baseline(git: Git | None, rev: str | None, baselines_dir: str, dataset: DatasetResult) -> tuple[DatasetResult | None, str]:
    """The dataset's baseline at ``rev`` (or in the working tree without one), and its path."""
    path = baseline_path(baselines_dir, dataset.path)
    if git is not None and rev is not None:
        text = git.show(rev, path)
        where = f"{path} at {rev[:12]}"
    else:
        file = Path(path)
        text = file.read_text(encoding="utf-8") if file.is_file() else None
        where = path
    if text is None:
        return None, path
    return parse_baseline(text, where, dataset.name), path


def write_baseline(baselines_dir: str, dataset: DatasetResult, tool_version: str, redactor: Redactor | None = None) -> tuple[Path, bool]:
    """Writes the baseline (secrets redacted: it is committed); returns (path, whether its bytes changed)."""
    path = Path(baseline_path(baselines_dir, dataset.path))
    text = dumps(Results(tool_version=tool_version, datasets=[dataset]), redactor)
    before = path.read_text(encoding="utf-8") if path.is_file() else None
    if before != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return path, before != text
