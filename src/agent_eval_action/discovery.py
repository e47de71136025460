"""Turning the paths and globs a user gives into dataset files."""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field

from agent_eval_action.inside import places
from agent_eval_action.models import Problem

DATASET_SUFFIXES = (".json", ".csv", ".jsonl", ".ndjson")
NOT_DATASETS = {"test_config.json"}


def expand_paths(patterns: list[str]) -> tuple[list[str], list[str]]:
    """(files, patterns that matched nothing). Directories contribute the dataset files below them."""
    files: list[str] = []
    empty: list[str] = []
    for pattern in patterns:
        found = expand(pattern)
        if not found:
            empty.append(pattern)
        for path in found:
            if path not in files:
                files.append(path)
    return files, empty


def expand(pattern: str) -> list[str]:
    """The files one path, directory or glob names (relative to the working directory)."""
    if os.path.isdir(pattern):
        return sorted(
            os.path.join(root, name)
            for root, _, names in os.walk(pattern)
            for name in names
            if name.lower().endswith(DATASET_SUFFIXES) and name not in NOT_DATASETS
        )
    if glob.has_magic(pattern):
        return sorted(p for p in glob.glob(pattern, recursive=True) if os.path.isfile(p))
    return [pattern]  # a missing file is reported by the loader, by name


@dataclass
class Found:
    """Dataset files, a problem for each pattern that named none, and for the files the user
    named, where else than the repository each may resolve (``inside.places``)."""

    files: list[str]
    problems: list[Problem]
    places: dict[str, tuple[str, ...]] = field(default_factory=dict)


def dataset_files(patterns: list[str], *, defaults: bool = False, named: bool = False) -> Found:
    """The dataset files the patterns name, and a problem for each that names none: a typo in a
    glob must not turn into a green check with nothing checked. The built-in default globs are
    one choice among formats, so only all of them matching nothing is a problem. ``named``: the
    user typed the patterns (command-line paths), so what they name is read where it is."""
    files, empty = expand_paths(patterns)
    if defaults:
        empty = [] if files else [", ".join(patterns)]
    fix = "check the spelling, the `datasets` setting or the --datasets flag, and the working directory"
    problems = [Problem(path=p, message=f"{p}: matched no dataset files ({fix})") for p in empty]
    where: dict[str, tuple[str, ...]] = {}
    for pattern in patterns if named else []:
        allowed = places(pattern)
        for file in expand(pattern) if allowed else []:
            where[file] = (*where.get(file, ()), *allowed)
    return Found(files, problems, where)
