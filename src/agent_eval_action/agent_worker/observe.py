"""What the agent reads: Python's audit hooks record, per question, every file the agent opens
for reading (or tries to: a file looked for and not found is an input too, the PR may add it),
every directory it lists, and every directory an import searched (a new module there can
shadow one): the inputs a question's reuse depends on (``repo/observed.py`` hashes them).

Attribution: a question's task sets a context variable, which asyncio copies into every task
the question starts (ADK's too), so what those tasks read is that question's. What is read
while the agent loads, what a thread without the context reads, and Python code (modules and
the folders imports searched: a module is imported once and then serves every question) go to
every question that ends after it was read: shared. A question's inputs are its own reads and
the shared ones. A relative path is made absolute when it is read (from the working directory
of that moment, else from a folder held open: a ``dir_fd``); a SQLite database, which SQLite
opens itself, by its ``sqlite3.connect`` event. Not seen: what the agent learns without an
audited call (``os.stat`` and ``os.path.exists`` are not audited), the network, environment
variables, and what subprocesses read; files outside the repository are covered by the
environment's fingerprint instead.

The hook only files the raw event (a set add; a relative path, rare, is made absolute then):
paths are filtered and named once per question, when it ends (:func:`Observation.paths`).
"""

from __future__ import annotations

import collections
import contextvars
import os
import sys
from collections.abc import Iterable
from typing import Any

# What a recorded entry is: a file read (or tried), a directory the agent listed, a directory
# an import searched (only its module-like names matter).
FILE = "file"
LISTED = "listed"
SEARCHED = "searched"
KINDS = (FILE, LISTED, SEARCHED)
# The module names imported (or tried) since the worker's previous answer: which names in a
# searched folder could shadow a module (a new ``tests/`` folder shadows nothing not imported).
IMPORTED = "imported"

_WRITE_MODES = frozenset("wax")
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_CODE_SUFFIXES = (".py", ".pyc", ".pyw")
# ``sqlite3.connect`` names the database file SQLite opens itself (no ``open`` event).
SQLITE = "sqlite3.connect"
_WANTED = frozenset({"open", "os.listdir", "os.scandir", "import", SQLITE})
_OPEN_FDS = "/proc/self/fd"  # where Linux names the process's open files (a ``dir_fd``'s folder)
_METADATA = os.path.join("importlib", "metadata")

_question: contextvars.ContextVar[set[tuple[str, Any]] | None] = contextvars.ContextVar("agent_eval_observed", default=None)


class Observation:
    """The process's recorder: the shared reads and each question's own."""

    def __init__(self, skip: Iterable[str] = ()):
        self.shared: set[tuple[str, Any]] = set()
        # Shared entries not resolved yet (in the order seen), and those resolved, by kind: each
        # question's answer resolves only what is new since the last one.
        self._fresh: collections.deque[tuple[str, Any]] = collections.deque()  # appended by any thread
        self._shared_paths: dict[str, set[str]] = {kind: set() for kind in KINDS}
        self.imported: set[str] = set()
        self._fresh_imports: collections.deque[str] = collections.deque()  # not yet sent
        self.cwd = os.getcwd()
        # Folders whose files are no input of the agent's: the interpreter's, the venv's, ours.
        self.skip = tuple(sorted({os.path.join(os.path.abspath(p), "") for p in skip if p and os.path.abspath(p) != os.sep}))
        self._resolved: dict[tuple[str, Any], tuple[str, str] | None] = {}
        # How far up the audited call's caller is from :meth:`hook`: 1 when the C hook calls it,
        # 2 under start()'s Python hook.
        self.caller = 2

    @property
    def native(self) -> bool:
        """Whether the C hook calls :meth:`hook` (it adds no Python frame above it)."""
        return self.caller == 1

    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        """One audited event of those :func:`start`'s hook lets through (``_WANTED``)."""
        if event == "open":
            path, mode, flags = args
            if mode is None:
                if flags & _WRITE_FLAGS:
                    return
            elif not _WRITE_MODES.isdisjoint(mode):
                return
            if isinstance(path, int):
                return
            entry: tuple[str, Any] = (FILE, _here(path))
        elif event == SQLITE:
            database = _database(args[0])
            if database is None:
                return
            entry = (FILE, _here(database))
        elif event == "import":
            if args[0] not in self.imported:
                self.imported.add(args[0])
                self._fresh_imports.append(args[0])
            return
        else:
            path = args[0]
            if path is None or isinstance(path, int):
                path = "."
            elif path == _OPEN_FDS:
                return  # our own look for a dir_fd's folder (_in_open_folders), and no repository's
            code = sys._getframe(self.caller).f_code  # the caller of listdir, above the hook
            path = _here(path)
            # An import's finder (it lists each folder on the path once), or importlib.metadata
            # looking for distributions: a search for names, not the agent reading a folder.
            searched = code.co_name == "_fill_cache" or _METADATA in code.co_filename
            entry = (SEARCHED if searched else LISTED, path)
        own = _question.get()
        if own is None or entry[0] == SEARCHED or (entry[0] == FILE and str(entry[1]).endswith(_CODE_SUFFIXES)):
            if entry not in self.shared:
                self.shared.add(entry)
                self._fresh.append(entry)
        else:
            own.add(entry)

    def begin(self) -> tuple[set[tuple[str, Any]], contextvars.Token[set[tuple[str, Any]] | None]]:
        """A new question's record, current in this context (and every task it starts) until :meth:`end`."""
        own: set[tuple[str, Any]] = set()
        return own, _question.set(own)

    @staticmethod
    def end(token: contextvars.Token[set[tuple[str, Any]] | None]) -> None:
        _question.reset(token)

    def paths(self, own: set[tuple[str, Any]]) -> dict[str, list[str]]:
        """A question's inputs, by kind, as sorted absolute paths (outside the skipped folders),
        and the module names imported since the previous call (``IMPORTED``)."""
        while self._fresh:
            entry = self._fresh.popleft()
            resolved = self._resolve(entry)
            if resolved is not None:
                self._shared_paths[resolved[0]].add(resolved[1])
        out = {kind: set(paths) for kind, paths in self._shared_paths.items()}
        for entry in own:
            if entry in self._resolved:
                resolved = self._resolved[entry]
            else:
                resolved = self._resolved[entry] = self._resolve(entry)
            if resolved is not None:
                out[resolved[0]].add(resolved[1])
        imported = []
        while self._fresh_imports:
            imported.append(self._fresh_imports.popleft())
        found = {kind: sorted(paths) for kind, paths in out.items() if paths}
        found[IMPORTED] = sorted(imported)
        return found

    def _resolve(self, entry: tuple[str, Any]) -> tuple[str, str] | None:
        kind, raw = entry
        try:
            path = os.fsdecode(raw)
        except (TypeError, ValueError):
            return None
        path = os.path.normpath(os.path.join(self.cwd, path))
        if path.startswith(self.skip):
            return None
        return kind, path


