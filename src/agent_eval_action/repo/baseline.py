"""Baseline files: one results file per dataset under ``<baselines_dir>/``, named by the
dataset's path from the repository root (:func:`baseline_path`), so no two datasets can share
one, wherever they live and whatever they are called.

Written by ``baseline update`` on the default branch; a PR run reads them as they were at the
merge-base (before any agent code runs) and never writes them. Files of the older layouts
(``<dataset path>.json``, which doubled a ``.json`` suffix, and the flat ``<dataset stem>.json``)
are still read, the stem-keyed ones only for the dataset whose path they recorded, and
``baseline update`` moves them to the current layout.
"""

from __future__ import annotations

import errno
import hashlib
import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from agent_eval_action.core.errors import DatasetError
from agent_eval_action.core.files import write_atomic
from agent_eval_action.core.redaction import Redactor
from agent_eval_action.core.results import DatasetResult, Results
from agent_eval_action.datasets import dataset_stem
from agent_eval_action.repo.results_io import dumps, parse_results

# Reads a repository-relative path (at the merge-base, or in the working tree); None if absent.
Reader = Callable[[str], "str | None"]
T = TypeVar("T")


# The extensions a dataset file has (loaders.load_dataset).
DATASET_SUFFIXES = (".json", ".jsonl", ".ndjson", ".csv")
# A baseline's file name longer than this (in UTF-8 bytes) is cut and given a hash of the
# dataset's path: 255 bytes is the common limit, eCryptfs allows 143.
MAX_NAME_BYTES = 140


def baseline_path(baselines_dir: str, dataset_path: str) -> str:
    """The dataset's baseline file (both repository-relative): ``datasets/cs.json`` ->
    ``<dir>/datasets/cs.json``; any other dataset gets ``.json`` added: ``cs.jsonl`` ->
    ``<dir>/cs.jsonl.json``. A ``.json`` dataset whose name would then meet another dataset's
    (``cs.jsonl.json`` beside ``cs.jsonl``) keeps its name and gets ``.json`` added too, so no two
    dataset paths share a file. A file name too long for some filesystem is cut and ends with a
    hash of the dataset's path (the baseline records the path; it is read only for that path)."""
    path = _clean(dataset_path)
    lower = path.lower()
    name = path if lower.endswith(".json") and not lower[:-5].endswith(DATASET_SUFFIXES) else path + ".json"
    folder, _, file = name.rpartition("/")
    if len(file.encode()) > MAX_NAME_BYTES:
        digest = hashlib.sha256(path.encode()).hexdigest()[:16]
        file = file.encode()[: MAX_NAME_BYTES - 30].decode(errors="ignore") + f"-{digest}.json"
    return f"{_clean(baselines_dir)}/{folder + '/' if folder else ''}{file}"


def doubled_baseline_path(baselines_dir: str, dataset_path: str) -> str:
    """The layout before: ``<dataset path>.json`` (``cs.json.json``)."""
    return f"{_clean(baselines_dir)}/{_clean(dataset_path)}.json"


def legacy_baseline_path(baselines_dir: str, dataset_path: str) -> str:
    return f"{_clean(baselines_dir)}/{dataset_stem(dataset_path)}.json"


def candidates(baselines_dir: str, paths: list[str]) -> list[tuple[str, str, bool]]:
    """Where the baseline of a dataset known by ``paths`` (its path now, then before a rename) may
    be, in the order looked: (file, dataset path, stem-keyed legacy file) for the current layout,
    the doubled-suffix one, then the flat stem-keyed one."""
    out: list[tuple[str, str, bool]] = []
    for layout in (baseline_path, doubled_baseline_path, legacy_baseline_path):
        for path in paths:
            file = layout(baselines_dir, path)
            if all(file != seen for seen, _, _ in out):
                out.append((file, path, layout is legacy_baseline_path))
    return out


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
    for path, dataset_path, legacy in candidates(baselines_dir, paths):
        text = read(path)
        if text is None:
            continue
        named = f"{path} {where}".strip()
        stored = parse_results(text, named, what="baseline")
        if not stored.datasets:
            # An emptied record is no "no baseline yet": it would pass every PR on nothing.
            raise DatasetError(
                named, 'holds no datasets ("datasets": []): restore it from git, or run `baseline update` on the base branch'
            )
        found = _pick(stored, baselines_dir, path, dataset_path, dataset_name, legacy)
        if found is not None and not found.questions:
            raise DatasetError(
                named, f'holds no questions of {dataset_path} ("questions": []): restore it, or run `baseline update` on the base branch'
            )
        if found is not None:
            return Found(dataset=found, path=path, legacy=path != baseline_path(baselines_dir, dataset_path))
    return None


