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

from bench.verdicts import HEADER, MIN_RUNS, Goal, alternate, median, ratio, row

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
# A two-turn question's model calls that wait on each other: the floor of the agent path is
# this many model latencies (issue 27's goal: ours within 1.25x of it).
MODEL_CALLS_IN_SEQUENCE = 3
# The goals of issue 27 and of the rows before it, each judged by bench/verdicts.py.
GOALS = {
    "recorded": Goal(3.0, note="the parse floor"),
    "recorded_growth": Goal(1.2, note="the smaller run's time per row (flat)"),
    "agent_in_process": Goal(1.25),
    "agent_workers": Goal(0.8),
    "agent_floor": Goal(1.25, note="the model-latency floor"),
    "adk_evaluator": Goal(12.0, at_most=False, note="faster"),
    # Not an issue's goal: what ADK alone costs over the floor, as the whole process a user waits for.
    "bare_adk_process": Goal(1.1, note="a bare ADK script's whole process"),
    # Not ours either: whether agent_floor is within anyone's reach on this machine with this ADK.
    "agent_floor_reach": Goal(1.25, note="the model-latency floor (else no fresh process can meet agent_floor)"),
    "views_regressed": Goal(2.0, note="the check with none regressed"),
    "views_scale": Goal(4.0, note="for 4x the questions"),
    "pr_reuse": Goal(1.0, note="one question's model calls"),
    "peak_memory": Goal(2048, unit=" MB"),
    "judges": Goal(1.2, note="the ideal"),
    "cli_start": Goal(300, unit=" ms", note="over a bare interpreter"),
    "suite": Goal(180, unit=" s", note="(3 minutes, every test passing)"),
}


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


def _agent_runs_args(
    mode: str, questions: int, concurrency: int | str = 32, latency_ms: int = 50, python: str = sys.executable, workers: int = -1
) -> list[str]:
    """The command line of one ``bench.agent_runs`` process."""
    args = [python, "-m", "bench.agent_runs", "--mode", mode, "--questions", str(questions)]
    return [*args, "--concurrency", str(concurrency), "--latency-ms", str(latency_ms), "--workers", str(workers)]


