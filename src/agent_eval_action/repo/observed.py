"""The agent's observed inputs as the repository has them: what the worker saw the agent read
(``agent_worker/observe.py``: absolute paths) named from the repository root, each with what it
is now, so a later run can tell which questions read something that changed.

A key is a repository path: ``a/b.md`` (a file read, or looked for), ``a/`` (a folder the agent
listed: the names in it), ``a/*`` (a folder an import or importlib.metadata searched: the names
in it of the modules the agent imported, ``imports``, and of distributions, so a new ``tests/``
folder shadows nothing while a new ``vendor/requests.py`` would). ``./`` and ``./*`` are the root. A value is the file's git blob hash (of its bytes in the
working tree; of a symbolic link, its target's text, as git stores a link: a read through a
link records the link and what it reached), ``missing``, or the hash of the folder's names.
Files of a checked-out submodule are the repository's (a PR that bumps its gitlink changes
them). Only what git could bring is
kept: files outside the repository, in ``.git``, ignored by git (a venv, ``__pycache__``, local
``.env`` files) unless the install command wrote them (``made``), or in the run's own folders
(the output, the model-call cache) are not; what
lies outside the repository is the environment's (``run/agent/fingerprint.py``). Compiled bytecode
stands for its source (``__pycache__/m.cpython-311.pyc`` -> ``m.py``).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import itertools
import os
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path

from agent_eval_action.repo.git import Git

MISSING = "missing"
FILE, LISTED, SEARCHED = "file", "listed", "searched"  # agent_worker.observe's kinds
KINDS = (FILE, LISTED, SEARCHED)
IMPORTED = "imported"  # agent_worker.observe: the module names imported since the worker's last answer
_MODULE_SUFFIXES = tuple(importlib.machinery.all_suffixes())


class ModuleNames:
    """The module names a run imported, as a folder's search would look them up: a folder on
    the path for their first parts, a package's folder ``p`` for what follows ``p.``."""

    def __init__(self, names: Iterable[str]):
        self.first: set[str] = set()
        self.after: dict[str, set[str]] = {}
        for name in names:
            parts = name.split(".")
            self.first.add(parts[0])
            for parent, child in itertools.pairwise(parts):
                self.after.setdefault(parent, set()).add(child)

    def looked_up_in(self, folder: str) -> set[str]:
        return self.first | self.after.get(folder.rsplit("/", 1)[-1], set())


def _module_name(entry: str) -> str | None:
    """The module a folder's entry would be imported as (``x/``, ``x.py``, ``x.cpython-311.so``); None: none."""
    if entry.endswith((".dist-info/", ".egg-info/", ".egg-info", ".egg-link")):
        return ".metadata"  # a distribution importlib.metadata would find
    if entry.endswith("/"):
        return entry[:-1]
    if entry.endswith(_MODULE_SUFFIXES):
        return entry.split(".", 1)[0]
    return None


def _with_submodules(names: list[str], recursed: list[str]) -> list[str]:
    """``names`` with the files of the submodules in place of their gitlinks."""
    every = list(dict.fromkeys([*names, *recursed]))
    folders = {name[:i] for name in every for i, c in enumerate(name) if c == "/"}
    return [name for name in every if name not in folders]


