"""All benchmarks, side by side in one run: ``python -m bench.run [--quick]``.

Prints a markdown table and writes ``bench/out/results.json``. Each goal is a ratio of two
measurements taken in this same run on this same machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"


def _recorded_once(file: Path, mode: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, "-m", "bench.recorded", str(file), "--mode", mode], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def recorded(rows: int, repeats: int) -> dict[str, Any]:
    OUT.mkdir(parents=True, exist_ok=True)
    file = OUT / f"recorded_{rows}.csv"
    if not file.exists():
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
        subprocess.run([sys.executable, "-m", "bench.recorded", str(file), "--make", "--rows", str(rows)], cwd=ROOT, env=env, check=True)
    floors, ours = [], []
    for _ in range(repeats):  # alternate so both see the same machine state
        floors.append(_recorded_once(file, "floor"))
        ours.append(_recorded_once(file, "ours"))
    f = statistics.median(r["seconds"] for r in floors)
    o = statistics.median(r["seconds"] for r in ours)
    assert all(r["rows"] == rows for r in ours), ours
    return {
        "rows": rows,
        "file_mb": file.stat().st_size / 2**20,
        "floor_s": f,
        "ours_s": o,
        "ratio": o / f,
        "floor_peak_mb": max(r["peak_rss_mb"] for r in floors),
        "ours_peak_mb": max(r["peak_rss_mb"] for r in ours),
        "ours_import_s": statistics.median(r["import_seconds"] for r in ours),
        "floor_import_s": statistics.median(r["import_seconds"] for r in floors),
    }


def _agent_once(
    mode: str, questions: int, concurrency: int = 32, latency_ms: int = 50, python: str = sys.executable, workers: int = -1
) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    env.pop("GOOGLE_API_KEY", None)
    args = [python, "-m", "bench.agent_runs", "--mode", mode, "--questions", str(questions)]
    args += ["--concurrency", str(concurrency), "--latency-ms", str(latency_ms), "--workers", str(workers)]
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def agent_runs(questions: int, repeats: int) -> dict[str, Any]:
    """The bare single-process loop, ours in that one process (--in-process), and ours over two
    worker processes (the default on two cores), worker start and agent loading included."""
    bare, inproc, workers = [], [], []
    for _ in range(repeats):
        bare.append(_agent_once("bare", questions))
        inproc.append(_agent_once("ours", questions, workers=0))
        workers.append(_agent_once("ours", questions, workers=2))
    b = statistics.median(r["seconds"] for r in bare)
    o = statistics.median(r["seconds"] for r in inproc)
    w = statistics.median(r["with_setup_seconds"] for r in workers)
    return {
        "questions": questions,
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


def adk_evaluator(questions: int, latency_ms: int) -> dict[str, Any] | None:
    """Ours against ADK's AgentEvaluator, which runs in the venv with ADK's eval extra (`make bench` makes it).

    AgentEvaluator runs 4 cases at a time (its InferenceConfig default; it takes no setting),
    so it is measured once; ours at concurrency equal to the number of cases, and at our default.
    """
    python = os.environ.get("AGENT_EVAL_BENCH_ADK_PYTHON")
    if not python:
        return None
    theirs = _agent_once("adk_evaluator", questions, latency_ms=latency_ms, python=python)
    wide = _agent_once("ours", questions, concurrency=questions, latency_ms=latency_ms)
    from agent_eval_action.config import Config

    default = _agent_once("ours", questions, concurrency=Config().concurrency, latency_ms=latency_ms)
    return {
        "questions": questions,
        "latency_ms": latency_ms,
        "adk_s": theirs["seconds"],
        "ours_s": wide["with_setup_seconds"],
        "speedup": theirs["seconds"] / wide["with_setup_seconds"],
        "ours_default_concurrency_s": default["with_setup_seconds"],
        "speedup_default_concurrency": theirs["seconds"] / default["with_setup_seconds"],
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
    return best


def action_start(pulls: int) -> dict[str, Any]:
    """Job start to the first question, the action's image built at job start against pulled
    (bench/action_start.py); skipped without a container tool, reported if the build fails."""
    from bench.action_start import measure as measure_action_start

    try:
        return measure_action_start(pulls=pulls)
    except (subprocess.CalledProcessError, RuntimeError) as failed:
        detail = getattr(failed, "stderr", None) or str(failed)
        return {"skipped": f"failed: {detail.strip()[-300:]}"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes, to check the harness")
    args = parser.parse_args()
    started = time.perf_counter()
    sys.path.insert(0, str(ROOT / "src"))
    from bench.action_start import rows as action_start_rows
    from bench.cli_start import measure

    machine = {"python": platform.python_version(), "cpus": os.cpu_count(), "machine": platform.machine(), "system": platform.platform()}
    results: dict[str, Any] = {"machine": machine}
    rows = 200 if args.quick else 2000
    results["recorded"] = recorded(rows, repeats=1 if args.quick else 5)
    # 20,000 rows (a 900 MB file, made once and kept in bench/out) show whether growth is linear.
    results["recorded_large"] = recorded(2_000 if args.quick else 20_000, repeats=1 if args.quick else 2)
    results["agent_runs"] = agent_runs(40 if args.quick else 200, repeats=1 if args.quick else 3)
    results["judges"] = judges(1 if args.quick else 3)
    results["adk_evaluator"] = adk_evaluator(8 if args.quick else 64, latency_ms=500 if args.quick else 1000)
    results["cli_start"] = measure()
    results["action_start"] = action_start(pulls=1 if args.quick else 3)
    r, c, a, j = results["recorded"], results["cli_start"], results["agent_runs"], results["judges"]
    print(f"machine: {machine['cpus']} cpus, {machine['machine']}, Python {machine['python']}\n")
    print("| benchmark | ours | reference | ratio | goal |")
    print("|---|---|---|---|---|")
    print(
        f"| score {r['rows']} recorded rows ({r['file_mb']:.0f} MB) | {r['ours_s']:.2f} s, peak {r['ours_peak_mb']:.0f} MB "
        f"| parse floor {r['floor_s']:.2f} s, peak {r['floor_peak_mb']:.0f} MB | {r['ratio']:.2f}x | <= 3x, < 2048 MB |"
    )
    print(
        f"| run {a['questions']} two-turn questions, 50 ms model latency, concurrency 32 | {a['ours_s']:.2f} s "
        f"({a['ours_with_scoring_s']:.2f} s with scoring), in process | bare asyncio loop over Runner.run_async {a['bare_s']:.2f} s | {a['ratio']:.2f}x | <= 1.25x |"
    )
    print(
        f"| the same over 2 agent worker processes (the default here) | {a['workers_run_s']:.2f} s once started "
        f"({a['workers_s']:.2f} s with their start and scoring) | the bare single-process loop {a['bare_s']:.2f} s | {a['workers_ratio']:.2f}x | <= 0.8x |"
    )
    if not args.quick:
        big = results["recorded_large"]
        growth = (big["ours_s"] / r["ours_s"]) / (big["rows"] / r["rows"])
        print(
            f"| score {big['rows']} recorded rows ({big['file_mb']:.0f} MB) | {big['ours_s']:.2f} s, peak {big['ours_peak_mb']:.0f} MB "
            f"| parse floor {big['floor_s']:.2f} s, peak {big['floor_peak_mb']:.0f} MB | {big['ratio']:.2f}x (time per row {growth:.2f}x the 2,000-row run's) | <= 3x, linear |"
        )
    e = results["adk_evaluator"]
    if e is not None:
        print(
            f"| {e['questions']} two-turn questions, {e['latency_ms']} ms model latency, loaded, run and scored "
            f"| {e['ours_s']:.2f} s (concurrency {e['questions']}); {e['ours_default_concurrency_s']:.2f} s at the default concurrency "
            f"| ADK AgentEvaluator (4 at a time) {e['adk_s']:.2f} s | {e['speedup']:.1f}x faster; {e['speedup_default_concurrency']:.1f}x "
            "| >= 12x faster |"
        )
    else:
        print("| vs ADK AgentEvaluator | skipped: install requirements.bench.lock (ADK's eval extra) | | | |")
    print(
        f"| 200 judge calls, 200 ms judge latency, concurrency 16 | {j['seconds']:.2f} s | ideal ceil(200/16) x 0.2 s = {j['ideal_seconds']:.2f} s "
        f"| {j['ratio']:.2f}x | <= 1.2x |"
    )
    print(
        f"| CLI start (`--help`) | {c['help_s'] * 1000:.0f} ms | bare interpreter {c['bare_s'] * 1000:.0f} ms | +{c['overhead_ms']:.0f} ms | < +300 ms |"
    )
    for row in action_start_rows(results["action_start"]):
        print(row)
    results["bench_seconds"] = time.perf_counter() - started
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "results.json").write_text(json.dumps(results, indent=2))
    print(f"\nwrote {OUT / 'results.json'} ({results['bench_seconds'] / 60:.1f} minutes in all)")


if __name__ == "__main__":
    main()
