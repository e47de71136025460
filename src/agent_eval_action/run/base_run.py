"""compare-with = "base": the merge-base's agent, run now beside the PR's, as the base has it.

The base's files are exported to a temporary folder (no worktree: nothing ``git worktree list``
shows leads there), made read-only once its install command ran, and hashed; after the run
they are hashed again, and a base side changed while it ran (a file written, added or removed)
makes the check "could not be checked", never a pass. Its agent, ``agent-python``, env and every
other setting come from the base's own config, found by the base's own search
(:func:`config.find_config`), never from the PR's; only how the run is carried out (runs,
timeouts, concurrency) is the run's. :mod:`evaluation` runs it beside the PR's agent, question
by question.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from agent_eval_action.config import Config, file_reader, find_again, placed
from agent_eval_action.repo.git import Git
from agent_eval_action.system.errors import ConfigError
from agent_eval_action.system.files import read_only, writable

# How the run is carried out, the same on both sides (the base runs interleaved with the PR's,
# under one limiter and one budget): the run's. Everything else is the base's.
RUN_SETTINGS = ("runs", "timeout", "retries", "concurrency", "max_concurrency", "progress", "workers", "capture_spans", "seed")


@dataclass
class BaseTree:
    """The base's exported files: ``top`` (the repository's top there), the commit's tree hash,
    and what is on disk once it is sealed (:meth:`seal`): each file's hash, and each file's and
    folder's inode and change time, which every write, chmod, rename or new entry moves even
    when the content is put back afterwards (a process cannot set a change time)."""

    top: Path
    tree: str | None
    sealed: dict[str, str] = field(default_factory=dict)
    stamps: dict[str, tuple[int, int]] = field(default_factory=dict)

    def seal(self) -> None:
        """Makes the files read-only and remembers each one's hash: what the base runs from now on."""
        read_only(self.top)
        self.sealed, self.stamps = _hashes(self.top), _stamps(self.top)

    def changed(self) -> list[str]:
        """The paths (from the top) written, added, removed or touched since :meth:`seal`."""
        now, stamps = _hashes(self.top), _stamps(self.top)
        moved = {p for p in self.sealed.keys() | now.keys() if self.sealed.get(p) != now.get(p)}
        moved |= {p for p in self.stamps.keys() | stamps.keys() if self.stamps.get(p) != stamps.get(p)}
        return sorted(moved)


@contextlib.contextmanager
def base_checkout(git: Git, merge_base: str) -> Iterator[BaseTree]:
    """The merge-base's files exported to a new temporary folder, removed on the way out: after
    the check, a failure or an interrupt."""
    parent = Path(tempfile.mkdtemp(prefix="agent-eval-base-"))
    top = parent / "base"
    try:
        top.mkdir()
        git.export(merge_base, top, parent / "index")
        (parent / "index").unlink(missing_ok=True)
        yield BaseTree(top=top, tree=git.tree(merge_base))
    finally:
        writable(parent)
        shutil.rmtree(parent, ignore_errors=True)


def base_config(head: Config, tree: Path, prefix: str, *, python: str | None) -> Config:
    """The config the base's agent runs with: the base's own (found in its files ``tree`` by its
    own search from ``prefix``, the folder the check runs from), with the run's :data:`RUN_SETTINGS`
    from ``head``; its agent is the base config's (the run's reference, found in the base's files,
    when it names none), under ``python`` when the install command made one for it."""
    here = tree / prefix if prefix else tree
    base = _own_config(head, tree, here)
    agent = base.agent
    if agent is None:  # named by a flag or input, not a config: the same reference, in the base's files
        agent = head.agent
        moved = os.path.relpath(head.origin.folder, Path.cwd()) if head.origin.folder else "."
        base = base.with_origin(folder=str((here / moved).resolve()))
    if agent and ":" not in agent and not os.path.isabs(agent) and (here / agent).exists():
        agent = str((here / agent).resolve())  # an agent directory, in the base's files
    # The base config's interpreter; else one the run was given (a flag or input, not the PR's
    # config), as for the agent reference.
    agent_python = python or base.agent_python or (head.agent_python if "agent_python" in head.origin.given else None)
    if agent_python and "/" in agent_python and not os.path.isabs(agent_python):
        agent_python = str((here / agent_python).resolve())
    run = {name: getattr(head, name) for name in RUN_SETTINGS}
    # Worker processes always: two agents of one module name cannot share this process.
    twin = base.with_overrides(**run, agent=agent, agent_python=agent_python, in_process=False)
    twin.agent_python = agent_python
    twin.model_cache = None  # both sides ask the model now (inference.py says why)
    return twin