def _here(path: Any) -> Any:
    """A relative path made absolute as the call that named it meant it: from the working
    directory of that moment (``contextlib.chdir``), else, when no such file is there, from a
    folder the process holds open (a ``dir_fd`` given to ``os.open``: the Python docs' own
    ``opener`` example; the audit event does not name it). Absolute paths and what cannot be
    read as a path are left as they are (resolved once a question ends, :meth:`Observation.paths`)."""
    try:
        text = os.fsdecode(path)
    except (TypeError, ValueError):
        return path
    if os.path.isabs(text):
        return path
    try:
        full = os.path.join(os.getcwd(), text)
    except OSError:
        return path  # a working directory removed under the process: resolved from the start's
    if os.path.lexists(full):
        return full
    held = _in_open_folders(text)
    return held if held is not None else full


def _in_open_folders(name: str) -> str | None:
    """``name`` in the first folder the process holds open that has it (Linux: ``/proc/self/fd``)."""
    try:
        fds = os.listdir(_OPEN_FDS)
    except OSError:
        return None
    for fd in fds:
        try:
            folder = os.readlink(os.path.join(_OPEN_FDS, fd))
        except OSError:
            continue
        candidate = os.path.join(folder, name)
        if folder.startswith(os.sep) and os.path.isdir(folder) and os.path.lexists(candidate):
            return candidate
    return None


def _database(database: Any) -> Any:
    """The file a ``sqlite3.connect`` argument names: None for an in-memory database; a
    ``file:`` URI's path without its query."""
    try:
        text = os.fsdecode(database)
    except (TypeError, ValueError):
        return None
    if text in ("", ":memory:") or "mode=memory" in text:
        return None
    if text.startswith("file:"):
        text = text[len("file:") :].split("?", 1)[0].split("#", 1)[0]
        if text.startswith("//"):  # file://host/path: the path
            text = "/" + text[2:].split("/", 1)[-1]
        return text or None
    return text


def start(skip: Iterable[str], native: bool = True) -> Observation:
    """Installs the audit hook (for the life of the process: audit hooks cannot be removed): the
    C one where it is built for this interpreter (``native.py``; ``native`` False: never), else
    the Python one.

    A hook is called for every audited event of the process, about 1,600 a question at the
    bench's settings: ``builtins.id`` (ADK's deep copies and telemetry) nearly all of them, then
    ``object.__getattr__`` and ``sys._getframe``. CPython spends about 1,760 instructions
    calling a hook written in Python for an event (the event's name made a new string, its
    arguments a tuple, the call), whatever the hook does: about 2% of a question's CPU, a floor
    no Python hook goes under; the C hook is handed the name as a C string and returns at once
    for the events it does not want. The Python hook is a plain function whose fast path adds
    the least to that floor: a bound method cost three times as much per call (CPython looks up
    ``__cantrace__`` on each hook, and a method's failed lookup raises and clears an
    AttributeError each time), and the name's length is tested before the set lookup: the
    frequent events' names are longer than any wanted one, and a length is cheaper than
    hashing a new string (about 230 instructions an event over the bare call, against 400
    with the set lookup alone: callgrind); it is looked up in the wanted names' lengths, a set
    of small ints, as none of the frequent events' lengths (11, 13, 18) is one of them."""
    observation = Observation(skip)
    if native:
        try:
            from . import _audit_hook  # type: ignore[attr-defined]
        except ImportError:
            pass  # not built for this interpreter
        else:
            observation.caller = 1
            _audit_hook.install(observation.hook)
            return observation
    wanted, handle = _WANTED, observation.hook
    lengths = frozenset(map(len, wanted))

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if len(event) in lengths and event in wanted:
            handle(event, args)

    sys.addaudithook(hook)
    return observation
