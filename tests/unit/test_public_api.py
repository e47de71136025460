"""The public API is what type checkers see and what ``import agent_eval_action`` gives."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import agent_eval_action

INIT = Path(agent_eval_action.__file__)


def test_every_export_is_listed_typed_and_importable() -> None:
    exports = agent_eval_action._EXPORTS
    assert sorted(agent_eval_action.__all__) == sorted(["__version__", *exports])
    typed: dict[str, str] = {}
    for node in ast.walk(ast.parse(INIT.read_text())):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.module
                typed.update({alias.name: stmt.module for alias in stmt.names})
    # The same name from the same module for type checkers as at run time.
    assert typed == exports
    for name, module in exports.items():
        assert getattr(agent_eval_action, name) is getattr(importlib.import_module(module), name)
