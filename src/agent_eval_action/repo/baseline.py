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

import contextlib
import errno
import hashlib
import posixpath
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from agent_eval_action.datasets import dataset_stem
from agent_eval_action.models.results import DatasetResult, Results
from agent_eval_action.repo.results_io import dumps, parse_results
from agent_eval_action.system.errors import DatasetError
from agent_eval_action.system.files import write_atomic
from agent_eval_action.text.redaction import Redactor

# Reads a repository-relative path (at the merge-base, or in the working tree); None if absent.
Reader = Callable[[str], "str | None"]
T = TypeVar("T")


# The extensions a dataset file has (loaders.load_dataset).
DATASET_SUFFIXES = (".json", ".jsonl", ".ndjson", ".csv")
# A baseline's file name longer than this (in UTF-8 bytes) is cut and given a hash of the
# dataset's path: 255 bytes is the common limit, eCryptfs allows 143.
MAX_NAME_BYTES = 140


def baseline_path(baselines_dir: str, dataset_path: str) -> str:
    """The dataset's baseline file (both repository-relative): the dataset's path mirrored once
    under the baselines folder, from the folder holding both (the baselines folder's parent):
    ``evaluation/datasets/cs.json`` -> ``evaluation/baselines/datasets/cs.json``. A dataset
    outside that folder (or inside the baselines folder) keeps its path from the repository
    root, under a folder named as the baselines folder, a name no mirrored path can start with
    (its file would be inside the baselines folder): ``data/cs.json`` ->
    ``evaluation/baselines/baselines/data/cs.json``. So no two dataset paths share a file.
    See :func:`_file` for the name."""
    path = _clean(dataset_path)
    return _file(baselines_dir, _mirrored(_clean(baselines_dir), path), path)


def _mirrored(folder: str, path: str) -> str:
    parent, _, own = folder.rpartition("/")
    if not parent or folder == ".":  # a baselines folder at the root mirrors the path whole
        return path
    if path.startswith(parent + "/") and not path.startswith(folder + "/"):
        return path[len(parent) + 1 :]
    return f"{own}/{path}"


def repository_baseline_path(baselines_dir: str, dataset_path: str) -> str:
    """The layout before: the dataset's whole path from the repository root under the baselines
    folder (``evaluation/baselines/evaluation/datasets/cs.json``), which doubled the folder both
    share."""
    path = _clean(dataset_path)
    return _file(baselines_dir, path, path)


