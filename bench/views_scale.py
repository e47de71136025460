"""The PR check of a large recorded dataset, with many questions regressed and with none.

A git repository in a temp dir holds a recorded CSV of N questions (the factories' six
customer-service runs, each question id unique) and its baseline, written on main. A PR branch
rewrites the CSV: in one, a share of the questions lost their tool calls, state and answer (each
of them regresses, with a side-by-side table in every view); in the other, only a timestamp
changed (the dataset is selected and scored again, nothing regresses). Each PR check is the CLI
``check --base main --no-comment`` as a whole process, as a user or CI waits for it:

    python -m bench.views_scale [--questions 10000] [--repeats 3]
    python -m bench.views_scale --make DIR --questions 10000 --regressed 0.6   # the repository only
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATASET = Path("evaluation") / "datasets" / "recorded.csv"
# The share of questions that regress in the "many" PR (issue 27's measurement).
REGRESSED = 0.6


def _rows(questions: int, regressed: float, stamp: str) -> list[dict[str, str]]:
    """``questions`` recorded rows; every question whose index falls in the first ``regressed``
    share of each hundred lost its tool calls, its state writes and its answer."""
    from tests.helpers.factories import csv_row, customer_service_runs

    runs = customer_service_runs()
    rows = []
    for i in range(questions):
        run = runs[i % len(runs)]
        run = replace(run, qid=f"{run.qid}_{i:06d}", session_id=None)
        if i % 100 < round(regressed * 100):
            run = replace(
                run,
                turns=[[(agent, []) for agent, _ in turn] for turn in run.turns],
                state={"customer_id": "123"},
                final_response="Sorry, I cannot help with that.",
            )
        row = csv_row(run)
        row["timestamp"] = stamp
        rows.append(row)
    return rows


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def _env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    for name in ("GITHUB_BASE_REF", "GITHUB_ACTIONS", "GITHUB_EVENT_PATH", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"):
        env.pop(name, None)
    return env


def make_repo(repo: Path, questions: int, regressed: float, main: Path | None = None) -> Path:
    """The repository, checked out on a PR branch whose dataset has ``regressed`` of its
    questions regressed (0: only a timestamp changed). ``main``: a repository of the same size
    whose main branch (the dataset and its baseline, 25 s of scoring at 10,000 questions) is
    cloned instead of made again."""
    from tests.helpers.factories import write_csv

    if main is not None:
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", "-b", "main", str(main), str(repo)], check=True, capture_output=True)
        git(repo, "remote", "remove", "origin")  # a repository of its own, as made
        git(repo, "config", "user.email", "ci@example.com")  # a clone's own config is not copied
        git(repo, "config", "user.name", "CI")
        return _pr(repo, questions, regressed)
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "ci@example.com")
    git(repo, "config", "user.name", "CI")
    (repo / "agent-eval.toml").write_text('datasets = ["evaluation/datasets/*.csv"]\n')
    (repo / ".gitignore").write_text("agent-eval-results/\n")
    (repo / DATASET).parent.mkdir(parents=True)
    write_csv(repo / DATASET, _rows(questions, 0.0, "2024-11-19T07:06:40Z"))
    subprocess.run(
        [sys.executable, "-m", "agent_eval_action", "baseline", "update", "--progress", "never"],
        cwd=repo,
        env=_env(),
        check=True,
        capture_output=True,
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "dataset and baseline")
    return _pr(repo, questions, regressed)


def _pr(repo: Path, questions: int, regressed: float) -> Path:
    from tests.helpers.factories import write_csv

    git(repo, "checkout", "-q", "-b", "pr")
    write_csv(repo / DATASET, _rows(questions, regressed, "2024-11-20T07:06:40Z"))
    git(repo, "commit", "-qam", "the PR")
    return repo


def check(repo: Path) -> float:
    """Seconds of the whole PR check, a process from its start; the gate's verdict is checked
    against what the PR holds, so a broken scenario never passes for a fast one."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "agent_eval_action", "check", "--base", "main", "--no-comment", "--progress", "never"],
        cwd=repo,
        env=_env(),
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"the PR check failed (exit {done.returncode}): {done.stderr[-2000:]}")
    (repo / "agent-eval-results" / "terminal.txt").write_text(done.stdout)
    return seconds


def regressed_count(repo: Path) -> int:
    """How many questions the last check's terminal view said got worse (0 when none)."""
    found = re.search(r"why: (\d+) questions? got worse", (repo / "agent-eval-results" / "terminal.txt").read_text())
    return int(found.group(1)) if found else 0


def measure(questions: int = 10_000, small: int = 2_500, repeats: int = 3) -> dict[str, Any]:
    """The two goals of issue 27, each side alternated ``repeats`` times: 60% regressed against
    none at ``questions``, and ``questions`` against ``small`` (both 60% regressed)."""
    from bench.verdicts import alternate

    with tempfile.TemporaryDirectory() as tmp:
        many = make_repo(Path(tmp) / "many", questions, REGRESSED)
        none = make_repo(Path(tmp) / "none", questions, 0.0, main=many)
        few = make_repo(Path(tmp) / "few", small, REGRESSED)
        samples = alternate({"many": lambda: check(many), "none": lambda: check(none), "few": lambda: check(few)}, repeats)
        counts = {name: regressed_count(repo) for name, repo in (("many", many), ("none", none), ("few", few))}
    return {"questions": questions, "small": small, "regressed_share": REGRESSED, "samples": samples, "regressed": counts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--small", type=int, default=2_500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--regressed", type=float, default=REGRESSED)
    parser.add_argument("--make", type=Path, help="only make the repository (on its PR branch) in this new directory")
    args = parser.parse_args()
    if args.make:
        make_repo(args.make, args.questions, args.regressed)
        print(args.make)
        return
    print(json.dumps(measure(args.questions, args.small, args.repeats)))


if __name__ == "__main__":
    main()
