"""The process the command line starts (``python -m agent_eval_action``, ``agent-eval``): its
collector set for a short process that holds much to its end, the command's exit code, what it
printed flushed before the fast exit; a command run inside another process leaves that
process's collector as it found it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from agent_eval_action.system.collector import COMMAND_LINE_THRESHOLDS
from tests.helpers.factories import csv_row, customer_service_runs, write_csv
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
    assert done.stdout.splitlines() == ["1 problem: missing.json (not read: see the error below)", f"thresholds {COMMAND_LINE_THRESHOLDS}"]


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
    assert "code 2 unchanged True" in done.stdout.splitlines(), done.stderr


def test_every_way_to_start_the_command_line_goes_through_the_entry() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"agent-eval": "agent_eval_action.cli.main:entry"}
    assert "entry()" in (ROOT / "src" / "agent_eval_action" / "__main__.py").read_text()


def _with_reader_gone(tmp_path: Path, *args: str, streams: tuple[str, ...]) -> int:
    """The command line run with ``streams`` (stdout, stderr) written to a pipe whose reader has
    already gone, as ``agent-eval check | head -1`` leaves them once head has its line: the
    first write there fails, whichever it is."""
    read, write = os.pipe()
    os.close(read)
    try:
        sink = {name: write if name in streams else subprocess.DEVNULL for name in ("stdout", "stderr")}
        done = subprocess.run([sys.executable, "-m", "agent_eval_action", *args], cwd=tmp_path, timeout=120, check=False, **sink)  # type: ignore[call-overload]
    finally:
        os.close(write)
    return done.returncode  # type: ignore[no-any-return]


@pytest.mark.parametrize("streams", [("stdout",), ("stderr",), ("stdout", "stderr")])
def test_a_reader_that_goes_away_ends_the_output_not_the_command(tmp_path: Path, streams: tuple[str, ...]) -> None:
    write_csv(tmp_path / "runs.csv", [csv_row(run) for run in customer_service_runs()[:3]])
    assert _with_reader_gone(tmp_path, "evaluate", "runs.csv", "--output-dir", "out", streams=streams) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert len(results["datasets"][0]["questions"]) == 3
    # Bad input keeps its own code too: never the gate's 1, nor an internal error's 3.
    (tmp_path / "broken.json").write_text("{")
    assert _with_reader_gone(tmp_path, "validate", "broken.json", streams=streams) == 2
