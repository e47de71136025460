"""Instructions an agent worker executes for a question, counted by callgrind: a measure of a
question's CPU work that the machine's load does not move (CPU time of the same runs spreads by
13-50% on a shared 2-core machine, more than the costs we judge with it).

One side is one real agent worker of ours (``run/workers/pool.py``) started under
``valgrind --tool=callgrind --instr-atstart=no``: it loads the agent and warms up uninstrumented
(a few times slower, not fifty), then ``callgrind_control -i on`` counts from the first measured
question to the last, ``callgrind_control -d`` dumps the count. Each side is its own process
(``python -m bench.instructions SIDE``) so that two sides can run at once: the counts do not
depend on what else runs.

    python -m bench.instructions OBSERVE [--questions 16]   # prints {"instructions_per_question": ...}
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.agent_runs import EXAMPLE, TURNS

ROOT = Path(__file__).resolve().parent.parent
# Below a question's noise: run to run the same side agrees within 0.1% at 16 questions.
QUESTIONS = 16
TOOL = "valgrind"


def missing() -> str | None:
    """Why this machine cannot count instructions, or None when it can."""
    absent = [tool for tool in (TOOL, "callgrind_control") if shutil.which(tool) is None]
    return f"{' and '.join(absent)} not found (Debian: apt-get install valgrind)" if absent else None


def _wrapper(folder: Path) -> Path:
    """An interpreter that is ours under callgrind, counting nothing until told to."""
    out = folder / "callgrind.%p"
    script = folder / "python"
    script.write_text(
        "#!/bin/sh\n"
        f'exec {TOOL} --tool=callgrind --instr-atstart=no --dump-instr=no --compress-strings=no --callgrind-out-file="{out}" '
        f'"{sys.executable}" "$@"\n'
    )
    script.chmod(0o755)
    return script


def _counted(folder: Path, pid: int) -> int:
    """The instructions of the dump ``callgrind_control -d`` wrote for ``pid``."""
    for dump in sorted(folder.glob(f"callgrind.{pid}*")):
        text = dump.read_text(errors="replace")
        if "measured" in text[:4000]:
            found = re.search(r"^(?:summary|totals):\s*(\d+)", text, re.M)
            if found:
                return int(found.group(1))
    raise RuntimeError(f"callgrind wrote no measured dump for worker {pid} in {folder}")


def side(observe: str, questions: int = QUESTIONS, warm: int = 4) -> dict[str, Any]:
    """One worker under callgrind with ``AGENT_EVAL_WORKER_OBSERVE=observe``: its instructions
    per question over ``questions`` two-turn questions run at once, after ``warm`` unmeasured."""
    from agent_eval_action.datasets import Record
    from agent_eval_action.models.questions import Question
    from agent_eval_action.run.agent.env import agent_environment
    from agent_eval_action.run.run_pool import RunSettings, run_records
    from agent_eval_action.run.workers.pool import WorkerPool
    from agent_eval_action.run.workers.start import WorkerSettings

    # 200 ms of model latency: sleeping costs no instructions, and the questions overlap as at 1 s.
    env = agent_environment({**os.environ, "EXAMPLE_MODEL_LATENCY_MS": "200", "AGENT_EVAL_WORKER_OBSERVE": observe, "PYTHONHASHSEED": "0"})
    env.pop("GOOGLE_API_KEY", None)

    def records(count: int, prefix: str) -> list[Record]:
        return [
            Record(question=Question(id=f"{prefix}{i}", user_inputs=TURNS, agents_evaluated=["customer_service"])) for i in range(count)
        ]

    def control(*args: str) -> None:
        subprocess.run(["callgrind_control", *args], check=True, capture_output=True, timeout=120)

    with tempfile.TemporaryDirectory(prefix="bench-callgrind-") as tmp:
        folder = Path(tmp)

        async def go() -> int:
            # A spawned worker (no warm start): under valgrind the zygote's fork is the same
            # question's work, and one process is simpler to count.
            settings = WorkerSettings(
                agent="customer_service", python=str(_wrapper(folder)), cwd=EXAMPLE, env=env, workers=1,
                startup_timeout_s=1800, warm_start=False,
            )  # fmt: skip
            pool = WorkerPool(settings)
            await pool.start()
            try:
                (pid,) = [w.process.pid for w in pool.workers]
                await run_records(records(warm, "warm"), pool, RunSettings(concurrency=warm))
                control("-i", "on", str(pid))
                done = await run_records(records(questions, "q"), pool, RunSettings(concurrency=questions))
                control("-d", "measured", str(pid))
            finally:
                await pool.close()
            errors = [r.trace.error if r.trace is not None else "no trace" for r in done if r.trace is None or r.trace.error]
            assert not errors, errors[:3]
            return _counted(folder, pid)

        total = asyncio.run(go())
    return {"observe": observe, "questions": questions, "instructions_per_question": total / questions}


def sides_at_once(observes: list[str], questions: int = QUESTIONS) -> dict[str, float]:
    """The sides each in its own process, all at once: instructions per question by side."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    running = {
        observe: subprocess.Popen(
            [sys.executable, "-m", "bench.instructions", observe, "--questions", str(questions)],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for observe in observes
    }  # fmt: skip
    out: dict[str, float] = {}
    try:
        for observe, process in running.items():
            stdout, stderr = process.communicate(timeout=3600)
            if process.returncode != 0:
                raise RuntimeError(f"bench.instructions {observe} failed ({process.returncode}): {stderr[-2000:]}")
            out[observe] = float(json.loads(stdout.strip().splitlines()[-1])["instructions_per_question"])
    finally:  # a side that failed or timed out leaves none of the others (nor their workers) running
        for process in running.values():
            if process.poll() is None:
                process.kill()
                process.wait()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("observe", help="AGENT_EVAL_WORKER_OBSERVE's value for the worker: 1 (the hook), 0 (none), python")
    parser.add_argument("--questions", type=int, default=QUESTIONS)
    args = parser.parse_args()
    reason = missing()
    if reason:
        raise SystemExit(f"bench.instructions: {reason}")
    print(json.dumps(side(args.observe, args.questions)))


if __name__ == "__main__":
    main()
