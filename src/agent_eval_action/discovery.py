"""Turning the paths and globs a user gives into dataset files."""

from __future__ import annotations

import glob
import os

from agent_eval_action.models import Problem

DATASET_SUFFIXES = (".json", ".csv", ".jsonl", ".ndjson")
NOT_DATASETS = {"test_config.json"}


def expand_paths(patterns: list[str]) -> tuple[list[str], list[str]]:
    """(files, patterns that matched nothing). Directories contribute the dataset files below them."""
    files: list[str] = []
    empty: list[str] = []
    for pattern in patterns:
        if os.path.isdir(pattern):
            found = sorted(
                os.path.join(root, name)
                for root, _, names in os.walk(pattern)
                for name in names
                if name.lower().endswith(DATASET_SUFFIXES) and name not in NOT_DATASETS
            )
        elif glob.has_magic(pattern):
            found = sorted(p for p in glob.glob(pattern, recursive=True) if os.path.isfile(p))
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
    files, empty = expand_paths(patterns)
    if defaults:
        empty = [] if files else [", ".join(patterns)]
    fix = "check the spelling, the `datasets` setting or the --datasets flag, and the working directory"
    return files, [Problem(path=p, message=f"{p}: matched no dataset files ({fix})") for p in empty]
