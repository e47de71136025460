"""The layout as three things state it: the code, the import-linter contract in pyproject.toml
(which `make lint` enforces), docs/architecture.md's "Layout" (every module under its folder)
and the README's map of the folders. A folder missing from the contract is checked by nothing;
a module missing from the docs is unexplained."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "agent_eval_action"


def top_level() -> set[str]:
    """Every module and folder directly in the package, as the contract names them."""
    found = {p.stem for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}
    return found | {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}


def contract_layers() -> list[list[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return [[name.strip().removeprefix("agent_eval_action.") for name in re.split(r"[:|]", layer)] for layer in contract["layers"]]


def layout_section(path: Path) -> list[str]:
    text = path.read_text()
    section = text[text.index("## Layout\n") :]
    section = section[: section.find("\n## ", 1)] if "\n## " in section[1:] else section
    return re.findall(r"```text\n(.*?)```", section, re.S)


def test_every_module_and_folder_is_in_one_layer_of_the_contract() -> None:
    listed = [name for layer in contract_layers() for name in layer]
    assert sorted(listed) == sorted(set(listed)), "a module is in two layers"
    assert set(listed) == top_level(), f"not in a layer: {top_level() - set(listed)}; no such module: {set(listed) - top_level()}"


def test_the_architecture_page_draws_the_layers_in_the_contracts_order() -> None:
    diagram = layout_section(ROOT / "docs" / "architecture.md")[0]
    drawn = [re.split(r"\s{2,}", line.strip())[0] for line in diagram.splitlines() if line.strip() and line.strip() != "|"]
    expected = [" | ".join(name for name in layer if name != "__main__") for layer in contract_layers()]
    assert drawn == expected


def test_the_architecture_page_names_every_module_under_its_folder() -> None:
    block = layout_section(ROOT / "docs" / "architecture.md")[1]
    lines = block.splitlines()[1:]
    named: dict[str, str] = {}  # folder ("" for the package itself) -> the text under it
    folder = ""
    for line in lines:
        if not line.startswith(" "):
            break  # tests/, scripts/, bench/
        entry = line.strip().split()[0] if line.strip() else ""
        if re.match(r"^  \S", line):
            folder = entry.rstrip("/") if entry.endswith("/") else ""
            named[folder] = named.get(folder, "") + line + "\n"
            if not entry.endswith("/"):
                named[""] = named.get("", "") + line + "\n"
        else:
            named[folder] = named.get(folder, "") + line + "\n"
    for module in PACKAGE.rglob("*.py"):
        rel = module.relative_to(PACKAGE)
        if module.name == "__init__.py" and rel.parent != Path("datasets"):
            continue
        top = rel.parts[0] if len(rel.parts) > 1 else ""
        text = named.get(top.removesuffix(".py") if top else "", "")
        assert module.name in text or module.stem in text, f"{rel} is not named under {top or 'the package'}/ in docs/architecture.md"


def test_the_readmes_map_lists_the_folders_in_the_contracts_order() -> None:
    (block,) = layout_section(ROOT / "README.md")
    drawn = [line.split()[0].rstrip("/").removesuffix(".py") for line in block.splitlines() if line.strip()]
    expected = [name for layer in contract_layers() for name in layer if name != "__main__"]
    assert drawn == expected


def test_every_folder_says_it_is_internal_and_what_it_exports() -> None:
    """The public API is the package's own ``__all__``; each folder says it is not part of it."""
    import ast

    for init in sorted(PACKAGE.rglob("__init__.py")):
        if init.parent == PACKAGE or "agent_worker" in init.relative_to(PACKAGE).parts:
            continue  # the API itself; the worker, which is copied and run under the agent's Python
        tree = ast.parse(init.read_text())
        assert "Internal: the public API is ``import agent_eval_action``" in (ast.get_docstring(tree, clean=False) or ""), init
        assert any(isinstance(n, ast.AnnAssign | ast.Assign) and "__all__" in ast.unparse(n).split("=")[0] for n in tree.body), init


# Issue 49's: a folder is a room a reader can take in, not a drawer.
FOLDER_MODULES = 15


def test_no_folder_holds_more_modules_than_a_reader_takes_in() -> None:
    crowded = []
    for folder in sorted({p.parent for p in PACKAGE.rglob("*.py")}):
        if (count := len(list(folder.glob("*.py")))) > FOLDER_MODULES:
            crowded.append(f"{folder.relative_to(ROOT)}: {count} modules (at most {FOLDER_MODULES}: split it by what it holds)")
    assert not crowded, "\n".join(crowded)


# Issue 35's limits: a module does one job a reader can hold, a function one step of it.
MODULE_LINES = 500
FUNCTION_LINES = 80


def test_no_module_or_function_outgrows_its_job() -> None:
    import ast

    too_long: list[str] = []
    for path in sorted([*PACKAGE.rglob("*.py"), *(ROOT / "bench").glob("*.py")]):
        text = path.read_text()
        rel = path.relative_to(ROOT)
        if (lines := len(text.splitlines())) > MODULE_LINES:
            too_long.append(f"{rel}: {lines} lines (at most {MODULE_LINES}: split it by job)")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (size := node.end_lineno - node.lineno + 1) > FUNCTION_LINES:  # type: ignore[operator]
                too_long.append(f"{rel}:{node.lineno} {node.name}: {size} lines (at most {FUNCTION_LINES})")
    assert not too_long, "\n".join(too_long)
