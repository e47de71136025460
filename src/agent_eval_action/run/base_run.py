"""compare-with = "base": the merge-base's agent, checked out beside the PR's and run now.

The base's code goes into a temporary git worktree (detached at the merge-base, removed at the
end, whatever happens); its agent is the one the base's own config names, run with its own
environment (the ``install`` command, its venv cached by its dependency files) from that
checkout. :mod:`evaluation` runs it beside the PR's agent, question by question.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TextIO

from agent_eval_action.config import CANDIDATES, Config, config_candidates, config_from_text, upward
from agent_eval_action.core.errors import ConfigError
from agent_eval_action.repo.git import Git


@contextlib.contextmanager
def base_checkout(git: Git, merge_base: str) -> Iterator[Path]:
    """The merge-base's tree in a new temporary worktree (its top folder), removed on the way
    out: after the check, a failure or an interrupt."""
    parent = Path(tempfile.mkdtemp(prefix="agent-eval-base-"))
    tree = parent / "base"
    try:
        git.add_worktree(tree, merge_base)
        yield tree
    finally:
        git.remove_worktree(tree)
        shutil.rmtree(parent, ignore_errors=True)


def base_config(head: Config, tree: Path, prefix: str, *, python: str | None) -> Config:
    """The config the base's agent runs with: ``head`` (the run's settings, the gate's rules)
    with the agent the base's own config names (the PR's when it names none), imported
    from the base's checkout ``tree`` (``prefix``: the folder the check runs from, from the
    repository's top), under ``python`` when an install made one for it."""
    here = tree / prefix if prefix else tree
    agent, folder = base_agent(tree, here, head.file)
    if agent is None:
        agent, folder = head.agent, here / (os.path.relpath(head.folder, Path.cwd()) if head.folder else ".")
    if agent and ":" not in agent and not os.path.isabs(agent) and (folder / agent).exists():
        agent = str((folder / agent).resolve())  # an agent directory, in the base's checkout
    # Worker processes always: two agents of one module name cannot share this process.
    twin = head.with_overrides(agent=agent, in_process=False, **({"agent_python": python} if python else {}))
    moved = os.path.relpath(head.folder, Path.cwd()) if head.folder else "."
    twin.folder = str((here / moved).resolve())
    return twin


def base_agent(tree: Path, here: Path, named: str | None) -> tuple[str | None, Path]:
    """The agent the base's own config names, and the folder that config is in: the file the run
    named (``named``, from ``here``), else the nearest config upward from ``here`` in the base's
    checkout, found as :func:`load_config` finds one. Read as text: nothing of the base is
    imported here. None when it names none or cannot be read."""
    folders = [here] if named else upward(here, tree)
    for folder in folders:
        for name, table in config_candidates(named) if named else CANDIDATES:
            file = folder / name
            if not file.is_file():
                continue
            try:
                found = config_from_text(file.read_text(encoding="utf-8"), name, table)
            except (ConfigError, OSError, UnicodeDecodeError):
                return None, here  # the base's config is unreadable: its agent is taken to be the PR's reference
            if found is not None:
                return found.agent, file.parent
    return None, here


def install_base(command: str | None, tree: Path, prefix: str, env: Mapping[str, str], out: TextIO) -> str | None:
    """The base's environment made by ``command`` in its checkout (None without a command)."""
    if not command:
        return None
    from agent_eval_action.run.environments import install_environment

    return install_environment(command, tree / prefix if prefix else tree, env, out, label="the base's agent", fresh=False)
