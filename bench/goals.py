"""The goals of ``make bench``'s rows, each judged by bench/verdicts.py, and what the agent rows share."""

from __future__ import annotations

import os
from pathlib import Path

from bench.verdicts import Goal

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
# A two-turn question's model calls that wait on each other: the floor of the agent path is
# this many model latencies (issue 27's goal: ours within 1.25x of it).
MODEL_CALLS_IN_SEQUENCE = 3
GOALS = {
    # Issue 50: back near the floor, flat per row, and a gigabyte at 20,000 rows.
    "recorded": Goal(2.5, note="the parse floor"),
    "recorded_growth": Goal(1.1, note="the smaller run's time per row (flat)"),
    "agent_in_process": Goal(1.25),
    "agent_workers": Goal(0.8),
    # A question's time flat in how many there are (what the run's loop does per question waiting
    # or per model call must not grow with them).
    "agent_growth": Goal(1.1, note="the smaller run's time per question (flat)"),
    "agent_floor": Goal(1.25, note="the model-latency floor"),
    # Issue 39: the least any fresh process takes is the floor within reach; ours at 1.1x of it.
    "agent_floor_fresh": Goal(1.1, note="the least any fresh process takes (the row below)"),
    "adk_evaluator": Goal(12.0, at_most=False, note="faster"),
    # Not an issue's goal: what ADK alone costs over the floor, as the whole process a user waits for.
    "bare_adk_process": Goal(1.1, note="a bare ADK script's whole process"),
    # Not ours either: whether agent_floor is within anyone's reach on this machine with this ADK.
    "agent_floor_reach": Goal(1.25, note="the model-latency floor (else no fresh process can meet agent_floor)"),
    # The warm start (issue 39) against spawning each worker: no goal of its own but not slower.
    "warm_start": Goal(1.0, note="spawning each worker (--no-warm-start)"),
    "views_regressed": Goal(2.0, note="the check with none regressed"),
    "views_scale": Goal(4.0, note="for 4x the questions"),
    "pr_reuse": Goal(1.0, note="one question's model calls"),
    "peak_memory": Goal(1024, unit=" MB"),
    "judges": Goal(1.2, note="the ideal"),
    "cli_start": Goal(300, unit=" ms", note="over a bare interpreter"),
    "suite": Goal(180, unit=" s", note="(3 minutes, every test passing)"),
    # Issue 39: the base's agent run now, beside the PR's, at most 2.2x the stored baselines' check.
    "base_mode": Goal(2.2, note="the same PR's check against the stored baselines"),
}


def bench_env(**extra: str) -> dict[str, str]:
    """Our environment with src and the repository on the path (bench.* and tests.* importable),
    without a Google key (every agent here is scripted or loopback) nor the Actions variables a
    check would read as its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env.pop("GOOGLE_API_KEY", None)
    return {**env, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]), **extra}
