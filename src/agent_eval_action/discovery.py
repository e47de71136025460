"""Turning the paths and globs a user gives into dataset files."""

from __future__ import annotations

import os

from wcmatch import glob as wc

from agent_eval_action.config import negations_only
from agent_eval_action.globs import FLAGS, is_glob, matches, split
from agent_eval_action.models import Problem

DATASET_SUFFIXES = (".json", ".csv", ".jsonl", ".ndjson")
NOT_DATASETS = {"test_config.json"}


def _dataset_files_below(directory: str) -> list[str]:
    return sorted(
        os.path.join(root, name)
        for root, _, names in os.walk(directory)
        for name in names
        if name.lower().endswith(DATASET_SUFFIXES) and name not in NOT_DATASETS
    )


def expand_paths(patterns: list[str]) -> tuple[list[str], list[str]]:
    """(files, patterns that matched nothing), in the order the patterns name them: a file or a
    directory (the dataset files below it) by its name, else a glob (``globs``: the files and the
    dataset files below the directories it matches); ``!pattern``
    drops what the patterns before it found, and a later pattern may find it again. A name that
    exists is taken as itself, brackets and all (``run[1].json``)."""
    files: list[str] = []
    empty: list[str] = []
    for pattern in patterns:
        include, glob = split(pattern)
        if not include:
            files = [f for f in files if not matches(f, [glob])]
            continue
        if os.path.isdir(pattern):
            found = _dataset_files_below(pattern)
        elif is_glob(pattern) and not os.path.isfile(pattern):
            # `**` does not enter linked directories; a linked file is checked where it points when read.
            hits = wc.glob(glob, flags=FLAGS)
            found = sorted({f for hit in hits for f in ([hit] if os.path.isfile(hit) else _dataset_files_below(hit))})
        else:
            found = [pattern]  # a missing file is reported by the loader, by name
        if not found:
            empty.append(pattern)
        for path in found:
            if path not in files:
                files.append(path)
    return files, empty


def dataset_files(patterns: list[str], *, defaults: bool = False) -> tuple[list[str], list[Problem]]:
    """The dataset files the patterns name, and a problem for each that names none: a typo in a
    glob must not turn into a green check with nothing checked. The built-in default globs are
    one choice among formats, so only all of them matching nothing is a problem."""
    refused = negations_only(patterns)
    if refused:
        return [], [Problem(path=", ".join(patterns), message=f"{', '.join(patterns)}: {refused}")]
    files, empty = expand_paths(patterns)
    if defaults:
        empty = [] if files else [", ".join(patterns)]
    fix = "check the spelling, the `datasets` setting or the --datasets flag, and the working directory"
    return files, [Problem(path=p, message=f"{p}: matched no dataset files ({fix})") for p in empty]
