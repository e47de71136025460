"""Which files are the agent's code, as guessed from the tree: for baselines written before the
agent's reads were observed (``repo/observed.py`` decides where they were), a change to these
re-runs every dataset in a PR, and their hash (the agent's fingerprint) says whether such a
baseline's scores may be reused.

By default: the package that holds the agent (``app.agent:root_agent``: ``app/``), the modules of
the repository it imports, followed transitively (read with ``ast``: nothing of the user's runs
in our process), the dependency files beside it and above it up to the repository's top
(``requirements*.txt``, ``pyproject.toml``, lock files, ``setup.py``/``setup.cfg``) and our config.
Docs, tests, workflows and other folders are not: a README-only PR reuses every question.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

DEPENDENCY_FILES = (
    "requirements*.txt", "requirements*.in", "requirements*.lock", "constraints*.txt", "pyproject.toml",
    "setup.py", "setup.cfg", "uv.lock", "poetry.lock", "pdm.lock", "Pipfile", "Pipfile.lock",
)  # fmt: skip
MAX_FILES = 5000  # a package that large is walked no further: its folder is already agent code


@dataclass(frozen=True)
class Module:
    """A Python file and the folder it is imported from (its module name is its path from there)."""

    file: Path
    root: Path

    def package(self) -> list[str]:
        """The dotted package the module lies in, as parts (what a relative import starts from)."""
        parts = list(self.file.relative_to(self.root).with_suffix("").parts)
        return parts[:-1]


# ADK's layout: a folder whose agent.py assigns root_agent.
_ROOT_AGENT = re.compile(r"^root_agent\s*(:[^=]*)?=", re.M)


def agent_candidates(root: Path) -> list[str]:
    """``pkg.agent:root_agent`` for each folder at the top of ``root`` whose ``agent.py`` assigns
    ``root_agent`` (ADK's layout), read, not imported: what ``init`` finds."""
    return [
        f"{path.parent.name}.agent:root_agent"
        for path in sorted(root.glob("*/agent.py"))
        if not path.parent.name.startswith(".") and path.parent.name.isidentifier() and _assigns_root_agent(path)
    ]


def _assigns_root_agent(path: Path) -> bool:
    try:
        return _ROOT_AGENT.search(path.read_text(encoding="utf-8", errors="replace")) is not None
    except OSError:
        return False


def agent_suggestion(spec: str, root: Path) -> str:
    """What to write instead of an ``--agent`` that could not be loaded, for its error message:
    the ``module:attr`` of a file path given (``customer_service/agent.py``), else the agents
    found in ``root`` as ``init`` finds them; empty when there is nothing to suggest."""
    module, _, _ = spec.partition(":")
    if module.endswith(".py"):
        file = Path(module) if os.path.isabs(module) else root / module
        try:
            relative = file.resolve().relative_to(root.resolve()).with_suffix("")
        except ValueError:
            relative = None
        if relative is not None and all(part.isidentifier() for part in relative.parts) and _assigns_root_agent(file):
            return f"; give `--agent {'.'.join(relative.parts)}:root_agent`"
    found = [c for c in agent_candidates(root) if c != spec]
    if not found:
        return ""
    return f"; found here: {', '.join(f'`{c}`' for c in found)}"


def agent_paths(agent: str, *, top: Path, import_roots: list[Path], config_file: Path | None) -> list[str] | None:
    """The agent's code as repository-relative paths and globs (``app/**``); None when the agent's
    module is not a file in the repository (an installed package): then no file can be told apart."""
    top = top.resolve()
    roots = list(dict.fromkeys(r.resolve() for r in import_roots))
    start = _agent_module(agent, roots)
    if start is None or not start.file.is_relative_to(top):
        return None
    package = start.root / start.file.relative_to(start.root).parts[0]
    if not package.is_relative_to(top):
        return None
    if package.is_dir():
        held = [Module(f, start.root) for f in _python_files(package)]
        paths = [_rel(package, top) + "/**"]
    else:  # a module at the top of its import root: the file itself
        held, paths = [], [_rel(start.file, top)]
    for module in _imported([start, *held], roots, top):
        if not module.file.is_relative_to(package):
            paths.append(_rel(module.file, top))
    folder = package.parent
    for directory in dict.fromkeys([folder, *folder.parents, *(r for r in roots if r.is_relative_to(top))]):
        if directory.is_relative_to(top):
            inner = _rel(directory, top)
            paths.extend(f"{inner}/{name}" if inner else name for name in DEPENDENCY_FILES)
    if config_file is not None and config_file.resolve().is_relative_to(top):
        paths.append(_rel(config_file.resolve(), top))
    return list(dict.fromkeys(paths))


def _rel(path: Path, top: Path) -> str:
    inner = path.relative_to(top).as_posix()
    return "" if inner == "." else inner


def _agent_module(agent: str, roots: list[Path]) -> Module | None:
    """The file that defines the agent: ``module:attr``'s module, an agent directory's
    ``agent.py`` (else ``__init__.py``), or a bare module name's ``agent`` submodule (else itself)."""
    if ":" not in agent and os.path.isdir(agent):
        directory = Path(agent).resolve()
        for name in ("agent.py", "__init__.py"):
            if (directory / name).is_file():
                return Module(directory / name, directory.parent)
        return None
    name = agent.partition(":")[0]
    for candidate in [name] if ":" in agent else [f"{name}.agent", name]:
        found = _find(candidate.split("."), roots)
        if found is not None:
            return found
    return None


def _find(parts: list[str], roots: list[Path]) -> Module | None:
    """The file a module name names under the first import root that has it."""
    if not parts or not all(part.isidentifier() for part in parts):
        return None
    for root in roots:
        base = root.joinpath(*parts)
        for file in (base.with_name(base.name + ".py"), base / "__init__.py"):
            if file.is_file():
                return Module(file.resolve(), root)
    return None


def _python_files(package: Path) -> Iterator[Path]:
    for count, file in enumerate(sorted(package.rglob("*.py"))):
        if count >= MAX_FILES:
            return
        yield file.resolve()


def _imported(start: list[Module], roots: list[Path], top: Path) -> list[Module]:
    """Every repository module the ``start`` modules import, transitively, and their packages'
    ``__init__.py`` (importing ``a.b`` runs ``a/__init__.py``)."""
    seen = {m.file for m in start}
    queue, found = list(start), []
    while queue and len(seen) < MAX_FILES:
        module = queue.pop()
        for parts in _imports(module):
            for depth in range(1, len(parts) + 1):
                target = _find(parts[:depth], [module.root, *roots])
                if target is not None and target.file.is_relative_to(top) and target.file not in seen:
                    seen.add(target.file)
                    found.append(target)
                    queue.append(target)
    return found


def _imports(module: Module) -> Iterator[list[str]]:
    """The module names a file imports (``from a import b`` gives ``a`` and ``a.b``: b may be a
    module); relative imports resolved against its package. Unreadable files import nothing."""
    try:
        tree = ast.parse(module.file.read_bytes(), filename=str(module.file))
    except (SyntaxError, ValueError, OSError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split(".")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = module.package()
                if node.level - 1 > len(package):
                    continue
                base = package[: len(package) - (node.level - 1)]
            else:
                base = []
            named = base + (node.module.split(".") if node.module else [])
            if named:
                yield named
            for alias in node.names:
                if alias.name != "*":
                    yield [*named, alias.name]
