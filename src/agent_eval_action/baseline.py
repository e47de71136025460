"""Baseline files: one results file per dataset at ``<baselines_dir>/<dataset path from the
repository root>.json`` (``evaluation/baselines/evaluation/datasets/cs.csv.json``), so no two
datasets can share one, wherever they live and whatever they are called.

Written by ``baseline update`` on the default branch; a PR run reads them as they were at the
merge-base (``git show MERGE_BASE:PATH``) and never writes them. Files of the older layout
(``<baselines_dir>/<dataset stem>.json``) are still read, but only for the dataset whose path
they recorded, and ``baseline update`` moves them to the new layout.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agent_eval_action.errors import DatasetError
from agent_eval_action.files import write_atomic
from agent_eval_action.loaders import dataset_stem
from agent_eval_action.models import DatasetResult, Results
from agent_eval_action.redaction import Redactor
from agent_eval_action.results_io import dumps, parse_results

# Reads a repository-relative path (at the merge-base, or in the working tree); None if absent.
Reader = Callable[[str], "str | None"]


def baseline_path(baselines_dir: str, dataset_path: str) -> str:
    """Both repository-relative."""
    return f"{_clean(baselines_dir)}/{_clean(dataset_path)}.json"


def legacy_baseline_path(baselines_dir: str, dataset_path: str) -> str:
    return f"{_clean(baselines_dir)}/{dataset_stem(dataset_path)}.json"


def _clean(path: str) -> str:
    return posixpath.normpath(path.replace("\\", "/")).removeprefix("./").rstrip("/")


@dataclass(frozen=True)
class Found:
    dataset: DatasetResult
    path: str  # the baseline file, repository-relative
    legacy: bool


def find_baseline(read: Reader, where: str, baselines_dir: str, paths: list[str], dataset_name: str) -> Found | None:
    """The baseline of a dataset known by ``paths`` (its path now, then its path before a rename),
    in the current layout first, then the legacy one. ``where`` says which tree ``read`` reads."""
    for legacy in (False, True):
        for dataset_path in paths:
            path = (legacy_baseline_path if legacy else baseline_path)(baselines_dir, dataset_path)
            text = read(path)
            if text is None:
                continue
            found = _pick(parse_results(text, f"{path} {where}".strip(), what="baseline"), dataset_path, dataset_name, legacy)
            if found is not None:
                return Found(dataset=found, path=path, legacy=legacy)
    return None


def _pick(results: Results, dataset_path: str, dataset_name: str, legacy: bool) -> DatasetResult | None:
    by_path = [d for d in results.datasets if _clean(d.path) == _clean(dataset_path)]
    if by_path:
        return by_path[0]
    if legacy:
        # A stem-keyed file is shared by every dataset of that file name: it is this dataset's
        # only if it recorded this dataset's path (or a path relative to a sub-directory ending so).
        return next((d for d in results.datasets if _clean(dataset_path).endswith("/" + _clean(d.path))), None)
    by_name = [d for d in results.datasets if d.name == dataset_name]
    return by_name[0] if by_name else results.datasets[0] if len(results.datasets) == 1 else None


def working_tree_reader(root: Path) -> Reader:
    def read(path: str) -> str | None:
        file = root / path
        return file.read_text(encoding="utf-8") if file.is_file() else None

    return read


@dataclass(frozen=True)
class Written:
    path: str  # repository-relative
    changed: bool
    moved_from: str | None = None  # the legacy file this replaced (removed)


def write_baseline(root: Path, baselines_dir: str, dataset: DatasetResult, tool_version: str, redactor: Redactor | None = None) -> Written:
    """Writes the baseline of ``dataset`` (whose ``path`` is repository-relative) in the current
    layout and removes the legacy file that held it; unchanged scores rewrite nothing. Secrets
    are redacted: the file is committed."""
    rel = baseline_path(baselines_dir, dataset.path)
    path = root / rel
    text = dumps(Results(tool_version=tool_version, datasets=[dataset]), redactor)
    before = path.read_text(encoding="utf-8") if path.is_file() else None
    if before != text:
        write_atomic(path, text)  # a SIGTERM mid-write leaves the old baseline, never a 0-byte one
    moved = None
    legacy = legacy_baseline_path(baselines_dir, dataset.path)
    read = working_tree_reader(root)
    try:
        old = find_baseline(lambda p: read(p) if p == legacy else None, "", baselines_dir, [dataset.path], dataset.name)
    except DatasetError:
        old = None  # an unreadable legacy file is left where it is
    if old is not None and old.legacy:
        (root / legacy).unlink()
        moved = legacy
    return Written(path=rel, changed=before != text, moved_from=moved)
