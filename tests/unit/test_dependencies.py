"""The dependencies are what the code imports and what the docs say it is built on.

Every runtime dependency in pyproject's ``[project] dependencies`` (and its feature extras) is imported somewhere in
``src/`` (a declared package nothing uses only widens what a security reviewer of the lock file
must trust), every third-party import in ``src/`` is declared (not only had through another
package, which may drop it), and the docs' "Built on" list names only declared dependencies.

Which distribution provides a module is read from the installed distributions' file lists
(``google.adk`` -> google-adk, ``vertexai`` -> google-cloud-aiplatform, ``yaml`` -> pyyaml), so
no table of names has to be kept by hand.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from collections import defaultdict
from functools import cache
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
OURS = "agent_eval_action"


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


# Extras of the tool's own, not of the package: the development tools and the benchmarks' ADK.
NOT_RUNTIME_EXTRAS = ("dev", "bench")


def declared() -> set[str]:
    """The runtime dependencies: the core's and those of the extras a feature needs (``vertex``)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = [spec for name, specs in project.get("optional-dependencies", {}).items() if name not in NOT_RUNTIME_EXTRAS for spec in specs]
    names = set()
    for spec in [*project["dependencies"], *extras]:
        found = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", spec)
        assert found, spec
        names.add(normalize(found.group()))
    return names


def imports() -> dict[str, set[str]]:
    """Every name src/ imports absolutely (``from a import b`` as ``a.b``: b may be a module of a
    namespace package, as in ``from google import genai``), with the files that import it; ours
    and the standard library's left out."""
    found: dict[str, set[str]] = defaultdict(set)
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [f"{node.module}.{alias.name}" for alias in node.names]
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in (OURS, "__future__"):
                    found[name].add(str(path.relative_to(ROOT)))
    return found


@cache
def providers() -> dict[str, frozenset[str]]:
    """Dotted module or package name -> the installed distributions that ship files under it."""
    found: dict[str, set[str]] = defaultdict(set)
    for dist in metadata.distributions():
        name = normalize(dist.metadata["Name"])
        for file in dist.files or []:
            if file.suffix not in (".py", ".so", ".pyi") or ".dist-info" in str(file) or file.parts[0] == "..":
                continue
            parts = [*file.parts[:-1], file.name.split(".")[0]]
            if parts[-1] == "__init__":
                parts.pop()
            for end in range(1, len(parts) + 1):
                found[".".join(parts[:end])].add(name)
    return {module: frozenset(names) for module, names in found.items()}


def distribution(name: str) -> str | None:
    """The one distribution that provides ``name``: the longest prefix of it that only one
    distribution ships (``google`` is shared by many, ``google.adk`` is google-adk's, and
    ``jinja2.Environment`` is no module but ``jinja2`` is)."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        names = providers().get(".".join(parts[:end]), frozenset())
        if len(names) == 1:
            return next(iter(names))
    return None


def imported_distributions() -> dict[str, set[str]]:
    """Distribution -> the files of src/ that import from it."""
    found: dict[str, set[str]] = defaultdict(set)
    unknown = {}
    for name, files in imports().items():
        provider = distribution(name)
        if provider is None:
            unknown[name] = sorted(files)
        else:
            found[provider] |= files
    assert not unknown, f"no installed distribution provides these imports (install it, or fix the import): {unknown}"
    return found


def test_every_runtime_dependency_is_imported_somewhere_in_src() -> None:
    unused = declared() - set(imported_distributions())
    assert not unused, f"declared in pyproject's [project] dependencies but imported nowhere in src/: {sorted(unused)}"


def test_every_third_party_import_in_src_is_declared() -> None:
    undeclared = {name: sorted(files) for name, files in imported_distributions().items() if name not in declared()}
    assert not undeclared, f"imported by src/ but not in pyproject's [project] dependencies: {undeclared}"


def built_on_sections() -> dict[str, str]:
    """Each "Built on" section of README.md and docs/*.md (from its heading to the next heading
    of the same or a higher level), by file."""
    sections = {}
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        heading = re.search(r"^(#+)[ \t]+Built on\b.*$", text, re.M | re.I)
        if heading is None:
            continue
        level = len(heading.group(1))
        rest = text[heading.end() :]
        following = re.search(rf"^#{{1,{level}}}[ \t]", rest, re.M)
        sections[str(path.relative_to(ROOT))] = rest[: following.start() if following else len(rest)]
    return sections


def test_the_built_on_list_names_only_declared_dependencies() -> None:
    sections = built_on_sections()
    assert sections, 'no "Built on" section in README.md or docs/*.md: the list of what the tool is built on has gone missing'
    installed = {normalize(dist.metadata["Name"]) for dist in metadata.distributions()}
    for where, text in sections.items():
        words = {normalize(word) for word in re.findall(r"[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9]", text)}
        named = words & installed
        assert named & declared(), f"{where}: its Built on section names none of the declared dependencies"
        undeclared = named - declared()
        assert not undeclared, f"{where}: Built on names packages the project does not declare (so may not use): {sorted(undeclared)}"


def pinned(lock: str) -> set[str]:
    return {normalize(line.split("==")[0]) for line in (ROOT / lock).read_text().splitlines() if "==" in line and not line.startswith(" ")}


def test_the_vertex_sdk_is_an_extra_that_the_image_and_the_tests_install_and_the_core_does_not() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = {normalize(re.split(r"[<>=!~\[;\s]", spec, maxsplit=1)[0]) for spec in project["dependencies"]}
    assert "google-cloud-aiplatform" not in core, "the Vertex AI SDK is the vertex extra, not the core"
    assert any(spec.startswith("google-cloud-aiplatform") for spec in project["optional-dependencies"]["vertex"])
    assert "google-cloud-aiplatform" in pinned("requirements.runtime.lock"), (
        "the image (requirements.runtime.lock) includes the vertex extra"
    )
    assert "google-cloud-aiplatform" in pinned("requirements.lock"), "the tests' venv (requirements.lock) includes the vertex extra"