def _agent_once(
    mode: str, questions: int, concurrency: int | str = 32, latency_ms: int = 50, python: str = sys.executable, workers: int = -1
) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    env.pop("GOOGLE_API_KEY", None)
    args = _agent_runs_args(mode, questions, concurrency, latency_ms, python, workers)
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
    theirs_args = _agent_runs_args("adk_evaluator", questions, latency_ms=latency_ms, python=python)
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
    # The least any evaluation of this agent can take as a process: a bare script (Python start,
    # ADK's import, Runner.run_async over every case at once, nothing recorded or scored).
    bare_args = _agent_runs_args("bare", questions, concurrency=questions, latency_ms=latency_ms)
    # What no fresh process running this agent avoids, whatever it does around ADK: Python's start,
    # the agent's (and so ADK's) import, ADK's imports on its first run, one question with no
    # model latency, the exit.
    fixed_args = _agent_runs_args("bare", 1, concurrency=1, latency_ms=0)

    def agent_evaluator() -> float:
        seconds = _process_seconds(theirs_args, ROOT, env)
        # AgentEvaluator's minute is mostly idle (4 cases at a time, waiting on the model), and on
        # this VM a process started after a minute of idle runs 0.1-0.2 s slower than the next
        # one (ours: 4.59 and 4.46 s after 45 s of sleep, 4.35 and 4.38 s straight after), so
        # whichever side came next paid it. One discarded run of ours starts the next side where
        # every other side starts: right after a run.
        _process_seconds(ours_args, EXAMPLE, env)
        return seconds

    # AgentEvaluator takes about a minute a run; it is alternated with ours all the same, so the
    # ratio of the two is judged on the same machine state (and its noise seen).
    samples = alternate(
        {
            "AgentEvaluator": agent_evaluator,
            "ours": lambda: _process_seconds(ours_args, EXAMPLE, env),
            "ours wide": lambda: _process_seconds([*ours_args, "--concurrency", str(questions)], EXAMPLE, env),
            "bare ADK": lambda: _process_seconds(bare_args, ROOT, env),
            "ADK's fixed cost": lambda: _process_seconds(fixed_args, ROOT, env),
        },
        repeats,
    )
    theirs, ours_default, ours_wide = median(samples["AgentEvaluator"]), median(samples["ours"]), median(samples["ours wide"])
    return {
        "questions": questions,
        "latency_ms": latency_ms,
        "samples": samples,
        # Two turns: the greeting's one model call, then the tool call and the answer, in sequence.
        "floor_s": MODEL_CALLS_IN_SEQUENCE * latency_ms / 1000,
        "adk_s": theirs,
        "ours_default_s": ours_default,
        "speedup_default": theirs / ours_default,
        "ours_wide_s": ours_wide,
        "speedup_wide": theirs / ours_wide,
        "bare_adk_s": median(samples["bare ADK"]),
        "adk_fixed_s": median(samples["ADK's fixed cost"]),
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
    return {"seconds": time.perf_counter() - started, "exit_code": done.returncode, "summary": lines[-1].strip("= ") if lines else ""}


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
    parser.add_argument("--quick", action="store_true", help="small sizes and one run a side, to check the harness (nothing is judged)")
    args = parser.parse_args()
    started = time.perf_counter()
    sys.path.insert(0, str(ROOT / "src"))
    from bench.action_start import rows as action_start_rows
    from bench.cli_start import measure
    from bench.pr_reuse import measure as pr_reuse
    from bench.views_scale import measure as views_scale

    # Every side of every row runs MIN_RUNS times in turn with the others (bench/verdicts.py);
    # --quick runs each once, and its rows say they are not judged.
    runs = 1 if args.quick else MIN_RUNS
    machine = {"python": platform.python_version(), "cpus": os.cpu_count(), "machine": platform.machine(), "system": platform.platform()}
    results: dict[str, Any] = {"machine": machine}
    results["recorded"] = recorded(200 if args.quick else 2000, repeats=1 if args.quick else 5)
    # 20,000 rows (a 900 MB file, made once and kept in bench/out) show whether growth is linear.
    results["recorded_large"] = recorded(2_000 if args.quick else 20_000, repeats=runs)
    results["agent_runs"] = agent_runs(40 if args.quick else 200, repeats=runs)
    results["judges"] = judges(runs)
    results["adk_evaluator"] = adk_evaluator(8 if args.quick else 64, latency_ms=500 if args.quick else 1000, repeats=runs)
    results["views"] = views_scale(1_000 if args.quick else 10_000, 250 if args.quick else 2_500, repeats=runs)
    results["pr_reuse"] = pr_reuse(40 if args.quick else 200, repeats=runs)
    results["cli_start"] = measure()
    from bench.aa_gate import measure as aa_gate
    from bench.aa_gate import row as aa_gate_row

    results["aa_gate"] = aa_gate(checks=20 if args.quick else 200)
    from bench.quota import measure as quota
    from bench.quota import rows as quota_rows

    # Issue 39: a quota of 120 requests a minute; --quick on a 6 s stand-in minute.
    results["quota"] = quota(questions=60 if args.quick else 300, rpm=120, minute_s=6.0 if args.quick else 60.0, repeats=runs)
    from bench.observed_inputs import measure as observed_inputs
    from bench.observed_inputs import rows as observed_inputs_rows

    # Issue 34: the audit hook's cost per question, the agent workers' CPU with and without it.
    results["observed_inputs"] = observed_inputs(questions=32 if args.quick else 256, repeats=1 if args.quick else 5)
    if not args.quick:
        results["suite"] = suite()
    results["action_start"] = action_start(pulls=1 if args.quick else 3)
    print(f"machine: {machine['cpus']} cpus, {machine['machine']}, Python {machine['python']}\n")
    print(HEADER)
    for line in table(results, quick=args.quick):
        print(line)
    print(aa_gate_row(results["aa_gate"]))
    for line in quota_rows(results["quota"]):
        print(line)
    for line in observed_inputs_rows(results["observed_inputs"]):
        print(line)
    for line in action_start_rows(results["action_start"]):
        print(line + " not judged: one build against the median of the pulls |")
    results["bench_seconds"] = time.perf_counter() - started
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "results.json").write_text(json.dumps(results, indent=2))
    print(f"\nwrote {OUT / 'results.json'} ({results['bench_seconds'] / 60:.1f} minutes in all)")


