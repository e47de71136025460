"""What observing the agent's inputs costs a question, in CPU: the worker's audit hook and the
recording of each question's reads (``agent_worker/observe.py``), and naming and hashing them
in our process (``repo/observed.py``).

The example agent at the bench's settings (two-turn questions, 1 s model latency) run by our
real agent workers (``run/workers/pool.py``: span capture, the pacing of model calls, the
protocol), the hook on (the default: the C hook where ``make install`` built it) against
``AGENT_EVAL_WORKER_OBSERVE=0``, beside the Python hook (``=python``) and an empty Python hook
(what any hook written in Python costs), the sides
alternated, median of the repeats. Each run starts the workers, warms them up (the agent's
load and ADK's first-run imports are not a question's), then runs the questions all at once
and takes the CPU time (user + system, from ``/proc``) the worker processes spent on them.
That CPU time spreads by 13-50% from run to run on a shared 2-core machine, more than the hook
costs: the goal is judged on the instructions a question takes in one worker under callgrind
(``bench/instructions.py``), which agree within 0.1% run to run; the CPU time is shown beside.

    python -m bench.observed_inputs [--questions 256] [--repeats 3] [--counted 16] [--rounds 3]

(Whole CLI processes told it poorly: the number of agent workers follows the number of
questions, so the difference of two runs' CPU holds a worker's start, and a question's share is
a few percent of a process that imports ADK.)
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.agent_runs import EXAMPLE, TURNS
from bench.goals import OUT
from bench.verdicts import Goal, alternate, median, ratio, reported, row

ROOT = Path(__file__).resolve().parent.parent
WORKERS = 2
# Issue 34: the hook costs a question under 2% of its worker CPU.
GOAL = Goal(1.02, note="the same worker with AGENT_EVAL_WORKER_OBSERVE=0 (the hook's cost under 2% of a question's CPU)")
_TICK_S = 1 / os.sysconf("SC_CLK_TCK")


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (its threads, gone ones included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * _TICK_S  # utime, stime: the 14th and 15th fields


_EMPTY_HOOK = "import sys\n\n\ndef _hook(event: str, args: tuple[object, ...]) -> None:\n    pass\n\n\nsys.addaudithook(_hook)\n"


def side(observe: str, questions: int, empty_hook: bool = False) -> dict[str, Any]:
    """One run: the workers' CPU seconds per question, and what the questions observed
    (``observe``: AGENT_EVAL_WORKER_OBSERVE's value).
    ``empty_hook``: nothing observed, but a Python audit hook that does nothing is installed in
    each worker (a ``sitecustomize`` on its path): what CPython's call of any Python hook costs."""
    from agent_eval_action.datasets import Record
    from agent_eval_action.models.questions import Question
    from agent_eval_action.run.agent.env import agent_environment
    from agent_eval_action.run.run_pool import RunSettings, run_records
    from agent_eval_action.run.workers.pool import WorkerPool
    from agent_eval_action.run.workers.start import WorkerSettings

    env = agent_environment({**os.environ, "EXAMPLE_MODEL_LATENCY_MS": "1000", "AGENT_EVAL_WORKER_OBSERVE": observe})
    if empty_hook:
        site = OUT / "empty_audit_hook"
        site.mkdir(parents=True, exist_ok=True)
        (site / "sitecustomize.py").write_text(_EMPTY_HOOK)
        env["PYTHONPATH"] = os.pathsep.join([str(site), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])
    env.pop("GOOGLE_API_KEY", None)

    def records(count: int, prefix: str) -> list[Record]:
        return [
            Record(question=Question(id=f"{prefix}{i}", user_inputs=TURNS, agents_evaluated=["customer_service"])) for i in range(count)
        ]

    async def go() -> dict[str, Any]:
        pool = WorkerPool(WorkerSettings(agent="customer_service", python=sys.executable, cwd=EXAMPLE, env=env, workers=WORKERS))
        await pool.start()
        try:
            pids = [w.process.pid for w in pool.workers]
            # Warm: a few questions a worker (ADK's first-run imports, the first model calls).
            await run_records(records(4 * WORKERS, "warm"), pool, RunSettings(concurrency=4 * WORKERS))
            before = sum(_cpu_s(pid) for pid in pids)
            done = await run_records(records(questions, "q"), pool, RunSettings(concurrency=questions))
            spent = sum(_cpu_s(pid) for pid in pids) - before
        finally:
            await pool.close()
        errors = [r.trace.error if r.trace is not None else f"{r.question.id}: no trace" for r in done if r.trace is None or r.trace.error]
        assert not errors, errors[:3]
        observed = [r.trace.observed for r in done if r.trace is not None and r.trace.observed is not None]
        expected = 0 if observe == "0" else questions
        assert len(observed) == expected, f"{len(observed)} of {questions} questions observed (observe={observe})"
        return {"cpu_per_question_s": spent / questions, "observed": observed}

    return asyncio.run(go())


def _native_built() -> bool:
    from agent_eval_action.agent_worker import native

    return native.target().exists()


def _hashing_s(observed: list[dict[str, list[str]]]) -> float:
    """Our process's CPU seconds per question to name and hash what the questions read."""
    from agent_eval_action.repo.git import Git
    from agent_eval_action.repo.observed import IMPORTED, RepositoryInputs

    started = time.process_time()
    inputs = RepositoryInputs(Git(EXAMPLE))
    names: set[str] = set()
    for paths in observed:
        names.update(paths.get(IMPORTED, []))
    recorded = [inputs.record(paths, names) for paths in observed]
    spent = time.process_time() - started
    assert all(recorded), "nothing of the example's files was observed"
    return spent / len(observed)


def measure(questions: int = 256, repeats: int = 3, *, counted: int = 16, rounds: int = 3) -> dict[str, Any]:
    """What the goal is judged on: each side's instructions per question (``counted`` questions,
    ``rounds`` rounds of the three sides at once, ``bench/instructions.py``), where valgrind is
    installed; beside it, shown, the workers' CPU time of ``questions`` questions, the sides
    alternated ``repeats`` times (``empty``: the floor of a hook written in Python)."""
    from bench.instructions import missing, sides_at_once

    runs: dict[str, list[dict[str, Any]]] = {"on": [], "off": [], "python": [], "empty": []}
    values = {"on": "1", "off": "0", "python": "python", "empty": "0"}

    def run(mode: str) -> float:
        runs[mode].append(side(values[mode], questions, empty_hook=mode == "empty"))
        return float(runs[mode][-1]["cpu_per_question_s"]) * 1000

    samples = alternate({mode: functools.partial(run, mode) for mode in runs}, repeats)
    counts: dict[str, list[float]] = {"on": [], "off": [], "python": []}
    unmeasured = missing()
    if unmeasured is None:
        try:
            for _ in range(rounds):
                round_ = sides_at_once([values[mode] for mode in counts], counted)
                for mode in counts:
                    counts[mode].append(round_[values[mode]])
        except (RuntimeError, OSError, subprocess.SubprocessError) as error:  # callgrind_control refused (ptrace), a side crashed
            unmeasured = f"callgrind could not count ({str(error)[:300]})"
    return {
        "questions": questions,
        "workers": WORKERS,
        "samples_ms": samples,
        "on_ms": median(samples["on"]),
        "off_ms": median(samples["off"]),
        "empty_ms": median(samples["empty"]),
        "python_ms": median(samples["python"]),
        "native": _native_built(),
        "cpu_ratio": ratio(samples["on"], samples["off"]),
        "hashing_ms": 1000 * _hashing_s(runs["on"][-1]["observed"]),
        "counted_questions": counted,
        "instructions": counts,
        "instructions_unmeasured": unmeasured,
        "ratio": ratio(counts["on"], counts["off"]) if unmeasured is None and counts["on"] else None,
    }


def rows(result: dict[str, Any]) -> list[str]:
    """The rows of ``make bench``'s table (bench/verdicts.py judges them): the instructions (the
    goal's), and the CPU time beside them, shown (its runs spread more than the hook costs)."""
    on, off, empty, python = result["on_ms"], result["off_ms"], result.get("empty_ms"), result.get("python_ms")
    hook = "the C hook" if result.get("native") else "the Python hook (the C hook is not built)"
    python_side = f"; the Python hook: {python:.2f} ms, {100 * (python - off) / off:+.1f}%" if python else ""
    floor = (
        f"; an empty Python hook (what CPython's call of any hook costs): {empty:.2f} ms, {100 * (empty - off) / off:+.1f}%"
        if empty
        else ""
    )
    cpu_ratio = result.get("cpu_ratio", result.get("ratio"))
    out: list[str] = []
    counts = result.get("instructions") or {}
    what = "observed inputs: the audit hook's cost per question, in instructions"
    if result.get("instructions_unmeasured"):
        out.append(reported(what, "not measured", "", "", f"not judged: {result['instructions_unmeasured']}"))
    elif counts.get("on"):
        on_i, off_i, python_i = (median(counts[mode]) for mode in ("on", "off", "python"))
        out.append(
            row(
                f"{what} ({result.get('counted_questions', 16)} two-turn questions at once in one agent worker under callgrind)",
                f"{on_i / 1e6:.2f} M instructions a question, {hook} on",
                f"AGENT_EVAL_WORKER_OBSERVE=0: {off_i / 1e6:.2f} M; the Python hook: {python_i / 1e6:.2f} M, {100 * (python_i - off_i) / off_i:+.1f}%",
                result["ratio"],
                GOAL,
                {"on": counts["on"], "off": counts["off"]},
                shown=f"{result['ratio']:.4f}x ({100 * (on_i - off_i) / off_i:+.2f}%)",
            )
        )
    out.append(
        reported(
            f"observed inputs: the same in CPU time ({result['questions']} two-turn questions at once, "
            f"1 s model latency, {result['workers']} agent workers' CPU)",
            f"{on:.2f} ms of worker CPU a question, {hook} on (+{result['hashing_ms']:.2f} ms naming and hashing in ours)",
            f"AGENT_EVAL_WORKER_OBSERVE=0: {off:.2f} ms{python_side}{floor}",
            f"{cpu_ratio:.3f}x ({100 * (on - off) / off:+.1f}%)",
            "shown, not judged: a side's runs spread by 13-50% of CPU time here, more than the hook costs; the instructions judge",
        )
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--counted", type=int, default=16, help="questions counted under callgrind a side")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the sides under callgrind")
    args = parser.parse_args()
    result = measure(args.questions, args.repeats, counted=args.counted, rounds=args.rounds)
    print(json.dumps(result, indent=1))
    for line in rows(result):
        print(line)


if __name__ == "__main__":
    main()