def _pick(results: Results, baselines_dir: str, file: str, dataset_path: str, dataset_name: str, legacy: bool) -> DatasetResult | None:
    return match(
        results.datasets, dataset_path, dataset_name, path_of=lambda d: d.path, name_of=lambda d: d.name, file=(baselines_dir, file, legacy)
    )


def match(
    datasets: Sequence[T],
    path: str,
    name: str,
    *,
    path_of: Callable[[T], str],
    name_of: Callable[[T], str],
    file: tuple[str, str, bool] | None = None,
    only: bool = True,
) -> T | None:
    """The one way a dataset is matched to its run in a baseline or results file: by path, else
    by name, else the file's only dataset (``only``). From a stem-keyed legacy baseline ``file``
    ((baselines dir, file, legacy)) the run is this dataset's only if the file recorded its path
    (or a path relative to a sub-directory ending so) and is not another dataset's file of the
    current layout (a dataset at the root, cs.json): a stem is shared by every dataset of that
    file name. ``path_of``/``name_of`` read a dataset (a model, or a dict not validated whole)."""
    for dataset in datasets:
        if _clean(str(path_of(dataset))) == _clean(path):
            return dataset
    if file is not None and file[2]:
        folder, name_of_file, _ = file
        return next(
            (
                d
                for d in datasets
                if _clean(path).endswith("/" + _clean(str(path_of(d)))) and baseline_path(folder, _clean(str(path_of(d)))) != name_of_file
            ),
            None,
        )
    named = [d for d in datasets if name_of(d) == name]
    return named[0] if named else datasets[0] if only and len(datasets) == 1 else None


def working_tree_reader(root: Path) -> Reader:
    def read(path: str) -> str | None:
        try:
            return (root / path).read_text(encoding="utf-8")
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        except OSError as error:
            if error.errno == errno.ENAMETOOLONG:  # an older layout's name for a long dataset name
                return None
            raise

    return read


@dataclass(frozen=True)
class Written:
    path: str  # repository-relative
    changed: bool
    moved_from: str | None = None  # the legacy file this replaced (removed)


def write_baseline(root: Path, baselines_dir: str, dataset: DatasetResult, tool_version: str, redactor: Redactor | None = None) -> Written:
    """Writes the baseline of ``dataset`` (whose ``path`` is repository-relative) in the current
    layout and removes the file of an older layout that held it; unchanged scores rewrite
    nothing. Secrets are redacted: the file is committed."""
    rel = baseline_path(baselines_dir, dataset.path)
    path = root / rel
    text = dumps(Results(tool_version=tool_version, datasets=[dataset]), redactor)
    before = path.read_text(encoding="utf-8") if path.is_file() else None
    if before != text:
        write_atomic(path, text)  # a SIGTERM mid-write leaves the old baseline, never a 0-byte one
    moved = None
    read = working_tree_reader(root)

    def only(file: str) -> Reader:
        return lambda path: read(path) if path == file else None

    for old_file, _, _ in candidates(baselines_dir, [dataset.path])[1:]:  # [0] is the file just written
        try:
            old = find_baseline(only(old_file), "", baselines_dir, [dataset.path], dataset.name)
        except DatasetError:
            old = None  # an unreadable old file is left where it is
        if old is not None and old.legacy:
            (root / old_file).unlink()
            moved = moved or old_file
    return Written(path=rel, changed=before != text, moved_from=moved)
