"""The process the command line starts (``python -m agent_eval_action``, ``agent-eval``): its
collector set for a short process that holds much to its end, the command's exit code, what it
printed flushed before the fast exit; a command run inside another process leaves that
process's collector as it found it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

from agent_eval_action.system.collector import COMMAND_LINE_THRESHOLDS
from tests.helpers.repos import ROOT

ATEXIT = 'import atexit, gc, sys; atexit.register(lambda: print("thresholds", tuple(gc.get_threshold()), flush=True))'


def _run(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    script = ATEXIT + "\n" + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)


def test_the_command_lines_process_sets_its_collector_and_exits_with_the_commands_code(tmp_path: Path) -> None:
    done = _run(
        tmp_path,
        """
        sys.argv = ["agent-eval", "validate", "missing.json"]
        from agent_eval_action.cli.main import entry
        entry()
        print("not reached")
        """,
    )
    assert done.returncode == 2, done.stderr  # bad input: the command's own code
    assert "missing.json: no such file" in done.stderr
    # The atexit handlers ran (and saw the thresholds set for the process); nothing after entry() did.
    assert done.stdout.splitlines() == [f"thresholds {COMMAND_LINE_THRESHOLDS}"]


def test_a_command_run_inside_another_process_leaves_its_collector_as_it_was(tmp_path: Path) -> None:
    done = _run(
        tmp_path,
        """
        before = tuple(gc.get_threshold())
        from agent_eval_action.cli.main import main
        code = main(["validate", "missing.json"])
        print("code", code, "unchanged", tuple(gc.get_threshold()) == before)
        """,
    )
    assert done.stdout.splitlines()[0] == "code 2 unchanged True", done.stderr


def test_every_way_to_start_the_command_line_goes_through_the_entry() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"agent-eval": "agent_eval_action.cli.main:entry"}
    assert "entry()" in (ROOT / "src" / "agent_eval_action" / "__main__.py").read_text()
