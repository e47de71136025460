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
    mode: str, questions: int, concurrency: int | str = 32, latency_ms: int = 50, python: str = sys.executable, workers: int = -1
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


def _process_seconds(args: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - started


def adk_evaluator(questions: int, latency_ms: int, repeats: int) -> dict[str, Any] | None:
    """Ours against ADK's AgentEvaluator, which runs in the venv with ADK's eval extra (`make bench` makes it).

    What a user waits for, each a whole process from its start (imports, loading the agent,
    running, scoring): ``python -m agent_eval_action evaluate`` at its default settings against
    AgentEvaluator, which runs 4 cases at a time (its InferenceConfig default; it takes no
    setting). Also ours at a fixed concurrency of one per case, and the in-process figures
    timed after imports (as the earlier rows of this table were).
    """
    python = os.environ.get("AGENT_EVAL_BENCH_ADK_PYTHON")
    if not python:
        return None
    from bench.agent_runs import EXAMPLE, TURNS

    cases = OUT / f"cases_{questions}.json"
    cases.write_text(
        json.dumps(
            {
                "golden_questions": [
                    {
                        "id": f"q{i}",
                        "user_inputs": TURNS,
                        "agents_evaluated": ["customer_service"],
                        "reference_data": {"reference_response": "Your cart has 2 bags of potting soil, subtotal $25.98."},
                    }
                    for i in range(questions)
                ]
            }
        )
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]), "EXAMPLE_MODEL_LATENCY_MS": str(latency_ms)}
    env.pop("GOOGLE_API_KEY", None)
    theirs_args = [
        python,
        "-m",
        "bench.agent_runs",
        "--mode",
        "adk_evaluator",
        "--questions",
        str(questions),
        "--latency-ms",
        str(latency_ms),
    ]
    ours_args = [
        sys.executable,
        "-m",
        "agent_eval_action",
        "evaluate",
        str(cases),
        "--agent",
        "customer_service",
        "--output-dir",
        str(OUT / "adk_vs"),
    ]
    theirs = _process_seconds(theirs_args, ROOT, env)  # once: it takes a minute
    default, wide = [], []
    for _ in range(repeats):
        default.append(_process_seconds(ours_args, EXAMPLE, env))
        wide.append(_process_seconds([*ours_args, "--concurrency", str(questions)], EXAMPLE, env))
    ours_default, ours_wide = statistics.median(default), statistics.median(wide)
    return {
        "questions": questions,
        "latency_ms": latency_ms,
        "adk_s": theirs,
        "ours_default_s": ours_default,
        "speedup_default": theirs / ours_default,
        "ours_wide_s": ours_wide,
        "speedup_wide": theirs / ours_wide,
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
    results["adk_evaluator"] = adk_evaluator(
        8 if args.quick else 64, latency_ms=500 if args.quick else 1000, repeats=1 if args.quick else 3
    )
    from bench.pr_reuse import measure as pr_reuse

    results["pr_reuse"] = pr_reuse(40 if args.quick else 200, repeats=1 if args.quick else 3)
    results["cli_start"] = measure()
    from bench.aa_gate import measure as aa_gate
    from bench.aa_gate import row as aa_gate_row

    results["aa_gate"] = aa_gate(trials=20 if args.quick else 100)
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
            f"| {e['questions']} two-turn questions, {e['latency_ms']} ms model latency: the whole process (start, imports, run, scoring) "
            f"| {e['ours_default_s']:.2f} s at the default settings (concurrency auto); {e['ours_wide_s']:.2f} s at concurrency {e['questions']} "
            f"| ADK AgentEvaluator (4 at a time) {e['adk_s']:.2f} s | {e['speedup_default']:.1f}x faster; {e['speedup_wide']:.1f}x "
            "| >= 12x faster at the default |"
        )
    else:
        print("| vs ADK AgentEvaluator | skipped: install requirements.bench.lock (ADK's eval extra) | | | |")
    p = results["pr_reuse"]
    print(
        f"| PR check of a PR rewording 1 of {p['questions']} questions, 1 s model latency | {p['one_question_s']:.2f} s, "
        f"{p['one_question_calls']} model calls (reuse) | the same PR with --no-reuse: {p['full_s']:.2f} s, {p['full_calls']} model calls "
        f"| {p['full_calls'] / max(p['one_question_calls'], 1):.0f}x fewer calls, {p['full_s'] / p['one_question_s']:.1f}x faster | one question's calls |"
    )
    print(
        f"| 200 judge calls, 200 ms judge latency, concurrency 16 | {j['seconds']:.2f} s | ideal ceil(200/16) x 0.2 s = {j['ideal_seconds']:.2f} s "
        f"| {j['ratio']:.2f}x | <= 1.2x |"
    )
    print(
        f"| CLI start (`--help`) | {c['help_s'] * 1000:.0f} ms | bare interpreter {c['bare_s'] * 1000:.0f} ms | +{c['overhead_ms']:.0f} ms | < +300 ms |"
    )
    print(aa_gate_row(results["aa_gate"]))
    for row in action_start_rows(results["action_start"]):
        print(row)
    results["bench_seconds"] = time.perf_counter() - started
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "results.json").write_text(json.dumps(results, indent=2))
    print(f"\nwrote {OUT / 'results.json'} ({results['bench_seconds'] / 60:.1f} minutes in all)")


if __name__ == "__main__":
    main()
