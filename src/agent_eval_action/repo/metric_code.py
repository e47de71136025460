"""The custom metrics' code as the base has it: in a PR check, the metrics that judge the PR are
the base's (a metric the PR adds or changes applies after merge, like any other gate change).

Each metric's top-level module (``my_metrics.py``) or package (``my_metrics/``) is read at the
merge-base by object name and written to a new folder outside the PR's tree, which the metric
process imports from.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from agent_eval_action.repo.git import Git
from agent_eval_action.system.files import read_only, writable


def module_paths(spec: str, root: str) -> tuple[str, str]:
    """The repository paths of ``spec``'s top-level module as a file and as a package folder;
    ``root``: the folder it is imported from, from the repository's top ("" for the top)."""
    top = spec.partition(":")[0].split(".")[0]
    return posixpath.join(root, f"{top}.py"), posixpath.join(root, top) + "/"


def code_at(git: Git, rev: str, root: str, specs: Iterable[str]) -> dict[str, str]:
    """Every file of the metrics' modules at ``rev``, by repository path."""
    wanted: list[str] = []
    for spec in specs:
        module, package = module_paths(spec, root)
        wanted.append(module)
        listed = git.run("ls-tree", "-r", "-z", "--name-only", "--full-tree", rev, "--", package, check=False).stdout
        wanted += [path for path in listed.split("\0") if path]
    texts = git.blobs([f"{rev}:{path}" for path in dict.fromkeys(wanted)])
    return {name.partition(":")[2]: text for name, text in texts.items() if text is not None}


def changed(specs: dict[str, str], root: str, paths: Iterable[str]) -> dict[str, list[str]]:
    """Metric name -> the changed ``paths`` (repository paths) in its module or package."""
    out: dict[str, list[str]] = {}
    paths = list(paths)
    for name, spec in specs.items():
        module, package = module_paths(spec, root)
        hits = [p for p in paths if p == module or p.startswith(package)]
        if hits:
            out[name] = sorted(hits)
    return out


# The folders :func:`written` holds: each file's bytes as written, checked before every import.
_WRITTEN: dict[str, dict[str, bytes]] = {}


@contextlib.contextmanager
def written(files: dict[str, str], root: str) -> Iterator[Path]:
    """``files`` (repository paths under ``root``) written to a new temporary folder, as they
    lie under ``root``, and made read-only; removed when the block ends. What is there is
    checked against what was written (:func:`changed_since_written`) before every import."""
    folder = Path(tempfile.mkdtemp(prefix="agent-eval-base-metrics-"))
    try:
        expected: dict[str, bytes] = {}
        for path, text in files.items():
            name = posixpath.relpath(path, root or ".")
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            expected[name] = target.read_bytes()
        read_only(folder)  # no bytecode either: the metric process imports from the source alone
        _WRITTEN[str(folder)] = expected
        yield folder
    finally:
        _WRITTEN.pop(str(folder), None)
        writable(folder)
        shutil.rmtree(folder, ignore_errors=True)


def changed_since_written(folder: str | Path) -> list[str]:
    """The files of a folder :func:`written` holds that are not as it wrote them: changed,
    removed, or added (a module that would shadow another, a ``.pth``), by path in the folder.
    Empty for any other folder."""
    expected = _WRITTEN.get(str(folder))
    if expected is None:
        return []
    found: dict[str, bytes | None] = {}
    for top, dirs, names in os.walk(folder):
        for name in [*names, *(d for d in dirs if os.path.islink(os.path.join(top, d)))]:
            path = os.path.join(top, name)
            try:
                found[os.path.relpath(path, folder)] = None if os.path.islink(path) else Path(path).read_bytes()
            except OSError:
                found[os.path.relpath(path, folder)] = None
    return sorted(p for p in expected.keys() | found.keys() if expected.get(p) != found.get(p))
