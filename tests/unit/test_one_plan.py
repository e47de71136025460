"""`compare_with` is decided in one place: models/plan.py. No other module compares it."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "agent_eval_action"
PLAN = PACKAGE / "models" / "plan.py"


def _names(node: ast.expr) -> set[str]:
    return {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)} | {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def comparisons_of_compare_with(source: str) -> list[int]:
    """Lines where ``compare_with`` is compared (==, !=, in) with anything."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and "compare_with" in set().union(*(_names(e) for e in [node.left, *node.comparators])):
            lines.append(node.lineno)
    return lines


def test_the_check_compares_compare_with_only_in_its_plan() -> None:
    found = {
        str(module.relative_to(PACKAGE)): lines
        for module in PACKAGE.rglob("*.py")
        if module != PLAN and (lines := comparisons_of_compare_with(module.read_text(encoding="utf-8")))
    }
    assert not found, f"compare_with is compared outside models/plan.py (read the check's plan instead): {found}"
    assert comparisons_of_compare_with(PLAN.read_text(encoding="utf-8")), "the plan no longer reads compare_with: update this test"


def test_the_rule_sees_each_form_of_comparison() -> None:
    assert comparisons_of_compare_with('x = config.compare_with == "base"\n') == [1]
    assert comparisons_of_compare_with('if "base" != results.compare_with:\n    pass\n') == [1]
    assert comparisons_of_compare_with("ok = compare_with in ('base',)\n") == [1]
    assert comparisons_of_compare_with('results.compare_with = "base"\n') == []
