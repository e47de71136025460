"""The command line dispatches on one table (``cli.commands.COMMANDS``) after one set-up step
(``invoke``): every command the parser knows has a row, every flag a row lays over the config is
one its parser gives, and no command loads the config or sets up redaction on its own."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

from agent_eval_action.cli.commands import COMMANDS
from agent_eval_action.cli.main import build_parser

COMMANDS_PY = Path(__file__).resolve().parents[3] / "src" / "agent_eval_action" / "cli" / "commands.py"


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def _dests(parser: argparse.ArgumentParser) -> set[str]:
    """Every attribute parsing a command line of ``parser`` may set (its subcommands' too)."""
    found = {action.dest for action in parser._actions}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                found |= _dests(child)
    return found


def test_every_command_of_the_parser_has_one_row_and_every_row_a_command() -> None:
    assert set(_subcommands(build_parser())) == set(COMMANDS)


def test_every_flag_a_row_lays_over_the_config_is_one_its_command_parses() -> None:
    for name, parser in _subcommands(build_parser()).items():
        command = COMMANDS[name]
        if command.flags is not None:
            assert "config" in _dests(parser), name
            assert set(command.flags) <= _dests(parser), (name, set(command.flags) - _dests(parser))


def test_only_the_set_up_loads_the_config_and_protects_the_streams() -> None:
    """``load_config`` once, in ``invoke``; ``redactor_for`` with streams there too (elsewhere it
    only builds the redactor results.json and the comment are written with)."""
    tree = ast.parse(COMMANDS_PY.read_text(encoding="utf-8"))
    callers: dict[str, list[str]] = {"load_config": [], "redactor_for with streams": []}
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                if node.func.id == "load_config":
                    callers["load_config"].append(function.name)
                if node.func.id == "redactor_for" and len(node.args) > 1:
                    callers["redactor_for with streams"].append(function.name)
    assert callers == {"load_config": ["invoke"], "redactor_for with streams": ["invoke"]}


def test_writing_results_alone_clears_the_views_without_importing_them(tmp_path: Path) -> None:
    """``evaluate`` writes results.json alone and removes the views an earlier run left there; it
    names them without importing the views and the publisher (9 ms after its run). In a fresh
    interpreter: this one has them all."""
    import subprocess
    import sys

    for name in ("comment.md", "summary.md", "junit.xml", "report.html"):
        (tmp_path / name).write_text("an earlier run's\n")
    code = (
        "import sys\n"
        "from agent_eval_action.cli.outputs import written_results\n"
        "from agent_eval_action.config import Config\n"
        "from agent_eval_action.models.results import Results\n"
        "before = set(sys.modules)\n"
        "written_results(Results(), Config(output_dir=sys.argv[1]), alone=True)\n"
        "print(sorted(m for m in set(sys.modules) - before if m.startswith(('agent_eval_action.publish.', 'agent_eval_action.views'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]
