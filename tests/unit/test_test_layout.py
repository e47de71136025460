"""The tests' own layout: what several test modules share lives in tests/helpers/ (or a conftest),
never in a test module another imports, so a test file can be moved, renamed or run alone."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """Every module ``path`` imports (``from tests.x import test_y`` counts as ``tests.x.test_y``), with its line."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def is_test_module(name: str) -> bool:
    parts = name.split(".")
    return parts[0] == "tests" and any(part.startswith("test_") or part == "conftest" for part in parts[1:])


def test_no_module_of_the_tests_imports_a_test_module() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in sorted(TESTS.rglob("*.py"))
        for line, name in imported_modules(path)
        if is_test_module(name)
    ]
    assert not offenders, "move what is shared into tests/helpers/ (or a conftest.py fixture):\n" + "\n".join(offenders)


def test_the_check_sees_each_way_of_importing_a_test_module(tmp_path: Path) -> None:
    for source in [
        "from tests.integration.test_pr_flow import cli\n",
        "from tests.integration import test_verdict\n",
        "import tests.unit.test_views\n",
        "def f() -> None:\n    from tests.end_to_end.test_init import app_repo\n",
    ]:
        module = tmp_path / "test_x.py"
        module.write_text(source)
        assert any(is_test_module(name) for _, name in imported_modules(module)), source
    module.write_text(
        "from tests.helpers.repos import new_repo\nfrom tests.fakes.github_server import FakeGitHub\nimport tests.apps.simulated_user\n"
    )
    assert not any(is_test_module(name) for _, name in imported_modules(module))


def test_the_unit_tests_mirror_the_packages() -> None:
    """tests/unit/<package>/ for the modules of src/agent_eval_action/<package>/; each folder a
    package of its own, so two test modules of one name in two folders never clash."""
    packages = {p.name for p in (ROOT / "src" / "agent_eval_action").iterdir() if (p / "__init__.py").is_file()}
    folders = [p for p in (TESTS / "unit").iterdir() if p.is_dir() and p.name != "__pycache__"]
    assert folders, "no unit test folder"
    for folder in folders:
        assert folder.name in packages, f"tests/unit/{folder.name}/ mirrors no package of src/agent_eval_action"
        assert (folder / "__init__.py").is_file(), f"tests/unit/{folder.name}/ needs an __init__.py"


# Modules of pure logic (no I/O, no processes): each has a unit test module of its own, named after
# it, beside the package's other unit tests. Add a module here when you write one.
PURE_LOGIC = [
    "verdict/selection.py",
    "verdict/rules.py",
    "verdict/noise.py",
    "verdict/outcome.py",
    "models/plan.py",
    "scoring/aggregate.py",
    "scoring/reuse.py",
    "run/budget.py",
    "run/retry.py",
    "repo/globs.py",
    "traces/spans.py",
    "traces/adk_events.py",
]


def test_each_pure_logic_module_has_a_unit_test_module_of_its_own() -> None:
    for module in PURE_LOGIC:
        assert (ROOT / "src" / "agent_eval_action" / module).is_file(), f"no module {module}: update PURE_LOGIC"
        package, name = module.removesuffix(".py").split("/")
        assert (TESTS / "unit" / package / f"test_{name}.py").is_file(), f"{module} has no tests/unit/{package}/test_{name}.py"


def test_the_slow_first_order_names_only_tests_that_exist() -> None:
    """tests/conftest.py's SLOW_MODULES and SLOW_TESTS are written by hand: a renamed or deleted
    test would silently drop out of the order (and a long test then starts last)."""
    conftest = TESTS / "conftest.py"
    named = {
        target.id: ast.literal_eval(node.value)
        for node in ast.parse(conftest.read_text(), str(conftest)).body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name) and target.id in ("SLOW_MODULES", "SLOW_TESTS")
    }
    SLOW_MODULES, SLOW_TESTS = named["SLOW_MODULES"], named["SLOW_TESTS"]  # read, not imported: conftest is a test module
    missing = [module for module in SLOW_MODULES if not (ROOT / module).is_file()]
    for test in SLOW_TESTS:
        module, _, name = test.partition("::")
        path = ROOT / module
        defined = path.is_file() and any(
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name
            for node in ast.parse(path.read_text(), str(path)).body
        )
        if not defined or module not in SLOW_MODULES:
            missing.append(test)
    assert not missing, "tests/conftest.py names tests that do not exist (or whose module is not in SLOW_MODULES):\n" + "\n".join(missing)
