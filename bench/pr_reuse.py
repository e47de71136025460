"""A one-question PR against a full run of the same dataset: model calls and wall time.

A git repository in a temp dir holds a 200-question dataset and the counting agent of the tests
(a scripted model that writes one line per call, 1 s a call); its baseline is written on main.
A PR rewords one question. The PR check runs once with question-level reuse (the default) and
once with ``--no-reuse`` (every selected question runs, as before reuse existed), alternately:

    python -m bench.pr_reuse [--questions 200] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _check(repo: Path, *args: str) -> tuple[float, int]:
    """Seconds of the whole CLI process, and the model calls it made."""
    calls = repo / "calls.txt"
    calls.write_text("")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "CALLS_FILE": str(calls), "COUNTING_LATENCY_MS": "1000"}
    env.pop("GITHUB_BASE_REF", None)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "agent_eval_action", *args], cwd=repo, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"the PR check failed (exit {done.returncode}): {done.stderr[-2000:]}")
    return seconds, len(calls.read_text().splitlines())


def measure(questions: int = 200, repeats: int = 3) -> dict[str, Any]:
    from tests.helpers.repos import DATASET, counting_repo, git, golden

    from bench.verdicts import alternate

    with tempfile.TemporaryDirectory() as tmp:
        repo = counting_repo(Path(tmp) / "repo", questions)
        _check(repo, "baseline", "update")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "baselines")
        git(repo, "checkout", "-q", "-b", "pr")
        golden(repo / DATASET, questions, edited={7})
        git(repo, "commit", "-qam", "reword one question")
        reused: list[tuple[float, int]] = []
        full: list[tuple[float, int]] = []

        def side(runs: list[tuple[float, int]], *args: str) -> float:
            runs.append(_check(repo, "check", "--base", "main", "--no-comment", *args))
            return runs[-1][0]

        # Alternated, so both see the same machine.
        samples = alternate({"reuse": lambda: side(reused), "no reuse": lambda: side(full, "--no-reuse")}, repeats)
    return {
        "questions": questions,
        "samples": samples,
        "calls": [calls for _, calls in reused],
        "one_question_s": statistics.median(s for s, _ in reused),
        "one_question_calls": reused[0][1],
        "full_s": statistics.median(s for s, _ in full),
        "full_calls": full[0][1],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(json.dumps(measure(args.questions, args.repeats)))


if __name__ == "__main__":
    main()
