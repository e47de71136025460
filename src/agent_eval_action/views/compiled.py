"""Our templates compiled once, not at every run: Jinja's bytecode cache, beside the templates as
Python keeps ``__pycache__`` beside modules.

Compiling the comment and report.html took about 0.1 s of every run that renders them (a
quarter of a small check's own CPU). Each environment (the comment's, the comment's sandbox for a
repository's ``templates-dir``, report.html's: :data:`TEMPLATES`) keeps its code in a folder of
its own under ``templates/__jinjacache__``, and only for our own templates: a repository's
``templates-dir`` is compiled at each run, as before. Jinja checks each
entry against the template's source and its own version, so an edited template is compiled
again. Like Python's bytecode, entries are written when the process may write bytecode
(``PYTHONDONTWRITEBYTECODE`` unset) and the folder is writable; ``views.__main__`` writes them
regardless, for installs that compile ahead (``make install``, the action's image):
``python -m agent_eval_action.views``.

Imported only where a Jinja environment is made (``render``, ``report``).
"""

from __future__ import annotations

import os
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from jinja2 import FileSystemBytecodeCache

# The comment's two environments: sandboxed (with a repository's templates-dir; the folder the
# comment's one environment had, whose entries an install keeps across an upgrade) and not (ours
# alone). Sandboxed code calls through the sandbox, the other does not: neither loads the other's.
SANDBOXED = "comment"
UNSANDBOXED = "comment-own"
# Our templates, by the environment that compiles them.
TEMPLATES = {
    UNSANDBOXED: ("comment.md.j2", "summary.md.j2"),
    SANDBOXED: ("comment.md.j2", "summary.md.j2"),
    "report": ("report.html.j2",),
}


def folder() -> Path:
    return Path(str(resources.files("agent_eval_action.views").joinpath("templates")))


class OwnTemplates(FileSystemBytecodeCache):
    """The cache of one environment ``kind``: entries for our templates only; writes never fail a run."""

    def __init__(self, kind: str, *, write: bool):
        here = folder()
        super().__init__(str(here / "__jinjacache__" / kind))
        self.own = {self.get_cache_key(name, str(here / name)) for name in TEMPLATES[kind]}
        self.sandboxed = kind == SANDBOXED
        self.write = write

    def _ours(self, bucket: Any) -> bool:
        return bucket.key in self.own and bool(getattr(bucket.environment, "sandboxed", False)) == self.sandboxed

    def load_bytecode(self, bucket: Any) -> None:
        if self._ours(bucket):
            super().load_bytecode(bucket)

    def dump_bytecode(self, bucket: Any) -> None:
        if self._ours(bucket) and self.write:
            try:
                os.makedirs(self.directory, exist_ok=True)
                super().dump_bytecode(bucket)
            except OSError:
                pass  # a read-only install: compiled at each run, as without a cache


def bytecode_cache(kind: str, *, write: bool | None = None) -> OwnTemplates:
    """The bytecode cache of the environment ``kind`` (a key of :data:`TEMPLATES`); ``write``: default,
    when this process may write bytecode."""
    return OwnTemplates(kind, write=(not sys.dont_write_bytecode) if write is None else write)
