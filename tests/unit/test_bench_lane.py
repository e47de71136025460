"""The bench's lane (bench/in_process.py): commands run in one long-lived process, each with its
own folder and environment, their output and exit code handed back whole over a pipe their
own prints cannot reach."""

from __future__ import annotations

import os
from pathlib import Path

from bench.in_process import Lane

from agent_eval_action import __version__


def test_a_lane_runs_commands_in_turn_and_hands_back_each_ones_exit_and_output(tmp_path: Path) -> None:
    lane = Lane()
    try:
        version = lane.run(["--version"], cwd=tmp_path, env=dict(os.environ))
        wrong = lane.run(["evaluate", "--no-such-flag"], cwd=tmp_path, env=dict(os.environ))
        again = lane.run(["--version"], cwd=tmp_path, env=dict(os.environ))
    finally:
        lane.close()
    assert (version.returncode, version.stdout.strip()) == (0, f"agent-eval-action {__version__}")
    assert wrong.returncode == 2 and "--no-such-flag" in wrong.stderr and wrong.stdout == ""
    assert again.returncode == 0 and again.stdout == version.stdout
