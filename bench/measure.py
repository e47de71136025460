"""The measurements of ``make bench``'s older rows, each in processes of its own: recorded
scoring, agent runs against a bare loop, judge calls, the test suite, the action's start. Their
rows are in bench/rows.py."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.fresh_process import agent_runs_args
from bench.goals import OUT, ROOT
from bench.verdicts import alternate, median


def _recorded_once(file: Path, mode: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, "-m", "bench.recorded", str(file), "--mode", mode], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def recorded(rows: int, repeats: int, answer_words: int = 0) -> dict[str, Any]:
    """``answer_words``: the rows' answers and reference responses that many words long."""
    OUT.mkdir(parents=True, exist_ok=True)
    file = OUT / (f"recorded_{rows}_answers_{answer_words}.csv" if answer_words else f"recorded_{rows}.csv")
    if not file.exists():
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
        make = [sys.executable, "-m", "bench.recorded", str(file), "--make", "--rows", str(rows), "--answer-words", str(answer_words)]
        subprocess.run(make, cwd=ROOT, env=env, check=True)
    floors: list[dict[str, Any]] = []
    ours: list[dict[str, Any]] = []

    def side(runs: list[dict[str, Any]], mode: str) -> float:
        runs.append(_recorded_once(file, mode))
        return float(runs[-1]["seconds"])

    samples = alternate({"floor": lambda: side(floors, "floor"), "ours": lambda: side(ours, "ours")}, repeats)
    f, o = median(samples["floor"]), median(samples["ours"])
    assert all(r["rows"] == rows for r in ours), ours
    return {
        "rows": rows,
        "answer_words": answer_words,
        "samples": samples,
        "file_mb": file.stat().st_size / 2**20,
        "floor_s": f,
        "ours_s": o,
        "ratio": o / f,
        "floor_peak_mb": max(r["peak_rss_mb"] for r in floors),
        "ours_peak_mb": max(r["peak_rss_mb"] for r in ours),
        "ours_import_s": statistics.median(r["import_seconds"] for r in ours),
        "floor_import_s": statistics.median(r["import_seconds"] for r in floors),
    }


def _agent_once(mode: str, questions: int, workers: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    env.pop("GOOGLE_API_KEY", None)
    args = agent_runs_args(mode, questions, workers=workers)
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def agent_runs(questions: int, repeats: int) -> dict[str, Any]:
    """The bare single-process loop, ours in that one process (--in-process), and ours over two
    worker processes (the default on two cores), worker start and agent loading included."""
    bare: list[dict[str, Any]] = []
    inproc: list[dict[str, Any]] = []
    workers: list[dict[str, Any]] = []

    def side(runs: list[dict[str, Any]], mode: str, processes: int) -> float:
        runs.append(_agent_once(mode, questions, workers=processes))
        return float(runs[-1]["seconds"])

    samples = alternate(
        {
            "bare": lambda: side(bare, "bare", -1),
            "in process": lambda: side(inproc, "ours", 0),
            "workers": lambda: side(workers, "ours", 2),
        },
        repeats,
    )
    b = statistics.median(r["seconds"] for r in bare)
    o = statistics.median(r["seconds"] for r in inproc)
    w = statistics.median(r["with_setup_seconds"] for r in workers)
    return {
        "questions": questions,
        "samples": samples,
        "bare_s": b,
        "ours_s": o,
        "ratio": o / b,
        "ours_with_scoring_s": statistics.median(r["with_scoring_seconds"] for r in inproc),
        "ours_peak_mb": max(r["peak_rss_mb"] for r in inproc),
        "workers_s": w,
        "workers_run_s": statistics.median(r["seconds"] for r in workers),
        # Timed from when the workers are up (each has imported ADK and loaded the agent), as the
        # bare loop is timed after its own imports; the start is reported beside it.
        "workers_ratio": statistics.median(r["seconds"] for r in workers) / b,
    }


def agent_growth(small: dict[str, Any], questions: int, repeats: int) -> dict[str, Any]:
    """Ours over two workers (the default) at ``questions`` (10x :func:`agent_runs`' count): the
    time a question takes against the smaller run's (``small``, measured just before). The run's
    loop does a little for every question waiting and every model call: work that grows with what
    is waiting shows here, not at 200 (a condition waking every waiting question for each freed
    slot, the pacing sorting the minute's calls at each one: 2,000 questions took 19.3 s where
    they now take 14.7, 1.18x 200's time a question). Not in process: there the figure is the
    cyclic collector's, at the thresholds of the caller's process (docs/performance.md)."""
    runs: list[dict[str, Any]] = []

    def side() -> float:
        runs.append(_agent_once("ours", questions, workers=2))
        return float(runs[-1]["seconds"]) / questions

    samples = alternate({"workers": side}, repeats)
    small_per = [s / small["questions"] for s in small["samples"]["workers"]]
    return {
        "questions": questions,
        "small_questions": small["questions"],
        "samples": samples["workers"],
        "small_samples": small_per,
        "workers_s": statistics.median(r["seconds"] for r in runs),
        "ratio": median(samples["workers"]) / median(small_per),
    }


def judges(repeats: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    samples: list[dict[str, Any]] = []
    for _ in range(repeats):
        done = subprocess.run(
            [sys.executable, "-m", "bench.judges", "--calls", "200", "--concurrency", "16", "--latency-ms", "200"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        samples.append(json.loads(done.stdout))
    best = sorted(samples, key=lambda r: r["seconds"])[len(samples) // 2]
    return {**best, "samples": {"ours": [r["seconds"] for r in samples]}}


# The test suite's pytest command as `make test` runs it (after its lint).
SUITE = ["-m", "pytest", "-q", "-n", "3", "--dist", "worksteal", "-p", "no:cacheprovider"]


def suite() -> dict[str, Any]:
    """The whole test suite, once, as `make test` runs it: its seconds and pytest's last line."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, *SUITE], cwd=ROOT, capture_output=True, text=True, check=False)
    lines = done.stdout.strip().splitlines()
    failed = [line.split(" ", 1)[1].split(" - ")[0] for line in lines if line.startswith(("FAILED ", "ERROR "))]
    for name in failed:  # the row says how many; which ones are said here
        print(f"suite: {name}", file=sys.stderr)
    return {
        "seconds": time.perf_counter() - started,
        "exit_code": done.returncode,
        "summary": lines[-1].strip("= ") if lines else "",
        "failed": failed,
    }


def action_start(pulls: int) -> dict[str, Any]:
    """Job start to the first question, the action's image built at job start against pulled
    (bench/action_start.py); skipped without a container tool, reported if the build fails."""
    from bench.action_start import measure as measure_action_start

    try:
        return measure_action_start(pulls=pulls)
    except (subprocess.CalledProcessError, RuntimeError) as failed:
        detail = getattr(failed, "stderr", None) or str(failed)
        return {"skipped": f"failed: {detail.strip()[-300:]}"}
