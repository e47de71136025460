"""The layers as three things state them: the code, the import-linter contract in pyproject.toml
(which `make lint` enforces), and the "Layout" of docs/architecture.md. A module missing from the contract is
checked by nothing; one missing from the README is unexplained."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "agent_eval_action"


def modules() -> set[str]:
    """Every module and sub-package directly in the package, as the docs name them (``x.py``, ``x/``)."""
    found = {p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}
    return found | {f"{p.name}/" for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}


def contract_layers() -> list[set[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    layers = []
    for layer in contract["layers"]:
        names = [name.strip().removeprefix("agent_eval_action.") for name in re.split(r"[:|]", layer)]
        layers.append({f"{name}/" if (PACKAGE / name).is_dir() else f"{name}.py" for name in names})
    return layers


def readme_layers() -> list[set[str]]:
    """The modules under each layer heading of docs/architecture.md's module list, top to bottom."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text[text.index("## Layout\n") :]
    block = re.findall(r"```text\n(src/agent_eval_action/\n.*?)```", section, re.S)[0]
    layers: list[set[str]] = []
    for line in block.splitlines()[1:]:
        if re.match(r"^  \S", line) and not line.strip().startswith("templates/"):
            layers.append(set())  # a layer heading
        elif re.match(r"^    \S", line):
            layers[-1].add(line.split()[0])
        elif not line.startswith(" "):
            break  # tests/, scripts/, bench/
    return layers


def test_every_module_is_in_one_layer_of_the_contract() -> None:
    layers = contract_layers()
    listed = [name for layer in layers for name in layer]
    assert sorted(listed) == sorted(set(listed)), "a module is in two layers"
    assert set(listed) == modules(), f"not in a layer: {modules() - set(listed)}; no such module: {set(listed) - modules()}"


def test_the_architecture_page_names_every_module_under_its_layer() -> None:
    readme = [layer - {"__init__.py"} for layer in readme_layers()]
    assert readme == contract_layers()
