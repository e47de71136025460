"""What the base branch knows about this run, read with git: each dataset's base run (the
baseline file the comparison used, for the side-by-side views) and each metric's history.

Baselines are committed on the default branch, so the git log of a baseline file is a metric
history that costs nothing to keep: the last ``depth`` commits that touched the file (in its
current layout, its older stem-keyed one, or under the dataset's path before a rename), read
at the merge-base. No extra branch, no extra commits.
"""

from __future__ import annotations

import contextlib
import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_eval_action.models.results import DatasetResult, Results
from agent_eval_action.models.verdicts import DatasetComparison
from agent_eval_action.repo.baseline import Reader, candidates, find_baseline, match, working_tree_reader
from agent_eval_action.repo.git import Git, Snapshot
from agent_eval_action.repo.results_io import outline_text
from agent_eval_action.system.errors import DatasetError, InfrastructureError
from agent_eval_action.text.jsonish import loads

HISTORY_DEPTH = 20


@dataclass(frozen=True)
class Point:
    """One baseline commit's value of a metric (None: the metric was unscored or absent then)."""

    commit: str
    date: str  # the commit's date, YYYY-MM-DD
    subject: str
    value: float | None


@dataclass
class BaseState:
    """What the verdict and its views read of the merge-base, all of it read before any agent
    code runs (a PR's agent may rewrite ``.git`` while it runs): the files (the config, each
    selected dataset's baseline files) and each selected dataset's metric history."""

    files: Snapshot
    # Dataset path -> metric -> the last baseline commits' values, oldest first.
    history: dict[str, dict[str, list[Point]]] = field(default_factory=dict)


def read_base(files: Snapshot, baselines_dir: str, datasets: list[tuple[str, str | None]], *, depth: int = HISTORY_DEPTH) -> BaseState:
    """Loads into ``files`` the baseline files the ``datasets`` ((path, path before a rename)) may
    have at the snapshot's commit, reads their metric histories, then seals it: nothing more is
    read of the base after this."""
    state = BaseState(files=files)
    known = [(path, [path, *([old] if old else [])]) for path, old in datasets]
    files.load(file for _, paths in known for file, _, _ in candidates(baselines_dir, paths))  # one git call
    for path, paths in known:
        stem = posixpath.splitext(posixpath.basename(path))[0]
        state.history[path] = metric_history(files.git, files.rev, baselines_dir, paths, stem, depth)
    files.seal()
    return state


def _baselines_dir(comparison: DatasetComparison, paths: list[str]) -> str | None:
    """The baselines folder the comparison's file lives in: the folder above it under which it
    is one of the dataset's path-keyed files (its name depends on the folder)."""
    found = comparison.baseline_path
    if not found:
        return None
    folder = posixpath.dirname(found)
    while folder:
        if any(file == found and not legacy for file, _, legacy in candidates(folder, paths)):
            return folder
        folder = posixpath.dirname(folder)
    return posixpath.dirname(found)


def _paths(comparison: DatasetComparison) -> list[str]:
    return [comparison.path, *([comparison.renamed_from] if comparison.renamed_from else [])]


@dataclass
class BaseRuns:
    """What the repository holds beside a compared run: where its base runs were read, each
    dataset's base run, and each metric's history."""

    label: str | None = None
    # Dataset path -> the base's run of it.
    runs: dict[str, DatasetResult] = field(default_factory=dict)
    # Dataset path -> metric -> the last baseline commits' values, oldest first.
    history: dict[str, dict[str, list[Point]]] = field(default_factory=dict)


def read_base_runs(
    results: Results,
    git: Git,
    *,
    compared: Mapping[str, DatasetResult] | None = None,
    base: BaseState | None = None,
    depth: int = HISTORY_DEPTH,
) -> BaseRuns:
    """The base runs and metric histories of ``results``' compared datasets. ``compared``: the
    runs the comparison read (a check hands them forward: nothing is parsed twice); without it,
    each baseline file is read at the selection's merge-base (without one: the working tree).
    ``base``: what the run read of the merge-base before its agent ran (its histories)."""
    merge_base = results.selection.merge_base if results.selection else None
    label = f"merge-base {merge_base[:7]}" if merge_base else "the working tree's baselines"
    found = BaseRuns(label=label, runs=dict(compared or {}))
    read: Reader | None = None
    for comparison in results.comparison or []:
        if comparison.status != "compared" or not comparison.baseline_path:
            continue
        paths = _paths(comparison)
        folder = _baselines_dir(comparison, paths)
        if folder is None:
            continue
        if compared is None:
            if read is None:
                read = (lambda path: git.show(merge_base, path)) if merge_base else working_tree_reader(git.workspace().root)
            try:
                run = find_baseline(read, "", folder, paths, comparison.dataset)
            except DatasetError:
                run = None  # the comparison reported it already
            if run is not None:
                found.runs[comparison.path] = run.dataset
        if base is not None:
            found.history[comparison.path] = base.history.get(comparison.path, {})
        elif git.is_repository():
            found.history[comparison.path] = metric_history(git, merge_base or "HEAD", folder, paths, comparison.dataset, depth)
    return found


