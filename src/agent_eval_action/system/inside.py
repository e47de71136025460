"""Inputs stay inside the repository.

A pull request controls the datasets, the config and the templates it evaluates; a symlink
among them (``evaluation/datasets/env.jsonl -> /proc/self/environ``) would otherwise have the
runner read files it never meant to publish and quote them in errors, results and comments.
Every input file is therefore checked where it really is (symlinks resolved) before it is read.
What the user names on the command line is theirs to choose (``places``): a file is read
wherever it is, and a folder or glob named outside the repository may find files inside it.

The allowed roots: the git repository's top level that holds the working directory (found by
walking up to a ``.git``; without one, the working directory itself), and ``$GITHUB_WORKSPACE``
when set. Results and baseline files that ``compare`` / ``merge`` read are ours, not inputs.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agent_eval_action.system.errors import ConfigError

if TYPE_CHECKING:
    from jinja2 import BaseLoader

OUTSIDE = "resolves outside the repository"


def roots(cwd: str | Path | None = None, env: Mapping[str, str] | None = None) -> list[Path]:
    """Where inputs may live: the repository holding ``cwd`` (default: the working directory)
    and the Actions workspace."""
    here = Path(os.path.realpath(cwd if cwd is not None else os.getcwd()))
    top = next((d for d in (here, *here.parents) if (d / ".git").exists()), here)
    found = [top]
    workspace = (os.environ if env is None else env).get("GITHUB_WORKSPACE")
    if workspace:
        found.append(Path(os.path.realpath(workspace)))
    return found


def is_inside(path: str | Path, cwd: str | Path | None = None, also: Sequence[str] = ()) -> bool:
    """Whether ``path``, symlinks resolved, lies within one of the :func:`roots` or of the places
    ``also`` (resolved paths: see :func:`places`). Reads nothing."""
    real = Path(os.path.realpath(path))
    return any(real.is_relative_to(root) for root in [*roots(cwd), *map(Path, also)])


def places(pattern: str, cwd: str | Path | None = None) -> tuple[str, ...]:
    """Where what ``pattern`` finds may resolve besides the repository, when the user named it on
    the command line: a file, wherever it is (symlinks and all); a folder or glob, inside the
    folder named when that lies outside the repository (a link met in it must not lead out of it,
    and one met inside the repository stays confined to it)."""
    if not glob.has_magic(pattern) and not os.path.isdir(pattern):
        return (os.path.realpath(pattern),)
    parts = Path(pattern).parts
    fixed = Path(*parts[: next((i for i, part in enumerate(parts) if glob.has_magic(part)), len(parts))] or ["."])
    named = Path(os.path.abspath(fixed))
    if any(named.is_relative_to(root) for root in roots(cwd)):
        return ()
    return (os.path.realpath(named),)


def outside_reason(cwd: str | Path | None = None) -> str:
    """The message's tail: names the root, never the target nor anything in it."""
    return f"{OUTSIDE} ({roots(cwd)[0]}); inputs must be files inside it"


def require_inside(path: str | Path, setting: str, cwd: str | Path | None = None) -> None:
    """Raises :class:`ConfigError` naming ``setting`` and the path as given when it lies outside."""
    if not is_inside(path, cwd):
        raise ConfigError(setting, f"{path} {outside_reason(cwd)}")


def template_loader(templates_dir: str) -> BaseLoader:
    """A Jinja loader over ``templates_dir`` that checks the directory and every template file
    it loads (a template may itself be a link) before reading it."""
    from jinja2 import Environment, FileSystemLoader
    from jinja2.loaders import split_template_path

    require_inside(templates_dir, "templates_dir")

    class InsideLoader(FileSystemLoader):
        def get_source(self, environment: Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
            for searchpath in self.searchpath:
                candidate = os.path.join(searchpath, *split_template_path(template))
                if os.path.isfile(candidate):
                    require_inside(candidate, f"templates_dir {template}")
                    break
            return super().get_source(environment, template)

    return InsideLoader(templates_dir)