def table(results: dict[str, Any], *, quick: bool) -> list[str]:
    """The rows, each figure with its goal and verdict (bench/verdicts.py)."""
    r, big, a, j, c = results["recorded"], results["recorded_large"], results["agent_runs"], results["judges"], results["cli_start"]
    lines = []
    for run in (r, big) if not quick else (r,):
        lines.append(
            row(
                f"score {run['rows']:,} recorded rows ({run['file_mb']:.0f} MB)",
                f"{run['ours_s']:.2f} s, peak {run['ours_peak_mb']:.0f} MB",
                f"parse floor {run['floor_s']:.2f} s, peak {run['floor_peak_mb']:.0f} MB",
                run["ratio"],
                GOALS["recorded"],
                run["samples"],
            )
        )
    peak = max(run["ours_peak_mb"] for run in ((r, big) if not quick else (r,)))
    # Memory is not a timing: judged as measured, the largest peak of every run.
    lines.append(
        row(
            "peak memory scoring recorded rows (main process + largest worker)",
            f"{peak:.0f} MB",
            "",
            peak,
            GOALS["peak_memory"],
            {},
            shown=f"{peak:.0f} MB",
        )
    )
    if not quick:
        # Time per row at 20,000 rows over time per row at 2,000, each run's samples alike.
        growth = (big["ours_s"] / r["ours_s"]) / (big["rows"] / r["rows"])
        lines.append(
            row(
                f"time per row, {big['rows']:,} recorded rows against {r['rows']:,}",
                f"{big['ours_s'] / big['rows'] * 1000:.2f} ms a row",
                f"{r['ours_s'] / r['rows'] * 1000:.2f} ms a row",
                growth,
                GOALS["recorded_growth"],
                {f"ours at {r['rows']:,}": r["samples"]["ours"], f"ours at {big['rows']:,}": big["samples"]["ours"]},
            )
        )
    lines.append(
        row(
            f"run {a['questions']} two-turn questions, 50 ms model latency, concurrency 32",
            f"{a['ours_s']:.2f} s ({a['ours_with_scoring_s']:.2f} s with scoring), in process",
            f"bare asyncio loop over Runner.run_async {a['bare_s']:.2f} s",
            a["ratio"],
            GOALS["agent_in_process"],
            {k: a["samples"][k] for k in ("bare", "in process")},
        )
    )
    lines.append(
        row(
            "the same over 2 agent worker processes (the default here)",
            f"{a['workers_run_s']:.2f} s once started ({a['workers_s']:.2f} s with their start and scoring)",
            f"the bare single-process loop {a['bare_s']:.2f} s",
            a["workers_ratio"],
            GOALS["agent_workers"],
            {k: a["samples"][k] for k in ("bare", "workers")},
        )
    )
    e = results["adk_evaluator"]
    if e is not None:
        ours = {"ours": e["samples"]["ours"]}
        lines.append(
            row(
                f"{e['questions']} two-turn questions, {e['latency_ms']} ms model latency: the whole process (start, imports, run, scoring), at the defaults",
                f"{e['ours_default_s']:.2f} s (concurrency auto); {e['ours_wide_s']:.2f} s at concurrency {e['questions']}",
                f"the model-latency floor: {MODEL_CALLS_IN_SEQUENCE} model calls in sequence, {e['floor_s']:.2f} s",
                e["ours_default_s"] / e["floor_s"],
                GOALS["agent_floor"],
                ours,
            )
        )
        reach = e["floor_s"] + e["adk_fixed_s"]
        lines.append(
            row(
                "the least any fresh process running this agent takes: the model-latency floor plus ADK's fixed cost "
                "(a process that starts Python, imports the agent, runs one question at no model latency and exits)",
                f"{reach:.2f} s (fixed cost {e['adk_fixed_s']:.2f} s; the goal leaves {e['floor_s'] * (GOALS['agent_floor'].limit - 1):.2f} s)",
                f"the model-latency floor, {e['floor_s']:.2f} s",
                reach / e["floor_s"],
                GOALS["agent_floor_reach"],
                {"ADK's fixed cost": e["samples"]["ADK's fixed cost"]},
            )
        )
        lines.append(
            row(
                f"the same against a bare ADK script, whole process (start, ADK's import, Runner.run_async over the {e['questions']} at once; nothing recorded or scored)",
                f"{e['ours_default_s']:.2f} s at the defaults",
                f"bare ADK {e['bare_adk_s']:.2f} s ({e['bare_adk_s'] / e['floor_s']:.2f}x the model-latency floor)",
                e["ours_default_s"] / e["bare_adk_s"],
                GOALS["bare_adk_process"],
                {"bare ADK": e["samples"]["bare ADK"], **ours},
            )
        )
        lines.append(
            row(
                "the same against ADK's AgentEvaluator",
                f"{e['ours_default_s']:.2f} s at the defaults",
                f"AgentEvaluator (4 at a time) {e['adk_s']:.2f} s",
                e["speedup_default"],
                GOALS["adk_evaluator"],
                {"AgentEvaluator": e["samples"]["AgentEvaluator"], **ours},
                shown=f"{e['speedup_default']:.1f}x faster",
            )
        )
    else:
        lines.append("| vs ADK AgentEvaluator | skipped: install requirements.bench.lock (ADK's eval extra) | | | | not judged |")
    v = results["views"]
    many, none, few = (v["samples"][k] for k in ("many", "none", "few"))
    share = f"{v['regressed_share']:.0%}"
    lines.append(
        row(
            f"PR check (`check --base main`, whole process) of {v['questions']:,} recorded questions, {share} regressed",
            f"{median(many):.2f} s ({v['regressed']['many']:,} questions shown regressed)",
            f"the same with none regressed {median(none):.2f} s",
            ratio(many, none),
            GOALS["views_regressed"],
            {"regressed": many, "none": none},
        )
    )
    lines.append(
        row(
            f"the same, {v['questions']:,} questions against {v['small']:,}",
            f"{median(many):.2f} s",
            f"{v['small']:,} questions, {share} regressed, {median(few):.2f} s",
            ratio(many, few),
            GOALS["views_scale"],
            {f"{v['questions']:,}": many, f"{v['small']:,}": few},
        )
    )
    p = results["pr_reuse"]
    per_question = p["full_calls"] / p["questions"]
    lines.append(
        row(
            f"PR check of a PR rewording 1 of {p['questions']} questions, 1 s model latency",
            f"{p['one_question_s']:.2f} s, {p['one_question_calls']} model calls (reuse)",
            f"the same PR with --no-reuse: {p['full_s']:.2f} s, {p['full_calls']} model calls",
            p["one_question_calls"] / per_question,
            GOALS["pr_reuse"],
            # The goal is on model calls, which the model counts: the same every run.
            {"calls with reuse": p["calls"]},
            shown=f"{p['one_question_calls'] / per_question:g}x ({p['full_calls'] / max(p['one_question_calls'], 1):.0f}x fewer calls, {p['full_s'] / p['one_question_s']:.1f}x faster)",
        )
    )
    lines.append(
        row(
            "200 judge calls, 200 ms judge latency, concurrency 16",
            f"{j['seconds']:.2f} s",
            f"ideal ceil(200/16) x 0.2 s = {j['ideal_seconds']:.2f} s",
            j["ratio"],
            GOALS["judges"],
            j["samples"],
        )
    )
    lines.append(
        row(
            "CLI start (`--help`)",
            f"{c['help_s'] * 1000:.0f} ms",
            f"bare interpreter {c['bare_s'] * 1000:.0f} ms",
            c["overhead_ms"],
            GOALS["cli_start"],
            c["samples"],
            shown=f"+{c['overhead_ms']:.0f} ms",
        )
    )
    if "suite" in results:
        t = results["suite"]
        # One run, judged as measured (it is minutes long); a failing suite misses whatever its time.
        seconds = t["seconds"] if t["exit_code"] == 0 else float("inf")
        lines.append(
            row(
                "the test suite (`make test`'s pytest: " + " ".join(SUITE[3:7]) + ")",
                f"{t['seconds']:.0f} s: {t['summary']}",
                "",
                seconds,
                GOALS["suite"],
                {},
                shown=f"{t['seconds']:.0f} s",
            )
        )
    return lines


if __name__ == "__main__":
    main()
