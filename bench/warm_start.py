"""The warm start (run/workers/zygote.py) against spawning each worker, side by side, alternated:

- start to ready: a pool of ``--workers`` workers of the example agent from ``start()`` until
  every one has said ``ready``, and one replacement (a worker killed, then a new one until it is
  ready), as the run takes it after a time out or a crash;
- a run: ``python -m agent_eval_action evaluate`` of ``--questions`` two-turn questions at
  ``--latency-ms`` of model latency, the whole process, ``--no-warm-start`` against the default.

Run alone: ``PYTHONPATH=src:. .venv/bin/python -m bench.warm_start``: writes
bench/out/warm_start.json and prints the rows for docs/performance.md. ``make bench`` runs the
pool's figures (``--pools-only``) and the run's in its own group (bench/fresh_process.py: the
same run, alternated with its floors).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.fresh_process import golden_cases
from bench.verdicts import alternate, median

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
EXAMPLE = ROOT / "examples" / "customer_service"


def _pool_times(workers: int, warm: bool) -> tuple[float, float]:
    """Seconds from start() until every worker is ready, and for one replacement to be ready."""
    from agent_eval_action.run.agent.env import agent_environment
    from agent_eval_action.run.workers.pool import WorkerPool
    from agent_eval_action.run.workers.start import WorkerSettings

    async def go() -> tuple[float, float]:
        settings = WorkerSettings(
            agent="customer_service",
            python=sys.executable,
            cwd=EXAMPLE,
            env=agent_environment(os.environ),
            workers=workers,
            warm_start=warm,
        )
        pool = WorkerPool(settings)
        started = time.perf_counter()
        await pool.start()
        ready = time.perf_counter() - started
        try:
            await pool.workers[0].kill("the benchmark replaces it")
            started = time.perf_counter()
            pool.workers[0] = await pool._spawn()
            replaced = time.perf_counter() - started
        finally:
            await pool.close()
        return ready, replaced

    return asyncio.run(go())


def _run_seconds(cases: Path, warm: bool, latency_ms: float) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "EXAMPLE_MODEL_LATENCY_MS": str(latency_ms)}
    env.pop("GOOGLE_API_KEY", None)
    args = [sys.executable, "-m", "agent_eval_action", "evaluate", str(cases), "--agent", "customer_service"]
    args += ["--output-dir", str(OUT / "warm_start_results"), *([] if warm else ["--no-warm-start"])]
    started = time.perf_counter()
    subprocess.run(args, cwd=EXAMPLE, env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - started


def pools(workers: int, repeats: int) -> dict[str, Any]:
    """The pool's start to ready and one replacement's, warm against cold, alternated ``repeats``
    times: each side's medians and samples (``make bench`` runs this with ``--pools-only``)."""
    sys.path.insert(0, str(EXAMPLE))
    times: dict[str, list[tuple[float, float]]] = {"warm": [], "cold": []}

    def pool_side(name: str) -> float:
        ready, replaced = _pool_times(workers, name == "warm")
        times[name].append((ready, replaced))
        return ready

    alternate({"warm": lambda: pool_side("warm"), "cold": lambda: pool_side("cold")}, repeats)
    result: dict[str, Any] = {"workers": workers}
    for side, samples in times.items():
        result[side] = {
            "ready_s": median([r for r, _ in samples]),
            "replacement_s": median([p for _, p in samples]),
            "samples": {"pool": samples},
        }
    return result


def measure(workers: int, questions: int, latency_ms: float, repeats: int) -> dict[str, Any]:
    OUT.mkdir(parents=True, exist_ok=True)
    pool = pools(workers, repeats)
    cases = golden_cases(questions)
    runs = alternate(
        {"warm": lambda: _run_seconds(cases, True, latency_ms), "cold": lambda: _run_seconds(cases, False, latency_ms)}, repeats
    )
    result: dict[str, Any] = {"workers": workers, "questions": questions, "latency_ms": latency_ms, "repeats": repeats}
    for side in ("warm", "cold"):
        result[side] = {**pool[side], "run_s": median(runs[side])}
        result[side]["samples"] = {**pool[side]["samples"], "run": runs[side]}
    return result


def rows(result: dict[str, Any]) -> list[str]:
    warm, cold = result["warm"], result["cold"]
    return [
        "| measured | warm (forked) | cold (spawned) | warm / cold |",
        "|---|---|---|---|",
        f"| {result['workers']} workers, start to ready | {warm['ready_s']:.2f} s | {cold['ready_s']:.2f} s | {warm['ready_s'] / cold['ready_s']:.2f}x |",
        f"| a replacement worker, start to ready | {warm['replacement_s']:.3f} s | {cold['replacement_s']:.3f} s "
        f"| {warm['replacement_s'] / cold['replacement_s']:.2f}x |",
        f"| {result['questions']} two-turn questions at {result['latency_ms'] / 1000:g} s latency, the whole `evaluate` process "
        f"| {warm['run_s']:.2f} s | {cold['run_s']:.2f} s | {warm['run_s'] / cold['run_s']:.2f}x |",
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--questions", type=int, default=64)
    parser.add_argument("--latency-ms", type=float, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--pools-only", action="store_true", help="the pool's figures only, as one JSON line (make bench)")
    args = parser.parse_args()
    if args.pools_only:
        print(json.dumps(pools(args.workers, args.repeats)))
        return
    result = measure(args.workers, args.questions, args.latency_ms, args.repeats)
    (OUT / "warm_start.json").write_text(json.dumps(result, indent=2))
    print("\n".join(rows(result)))


if __name__ == "__main__":
    main()
