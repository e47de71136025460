"""All benchmarks, side by side in one run: ``python -m bench.run [--quick]``.

Prints a markdown table and writes ``bench/out/results.json``. Each goal is a ratio of two
measurements taken in this same run on this same machine. The measurements are in bench/measure.py
and their own modules, the rows in bench/rows.py and beside each measurement, the goals in
bench/goals.py, how each row is judged in bench/verdicts.py.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from typing import Any

from bench import base_mode, fresh_process, measure, rows
from bench.goals import OUT, ROOT
from bench.verdicts import HEADER, MIN_RUNS


def run_all(quick: bool) -> dict[str, Any]:
    """Every measurement, at the bench's sizes (``quick``: small, one run a side)."""
    from bench.aa_gate import measure as aa_gate
    from bench.cli_start import measure as cli_start
    from bench.observed_inputs import measure as observed_inputs
    from bench.pr_reuse import measure as pr_reuse
    from bench.quota import measure as quota
    from bench.views_scale import measure as views_scale

    # Every side of every row runs MIN_RUNS times in turn with the others (bench/verdicts.py);
    # --quick runs each once, and its rows say they are not judged.
    runs = 1 if quick else MIN_RUNS
    machine = {"python": platform.python_version(), "cpus": os.cpu_count(), "machine": platform.machine(), "system": platform.platform()}
    results: dict[str, Any] = {"machine": machine}
    results["recorded"] = measure.recorded(200 if quick else 2000, repeats=1 if quick else 5)
    # 20,000 rows (a 900 MB file, made once and kept in bench/out) show whether growth is linear.
    results["recorded_large"] = measure.recorded(2_000 if quick else 20_000, repeats=runs)
    results["agent_runs"] = measure.agent_runs(40 if quick else 200, repeats=runs)
    results["judges"] = measure.judges(runs)
    # Issue 39: 64 two-turn questions at 1 s, the warm start against the least any fresh process takes.
    results["fresh_process"] = fresh_process.measure(8 if quick else 64, latency_ms=500 if quick else 1000, repeats=runs)
    results["views"] = views_scale(1_000 if quick else 10_000, 250 if quick else 2_500, repeats=runs)
    results["pr_reuse"] = pr_reuse(40 if quick else 200, repeats=runs)
    results["cli_start"] = cli_start()
    results["aa_gate"] = aa_gate(checks=20 if quick else 200)
    # Issue 46: the same through the real command on a real stochastic agent.
    from bench.aa_real import measure as aa_real

    results["aa_real"] = aa_real(checks=4 if quick else 200, per_round=4 if quick else 20, broken_checks=2 if quick else 20)
    # Issue 39: base mode against baseline mode, and the re-runs' cost per question.
    results["base_mode"] = base_mode.measure(questions=8 if quick else 64, latency_ms=200 if quick else 1000, repeats=runs)
    # Issue 39: a quota of 120 requests a minute; --quick on a 6 s stand-in minute.
    results["quota"] = quota(questions=60 if quick else 300, rpm=120, minute_s=6.0 if quick else 60.0, repeats=runs)
    # Issue 34: the audit hook's cost per question, the agent workers' CPU with and without it.
    results["observed_inputs"] = observed_inputs(questions=32 if quick else 256, repeats=1 if quick else 5)
    if not quick:
        results["suite"] = measure.suite()
    results["action_start"] = measure.action_start(pulls=1 if quick else 3)
    return results


def table(results: dict[str, Any], *, quick: bool) -> list[str]:
    """The rows, each figure with its goal and verdict (bench/verdicts.py), one family after another."""
    from bench.aa_gate import row as aa_gate_row
    from bench.aa_real import row as aa_real_row
    from bench.action_start import rows as action_start_rows
    from bench.observed_inputs import rows as observed_inputs_rows
    from bench.quota import rows as quota_rows

    lines = rows.recorded_rows(results["recorded"], None if quick else results["recorded_large"])
    lines += rows.agent_rows(results["agent_runs"])
    lines += fresh_process.rows(results["fresh_process"])
    lines += rows.views_rows(results["views"])
    lines += rows.pr_reuse_rows(results["pr_reuse"])
    lines += rows.judges_rows(results["judges"])
    lines += rows.cli_rows(results["cli_start"])
    if "suite" in results:
        lines += rows.suite_rows(results["suite"])
    lines.append(aa_gate_row(results["aa_gate"]))
    lines.append(aa_real_row(results["aa_real"]))
    lines += base_mode.rows(results["base_mode"], simulated=results["aa_gate"])
    lines += quota_rows(results["quota"])
    lines += observed_inputs_rows(results["observed_inputs"])
    lines += [line + " not judged: one build against the median of the pulls |" for line in action_start_rows(results["action_start"])]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes and one run a side, to check the harness (nothing is judged)")
    args = parser.parse_args()
    started = time.perf_counter()
    sys.path.insert(0, str(ROOT / "src"))
    results = run_all(args.quick)
    machine = results["machine"]
    print(f"machine: {machine['cpus']} cpus, {machine['machine']}, Python {machine['python']}\n")
    print(HEADER)
    for line in table(results, quick=args.quick):
        print(line)
    results["bench_seconds"] = time.perf_counter() - started
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "results.json").write_text(json.dumps(results, indent=2))
    print(f"\nwrote {OUT / 'results.json'} ({results['bench_seconds'] / 60:.1f} minutes in all)")


if __name__ == "__main__":
    main()
