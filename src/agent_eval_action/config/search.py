"""The search for a config: ``agent-eval.toml``, else ``[tool.agent-eval]`` in ``pyproject.toml``,
in the working directory's folder and each folder above it up to the repository's top (as ruff
and pytest look for theirs), or the file the user named. One search (:func:`find_config`) for
every tree a check reads: the working tree, the merge-base's commit, the base's checkout."""

from __future__ import annotations

import os
import posixpath
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_eval_action.config.placement import placed
from agent_eval_action.config.schema import Config, Origin, validate
from agent_eval_action.system.errors import ConfigError
from agent_eval_action.system.inside import require_inside, roots

CONFIG_FILE = "agent-eval.toml"
PYPROJECT_TABLE = "tool.agent-eval"
CANDIDATES: list[tuple[str, str | None]] = [(CONFIG_FILE, None), ("pyproject.toml", PYPROJECT_TABLE)]

Reader = Callable[[str], str | None]


def config_candidates(path: str | None, folders: list[str] | None = None) -> list[tuple[str, str | None]]:
    """The files a config is looked for in, in order, with the TOML table that holds it: ``path``
    when given, else ``agent-eval.toml`` then ``pyproject.toml`` in each of ``folders`` (nearest
    first; default: the working directory alone)."""
    if path is not None:
        return [(path, PYPROJECT_TABLE if Path(path).name == "pyproject.toml" else None)]
    return [(posixpath.join(folder, name) if folder else name, table) for folder in (folders or [""]) for name, table in CANDIDATES]


def upward_folders(prefix: str) -> list[str]:
    """The folders from ``prefix`` (a POSIX path from the repository's top, "" or "." the top)
    up to the top, nearest first, as POSIX paths from the top ("" the top)."""
    here = posixpath.normpath(prefix.strip("/") or ".")
    parts = [] if here == "." else here.split("/")
    return ["/".join(parts[:i]) for i in range(len(parts), -1, -1)]


@dataclass(frozen=True)
class Found:
    """The config a search found: the settings, and the file's path as the reader names it."""

    config: Config
    path: str


def find_config(read: Reader, folders: list[str], named: str | None = None, *, search_too: bool = False) -> Found | None:
    """The one config search, wherever the files are: ``read`` gives a file's text from its POSIX
    path (None: no such file). ``named``: the file the user named, read alone (``search_too``:
    then, when it is not there, the search); else in each of ``folders`` (nearest first),
    ``agent-eval.toml`` then ``pyproject.toml`` holding ``[tool.agent-eval]``: the first that
    holds a config. None when none does; an unreadable file raises ConfigError naming it."""
    looked = config_candidates(named, None) if named else []
    if not named or search_too:
        looked += config_candidates(None, folders)
    for name, table in looked:
        name = posixpath.normpath(name)
        text = read(name)
        if text is None:
            continue
        config = config_from_text(text, name, table)
        if config is not None:
            return Found(config, name)
    return None


def find_again(origin: Origin, read: Reader, prefix: str) -> Found | None:
    """The config of another tree (the merge-base's commit, the base's checkout), found as that
    tree finds its own: from ``prefix`` (the working directory's folder there, from its top)
    upward, after the file the user named (``origin``), at the same place from ``prefix``."""
    here = posixpath.normpath(prefix.strip("/") or ".")
    named = posixpath.normpath(posixpath.join(here, origin.file)) if origin.file and origin.named else None
    return find_config(read, upward_folders(here), named, search_too=True)


def file_reader(top: Path, *, check: Callable[[Path], object] | None = None) -> Reader:
    """A :func:`find_config` reader of the files under ``top``; ``check`` sees each file found
    before it is read (it raises to refuse one)."""

    def read(name: str) -> str | None:
        file = top / name
        if not file.is_file():
            return None
        if check is not None:
            check(file)
        try:
            return file.read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise ConfigError(name, f"not valid TOML: {error}") from None

    return read


def load_config(path: str | None = None, cwd: str | Path = ".", *, anywhere: bool = False) -> Config:
    """Reads ``path``, else the nearest ``agent-eval.toml`` or ``pyproject.toml`` with
    ``[tool.agent-eval]`` from ``cwd`` up to the repository's top (:func:`find_config`), else defaults.

    The paths in it are relative to its folder (without a file: the repository's top) and are
    returned relative to ``cwd``. A file found by the search must lie inside the repository
    holding ``cwd`` (symlinks resolved), and so must ``path`` unless ``anywhere`` (a file the user
    named on the command line, which is read wherever it is)."""
    base = Path(cwd)
    top = roots(base)[0]
    if path is not None:
        if not anywhere:
            require_inside(path, "config", base)
        if not (base / path).is_file():
            raise ConfigError(str(path), "config file not found")
        folders: list[str] = []
    else:
        folders = _upward_from(base.resolve(), top.resolve())
    checked = None if path is not None else (lambda file: require_inside(file, "config", base))
    found = find_config(file_reader(base, check=checked), folders, path)
    if found is None:
        return placed(Config(), os.path.relpath(top, base.resolve()), base)
    config = placed(found.config, os.path.relpath((base / found.path).resolve().parent, base.resolve()), base)
    config = config.with_origin(named=path is not None)
    if config.custom_metrics:
        from agent_eval_action.metrics.custom import custom_metrics

        custom_metrics(config)  # spelling only: the user's code is imported in its own process when scoring starts
    return config


def _upward_from(start: Path, top: Path) -> list[str]:
    """The folders from ``start`` up to ``top``, nearest first, named from ``start`` ("", "..",
    "../.."); only ``start`` when it is not inside ``top``."""
    if not start.is_relative_to(top):
        return [""]
    named = [os.path.relpath(top / folder, start) for folder in upward_folders(start.relative_to(top).as_posix())]
    return ["" if name == "." else Path(name).as_posix() for name in named]


def config_from_text(text: str, name: str, table: str | None) -> Config | None:
    """The config a file's text holds; None when ``table`` is absent from it (a pyproject.toml
    without ``[tool.agent-eval]``)."""
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(name, f"not valid TOML: {error}") from None
    for part in table.split(".") if table else []:
        inner = data.get(part)
        if not isinstance(inner, dict):
            return None
        data = inner
    source = name if not table else f"{name} [{table}]"
    return validate(data, source).with_origin(file=name, table=table)
