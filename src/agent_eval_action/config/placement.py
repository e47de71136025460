"""Path placement: a config's paths are written relative to its own folder and held relative to
the working directory; :func:`placed` moves them from the one to the other."""

from __future__ import annotations

import os
import posixpath
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_eval_action.config.schema import Config

# The settings that name one path, and those that name a list of paths (or patterns).
PATH_SETTINGS = ("output_dir", "baselines_dir", "model_cache", "templates_dir")
PATH_LISTS = ("datasets", "metric_definitions", "agent_paths")


def placed(config: Config, folder: str, cwd: str | Path = ".") -> Config:
    """A copy of ``config`` (whose paths are written relative to ``folder``, itself relative to
    ``cwd``) with its paths made relative to ``cwd``, and ``folder`` recorded in its origin."""
    absolute = str((Path(cwd) / folder).resolve())
    folder = Path(folder).as_posix()
    config = config.model_copy(deep=True).with_origin(folder=absolute, moved_from=folder)
    if folder in ("", "."):
        return config
    update: dict[str, Any] = {}
    for setting in PATH_LISTS:
        paths = getattr(config, setting)
        if paths is not None:
            update[setting] = [moved(p, folder) for p in paths]
    for setting in PATH_SETTINGS:
        value = getattr(config, setting)
        if value:
            update[setting] = moved(value, folder)
    if config.agent_python and "/" in config.agent_python:
        update["agent_python"] = moved(config.agent_python, folder)
    if config.agent and ":" not in config.agent and (Path(absolute) / config.agent).is_dir():
        update["agent"] = moved(config.agent, folder)  # an agent directory (a module name stays as it is)
    if config.judge.cache_dir:
        update["judge"] = config.judge.model_copy(update={"cache_dir": moved(config.judge.cache_dir, folder)})
    update["judges"] = {
        name: judge.model_copy(update={"prompt_file": moved(judge.prompt_file, folder)}) if judge.prompt_file else judge
        for name, judge in config.judges.items()
    }
    return config.model_copy(update=update)


def moved(path: str, folder: str) -> str:
    """``path``, written relative to ``folder``, relative to the working directory instead (an
    exclusion stays one: ``!drafts/**`` -> ``!agents/drafts/**``)."""
    if path.startswith("!"):
        return "!" + moved(path[1:], folder)
    if os.path.isabs(path) or path.startswith("~") or folder in ("", "."):
        return path
    return posixpath.normpath(posixpath.join(folder, path))