def blob_hash(data: bytes) -> str:
    """Git's object name for a blob of ``data``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


class RepositoryInputs:
    """The repository's files as the agent's questions see them now (one run: every value is
    computed once). ``skip``: repository-relative folders of the run's own (output, cache)."""

    def __init__(self, git: Git, skip: Iterable[str] = (), made: Iterable[str] = ()):
        self.root = git.workspace().root
        self.git = Git(self.root)  # paths in and out of git named from the top, whatever the run's folder
        self.skip = tuple(s.rstrip("/") + "/" for s in skip if s and s not in (".", "./"))
        # Ignored files the install command wrote (from the repository's files: a template
        # rendered into build/): inputs by their content, as a change to their source makes them.
        self.made = frozenset(made)
        names = self.git.listed_files()
        if (self.root / ".gitmodules").is_file():
            names = _with_submodules(names, self.git.submodule_files())
        self.files = frozenset(names)
        self.children: dict[str, set[str]] = {}
        for name in names:
            parts = name.split("/")
            for depth in range(len(parts)):
                self.children.setdefault("/".join(parts[:depth]), set()).add(parts[depth] + ("/" if depth < len(parts) - 1 else ""))
        self._values: dict[str, str | None] = {}
        self._ignored: dict[str, bool] = {}
        self._keys: dict[tuple[str, str], list[str]] = {}
        self._names: tuple[Collection[str], int, ModuleNames] | None = None

    # -- what a question read -> keys and their values -----------------------------------------

    def record(self, observed: Mapping[str, list[str]], imports: Collection[str]) -> dict[str, str]:
        """A question's observation (kind -> absolute paths) as ``{key: value}``; ``imports``:
        the parts of the module names the run imported."""
        keys = [key for kind, paths in observed.items() if kind in KINDS for path in paths for key in self._keys_of(kind, path)]
        wanted = list(dict.fromkeys(keys))
        self._check_ignored([k for k in wanted if not k.endswith(("/", "/*")) and k not in self.files])
        out = {}
        for key in wanted:
            value = self.value(key, imports)
            if value is not None:
                out[key] = value
        return dict(sorted(out.items()))

    def changed(self, inputs: Mapping[str, str], imports: Collection[str]) -> list[str]:
        """The keys of ``inputs`` whose value is not what it was (``imports``: as recorded with them)."""
        self._check_ignored([k for k in inputs if not k.endswith(("/", "/*")) and k not in self.files])
        return [key for key, value in inputs.items() if self.value(key, imports) != value]

    def value(self, key: str, imports: Collection[str] = ()) -> str | None:
        """What ``key`` is now; None for a file git would not bring (ignored: no input)."""
        if key.endswith(("/", "/*")):
            return self._folder(key, imports)
        if key not in self._values:
            self._values[key] = self._file(key)
        return self._values[key]

    def _folder(self, key: str, imports: Collection[str]) -> str:
        folder = key.rstrip("*").rstrip("/")
        names = sorted(self.children.get("" if folder == "." else folder, ()))
        if key.endswith("*"):
            if self._names is None or self._names[0] is not imports or self._names[1] != len(imports):
                self._names = (imports, len(imports), ModuleNames(imports))
            wanted = self._names[2].looked_up_in(folder)
            names = [n for n in names if _module_name(n) in wanted or _module_name(n) == ".metadata"]
        return hashlib.sha1("\n".join(names).encode(), usedforsecurity=False).hexdigest()

    def _file(self, key: str) -> str | None:
        path = self.root / key
        if key in self.files:
            if path.is_symlink():  # a link as git stores it: the blob of its target's text
                try:
                    return blob_hash(os.fsencode(os.readlink(path)))
                except OSError:
                    return MISSING
            try:
                return blob_hash(path.read_bytes())
            except IsADirectoryError:
                return None
            except OSError:
                return MISSING
        if key in self.made:
            try:
                return blob_hash(path.read_bytes())
            except OSError:
                return MISSING
        if os.path.lexists(path):
            return None  # there, but git ignores it: nothing a change could bring
        return None if self._ignored.get(key, False) else MISSING

    def _check_ignored(self, keys: list[str]) -> None:
        unknown = [k for k in keys if k not in self._ignored]
        if not unknown:
            return
        ignored = self.git.ignored(unknown)
        for key in unknown:
            self._ignored[key] = key in ignored

    def _keys_of(self, kind: str, path: str) -> list[str]:
        """The keys a read of ``path`` stands for: the file (or folder) it reached, and every
        link of the repository's it went through (a PR may retarget one: ``prompts/current.md
        -> v2.md``, a folder ``prompts -> prompts_v2``)."""
        found = self._keys.get((kind, path))
        if found is None:
            reached = self._make_key(kind, path)
            found = self._keys[(kind, path)] = list(dict.fromkeys([*([reached] if reached else []), *self._links(path)]))
        return found

    def _links(self, path: str) -> list[str]:
        """The repository's symbolic links on the way to ``path``, as keys (a link's value is its text)."""
        parts = Path(path).parts
        if not parts:
            return []
        links, current = [], Path(parts[0])
        for part in parts[1:]:
            candidate = current / part
            if candidate.is_symlink():
                key = self._inside(candidate)
                if key:
                    links.append(key)
                current = Path(os.path.realpath(candidate))
            else:
                current = candidate
        return links

    def _inside(self, path: Path) -> str | None:
        """``path`` (its folders real) named from the root; None outside it, in ``.git`` or in the run's own folders."""
        try:
            inner = path.relative_to(self.root).as_posix()
        except ValueError:
            return None
        if inner in (".", ".git") or inner.startswith(".git/") or (inner + "/").startswith(self.skip):
            return None
        return inner

    def _make_key(self, kind: str, path: str) -> str | None:
        full = os.path.realpath(path)
        if kind == FILE and os.path.basename(os.path.dirname(full)) == "__pycache__":
            try:
                full = importlib.util.source_from_cache(full)
            except ValueError:
                return None
        try:
            rel = Path(full).relative_to(self.root).as_posix()
        except ValueError:
            return None  # outside the repository: the environment's
        if rel == "." and kind == FILE:
            return None
        inner = "" if rel == "." else rel
        if inner == ".git" or inner.startswith(".git/") or "/__pycache__" in f"/{inner}" or (inner + "/").startswith(self.skip):
            return None
        if kind == FILE:
            return inner
        folder = inner or "."
        return f"{folder}/*" if kind == SEARCHED else f"{folder}/"
