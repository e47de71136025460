"""Turning the paths and globs a user gives into dataset files."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from wcmatch import glob as wc

from agent_eval_action.config import Config, negations_only
from agent_eval_action.datasets import adk_file
from agent_eval_action.models.results import Problem
from agent_eval_action.repo.globs import FLAGS, is_glob, matches, split
from agent_eval_action.system.inside import places

DATASET_SUFFIXES = (".json", ".csv", ".jsonl", ".ndjson")


def _dataset_files_below(directory: str, skipped: dict[str, str] | None = None) -> list[str]:
    """The dataset files below ``directory``; ADK's own files there (sessions, test configs) are
    left out, each with what it is in ``skipped``."""
    files = []
    for root, _, names in os.walk(directory):
        for name in names:
            if not name.lower().endswith(DATASET_SUFFIXES):
                continue
            path = os.path.join(root, name)
            what = adk_file(path)
            if what is None:
                files.append(path)
            elif skipped is not None:
                skipped[path] = what
    return sorted(files)


def dataset_paths(paths: list[str], patterns: list[str]) -> list[str]:
    """The dataset files among ``paths`` (a listing, e.g. a commit's) that ``patterns`` select,
    as :func:`expand_paths` would select them on disk."""
    return [path for path in paths if path.lower().endswith(DATASET_SUFFIXES) and adk_file(path) is None and matches(path, patterns)]


def expand_paths(patterns: list[str], skipped: dict[str, str] | None = None) -> tuple[list[str], list[str]]:
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
        found = expand(pattern, skipped)
        if not found:
            empty.append(pattern)
        for path in found:
            if path not in files:
                files.append(path)
    return files, empty


def expand(pattern: str, skipped: dict[str, str] | None = None) -> list[str]:
    """The files one path, directory or glob (not an exclusion) names, relative to the working
    directory; ADK's own files a directory or glob finds are left out (into ``skipped``)."""
    if os.path.isdir(pattern):
        return _dataset_files_below(pattern, skipped)
    if is_glob(pattern) and not os.path.isfile(pattern):
        # `**` does not enter linked directories; a linked file is checked where it points when read.
        found: set[str] = set()
        for hit in wc.glob(pattern, flags=FLAGS):
            if not os.path.isfile(hit):
                found.update(_dataset_files_below(hit, skipped))
            elif (what := adk_file(hit)) is None:
                found.add(hit)
            elif skipped is not None:
                skipped[hit] = what
        return sorted(found)
    return [pattern]  # a missing file is reported by the loader, by name


def configured_datasets(config: Config, given: list[str] | None = None, *, named: bool = False) -> Found:
    """The dataset files ``given`` names, else the config's ``datasets`` (:func:`dataset_files`):
    its built-in defaults, and whether a config file was found at all, said as such."""
    if given:
        return dataset_files(given, named=named)
    defaults = config.datasets == config.default_datasets()
    return dataset_files(config.datasets, defaults=defaults, unconfigured=config.origin.file is None)


@dataclass
class Found:
    """Dataset files, a problem for each pattern that named none, and for the files the user
    named, where else than the repository each may resolve (``inside.places``)."""

    files: list[str]
    problems: list[Problem]
    places: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # ADK's own files (sessions, test configs) a folder or glob held, and what each is: not datasets.
    skipped: dict[str, str] = field(default_factory=dict)


def dataset_files(patterns: list[str], *, defaults: bool = False, named: bool = False, unconfigured: bool = False) -> Found:
    """The dataset files the patterns name, and a problem for each that names none: a typo in a
    glob must not turn into a green check with nothing checked. The built-in default globs are
    one choice among formats, so only all of them matching nothing is a problem. ``named``: the
    user typed the patterns (command-line paths), so what they name is read where it is.
    ``unconfigured``: no config file was found, so the default globs matching nothing most likely
    means a project not set up (or a command run from the wrong folder): the problem says how."""
    refused = negations_only(patterns)
    if refused:
        return Found([], [Problem(path=", ".join(patterns), message=f"{', '.join(patterns)}: {refused}")])
    skipped: dict[str, str] = {}
    files, empty = expand_paths(patterns, skipped)
    if defaults:
        empty = [] if files else [", ".join(patterns)]
    fix = "check the spelling, the `datasets` setting or the --datasets flag, and the working directory"
    if defaults and unconfigured:
        fix = (
            "no agent-eval.toml, nor [tool.agent-eval] in a pyproject.toml, was found in this folder or above it in the "
            "repository: `python -m agent_eval_action init` sets a project up; or name the datasets (the `datasets` "
            "setting or input, --datasets)"
        )
    problems = [Problem(path=p, message=f"{p}: matched no dataset files ({fix})") for p in empty]
    where: dict[str, tuple[str, ...]] = {}
    for pattern in patterns if named else []:
        include, _ = split(pattern)
        allowed = places(pattern) if include else ()
        for file in expand(pattern) if allowed else []:
            if file in files:  # a later exclusion dropped the others
                where[file] = (*where.get(file, ()), *allowed)
    return Found(files, problems, where, {path: what for path, what in skipped.items() if path not in files})