def _own_config(head: Config, tree: Path, here: Path) -> Config:
    """The base's config as the base finds it, its paths relative to ``here``; the defaults when
    it has none (or one that cannot be read: then nothing of the PR's stands in for it)."""
    read = file_reader(tree, check=_inside(tree))
    try:
        found = find_again(head.origin, read, Path(os.path.relpath(here, tree)).as_posix())
    except ConfigError:
        found = None
    if found is None:
        return placed(Config(), os.path.relpath(tree, here), here)
    return placed(found.config, os.path.relpath((tree / found.path).parent, here), here)


def _inside(tree: Path) -> Callable[[Path], None]:
    def check(file: Path) -> None:
        if not file.resolve().is_relative_to(tree.resolve()):
            raise ConfigError(str(file), "the base's config links outside its repository")

    return check


def install_base(command: str | None, base: BaseTree, prefix: str, env: Mapping[str, str], out: TextIO) -> str | None:
    """The base's environment made by ``command`` in its files (None without a command), keyed on
    the base's whole tree: the PR's venv serves it only when the PR's tree is byte-identical."""
    if not command:
        return None
    from agent_eval_action.run.agent.venvs import install_environment

    project = base.top / prefix if prefix else base.top
    return install_environment(command, project, env, out, label="the base's agent", fresh=False, source=base.tree)


def base_paths(env: Mapping[str, str], workspace: Path, base: Path) -> tuple[dict[str, str], str | None]:
    """The base's ``PYTHONPATH``: ours with each entry into the PR's ``workspace`` taken from
    the base's checkout (``base``) at the same place, so an absolute ``PYTHONPATH=<workspace>/src``
    of the job cannot make the base import the PR's code; relative entries already resolve in
    the base's checkout. Returns the variables to set for the base's workers and the line that
    says what was moved (None: nothing was)."""
    value = env.get("PYTHONPATH")
    if not value:
        return {}, None
    top = workspace.resolve()
    kept, moved = [], []
    for entry in value.split(os.pathsep):
        full = Path(entry).resolve() if entry and os.path.isabs(entry) else None
        if full is not None and full.is_relative_to(top):
            kept.append(str(base / full.relative_to(top)))
            moved.append(entry)
        else:
            kept.append(entry)
    if not moved:
        return {}, None
    said = f"the base's agent: PYTHONPATH {', '.join(moved)} (the PR's workspace) taken from the base's checkout instead"
    return {"PYTHONPATH": os.pathsep.join(kept)}, said


def _hashes(top: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for root, dirs, files in os.walk(top):
        for name in [*files, *(d for d in dirs if os.path.islink(os.path.join(root, d)))]:
            path = os.path.join(root, name)
            digest = hashlib.sha256()
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                digest.update(b"link\0" + os.readlink(path).encode())
            else:
                digest.update(f"{info.st_mode & 0o111:o}\0".encode())
                try:
                    with open(path, "rb") as handle:
                        digest.update(handle.read())
                except OSError as error:
                    digest.update(f"unreadable {error.errno}".encode())
            out[os.path.relpath(path, top)] = digest.hexdigest()
    return out


def _stamps(top: Path) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for root, dirs, files in os.walk(top):
        for name in [".", *files, *dirs]:
            path = os.path.join(root, name)
            info = os.lstat(path)
            out[os.path.normpath(os.path.relpath(path, top))] = (info.st_ino, info.st_ctime_ns)
    return out