def metric_history(git: Git, rev: str, folder: str, paths: list[str], name: str, depth: int = HISTORY_DEPTH) -> dict[str, list[Point]]:
    """Metric -> the values of the last ``depth`` commits (at ``rev``) that wrote this dataset's
    baseline, oldest first. Each commit is read in the files it touched: a stem-keyed file of
    the older layout counts only where it recorded this dataset, so another dataset of the same
    file name adds no point."""
    files = sorted({file for file, _, _ in candidates(folder, paths)})
    try:
        # From the root: the paths are named from there (and taken literally), wherever the run started.
        log = Git(git.workspace().root).run(
            "-c", "core.quotePath=false", "log", f"-n{depth}", "--format=%x1e%H%x1f%cs%x1f%s", "--name-only", rev, "--", *files, check=False
        )
    except InfrastructureError:
        return {}
    if log.returncode != 0:
        return {}
    found: list[tuple[str, str, str, dict[str, Any]]] = []
    for record in log.stdout.split("\x1e")[1:]:
        head, _, names = record.partition("\n")
        commit, date, subject = [*head.split("\x1f", 2), "", ""][:3]
        touched = {line.strip() for line in names.splitlines() if line.strip()}
        summary = _summary_at(_reader_at(git, commit), folder, paths, name, touched)
        if summary is not None:
            found.append((commit, date, subject, summary))
    found.reverse()
    metrics = list(dict.fromkeys(metric for *_, summary in found for metric in summary))
    out: dict[str, list[Point]] = {}
    for metric in metrics:
        points = []
        for commit, date, subject, summary in found:
            figures = summary.get(metric)
            value = figures.get("mean") if isinstance(figures, dict) else None
            points.append(Point(commit=commit, date=date, subject=subject, value=float(value) if isinstance(value, int | float) else None))
        out[metric] = points
    return out


def _reader_at(git: Git, rev: str) -> Reader:
    return lambda path: git.show(rev, path)


def _summary_at(read: Callable[[str], str | None], folder: str, paths: list[str], name: str, touched: set[str]) -> dict[str, Any] | None:
    """The dataset's summary in the baseline files one commit ``touched``, without validating
    the whole file (its questions are most of it, and only the means are wanted)."""
    for file, path, legacy in candidates(folder, paths):
        if file not in touched:
            continue
        text = read(file)
        if text is None:
            continue
        try:  # a baseline of the past whose summaries hold NaN or Infinity, or nested too deep, is left out of the trend
            data = _outline(text)
        except ValueError:
            continue
        datasets = [d for d in data.get("datasets", []) if isinstance(d, dict)] if isinstance(data, dict) else []
        picked = _pick(datasets, folder, file, path, name, legacy)
        if picked is not None and isinstance(picked.get("summary"), dict):
            return dict(picked["summary"])
    return None


def _outline(text: str) -> Any:
    """The file's JSON without its questions where its layout allows (``results_io.outline_text``),
    else whole: the summaries are the same either way."""
    outline = outline_text(text)
    if outline is not None:
        with contextlib.suppress(ValueError):
            return loads(outline, finite=True, depth=None)[0]
    return loads(text, finite=True, depth=None)[0]


def _pick(datasets: list[dict[str, Any]], folder: str, file: str, path: str, name: str, legacy: bool) -> dict[str, Any] | None:
    """As ``baseline.find_baseline`` picks, on the file's datasets as read (not validated whole)."""
    return match(
        datasets,
        path,
        name,
        path_of=lambda d: str(d.get("path", "")),
        name_of=lambda d: str(d.get("name", "")),
        file=(folder, file, legacy),
    )