def _file(baselines_dir: str, mirrored: str, path: str) -> str:
    """``<dir>/<mirrored>`` for a ``.json`` dataset; any other dataset gets ``.json`` added:
    ``cs.jsonl`` -> ``cs.jsonl.json``. A ``.json`` dataset whose name would then meet another
    dataset's (``cs.jsonl.json`` beside ``cs.jsonl``) keeps its name and gets ``.json`` added too.
    A file name too long for some filesystem is cut and ends with a hash of the dataset's
    ``path`` (the baseline records the path; it is read only for that path)."""
    lower = mirrored.lower()
    name = mirrored if lower.endswith(".json") and not lower[:-5].endswith(DATASET_SUFFIXES) else mirrored + ".json"
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
    the whole-path one, the doubled-suffix one, then the flat stem-keyed one."""
    out: list[tuple[str, str, bool]] = []
    for layout in LAYOUTS:
        for path in paths:
            file = layout(baselines_dir, path)
            if all(file != seen for seen, _, _ in out):
                out.append((file, path, layout is legacy_baseline_path))
    return out


# The layouts, newest first; the last is the stem-keyed one.
LAYOUTS = (baseline_path, repository_baseline_path, doubled_baseline_path, legacy_baseline_path)


def own_files(baselines_dir: str, dataset_path: str) -> set[str]:
    """The files a dataset's baseline has had in the path-keyed layouts: in them, that dataset's."""
    return {layout(baselines_dir, dataset_path) for layout in LAYOUTS[:-1]}


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
        stored, shared = _parsed(text, named)
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
            return Found(dataset=_own(found) if shared else found, path=path, legacy=path != baseline_path(baselines_dir, dataset_path))
    return None


# A check reads its merge-base's baseline up to four times (what the base observed, what may be
# reused, the trend, the comparison), and validating a file is most of reading it (0.2 s for 200
# runs): within :func:`read_once`, each text is validated once (keyed by its hash: the texts are
# not kept) and each caller gets its own copy; outside it, every read validates.
_PARSED: dict[bytes, Results] | None = None
_PARSED_LOCK = threading.Lock()


@contextlib.contextmanager
def read_once() -> Iterator[None]:
    """While the block runs (a check), a baseline text read again is not validated again; what
    was kept is dropped when the outermost such block ends."""
    global _PARSED
    with _PARSED_LOCK:
        outer = _PARSED
        if outer is None:
            _PARSED = {}
    try:
        yield
    finally:
        with _PARSED_LOCK:
            _PARSED = outer


def _parsed(text: str, named: str) -> tuple[Results, bool]:
    """``parse_results`` of a baseline's text, and whether it is kept (shared with later reads):
    within :func:`read_once`, validated once for the same text (what it holds does not depend on
    where it was read; an unreadable one raises every time, naming where)."""
    with _PARSED_LOCK:
        kept = _PARSED
    if kept is None:
        return parse_results(text, named, what="baseline"), False
    key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    with _PARSED_LOCK:
        stored = kept.get(key)
    if stored is None:
        stored = parse_results(text, named, what="baseline")
        with _PARSED_LOCK:
            kept[key] = stored
    return stored, True


def _own(dataset: DatasetResult) -> DatasetResult:
    """A copy of a kept baseline's dataset that its caller may change (a question's fields or
    scores, a summary's figures, its lists) without changing what the next caller reads. Not
    copied: the Score objects themselves and the transcripts, which nothing changes once made."""
    return dataset.model_copy(
        update={
            "questions": [question.model_copy(update={"scores": dict(question.scores)}) for question in dataset.questions],
            "summary": {name: summary.model_copy() for name, summary in dataset.summary.items()},
            "warnings": list(dataset.warnings),
            "criteria": dict(dataset.criteria),
            "imports": list(dataset.imports) if dataset.imports is not None else None,
            "environment_parts": dict(dataset.environment_parts) if dataset.environment_parts is not None else None,
        }
    )


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
    (or a path relative to a sub-directory ending so) and is not another dataset's file of a
    path-keyed layout (a dataset at the root, cs.json): a stem is shared by every dataset of that
    file name. From a path-keyed baseline ``file``, a run recording another dataset's path whose
    file this is (in an older layout: ``data/cs.json``'s whole-path file is where
    ``evaluation/data/cs.json``'s mirrored one is now) is that dataset's, never this one's.
    ``path_of``/``name_of`` read a dataset (a model, or a dict not validated whole)."""
    for dataset in datasets:
        if _clean(str(path_of(dataset))) == _clean(path):
            return dataset
    if file is not None:
        folder, name_of_file, legacy = file

        def anothers(d: T) -> bool:
            return name_of_file in own_files(folder, _clean(str(path_of(d))))

        if legacy:
            return next((d for d in datasets if _clean(path).endswith("/" + _clean(str(path_of(d)))) and not anothers(d)), None)
        datasets = [d for d in datasets if not anothers(d)]
        if not datasets:
            return None
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
    dataset: str = ""  # the dataset's repository path it records


def write_baseline(root: Path, baselines_dir: str, dataset: DatasetResult, tool_version: str, redactor: Redactor | None = None) -> Written:
    """Writes the baseline of ``dataset`` (whose ``path`` is repository-relative) in the current
    layout and removes the file of an older layout that held it; unchanged scores rewrite
    nothing. Secrets are redacted: the file is committed."""
    rel = baseline_path(baselines_dir, dataset.path)
    path = root / rel
    text = dumps(Results(tool_version=tool_version, datasets=[dataset]), redactor, packed=True)
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
    return Written(path=rel, changed=before != text, moved_from=moved, dataset=dataset.path)
