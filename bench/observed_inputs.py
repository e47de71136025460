"""What observing the agent's inputs costs a question, in CPU: the worker's audit hook and the
recording of each question's reads (``agent_worker/observe.py``), and naming and hashing them
in our process (``repo/observed.py``). The example agent, 64 two-turn questions in flight at
once at 1 s model latency (the bench's setting), one process per side, the hook on and off
alternated; each side times the questions' run after a warm-up question (the agent's load and
ADK's first-run imports are not a question's):

    python -m bench.observed_inputs [--repeats 5]

(Whole CLI processes told it poorly: the number of agent workers follows the number of
questions, so the difference of two runs' CPU holds a worker's start, and a question's share is
a few percent of a process that imports ADK.)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.agent_runs import EXAMPLE, TURNS

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = 64


def side(observe: bool) -> dict[str, float]:
    """One process's figures: CPU seconds per question of the run, and of naming and hashing."""
    observation = None
    if observe:
        from agent_eval_action.agent_worker import observe as observing

        observation = observing.start([sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix])
    sys.path.insert(0, str(EXAMPLE))
    from customer_service.agent import root_agent
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    sessions = InMemorySessionService()
    runner = Runner(app_name="customer_service", agent=root_agent, session_service=sessions)
    seen: list[dict[str, list[str]]] = []

    async def question() -> None:
        own, token = observation.begin() if observation is not None else (None, None)
        try:
            session = await sessions.create_session(app_name="customer_service", user_id="u")
            for text in TURNS:
                message = types.Content(role="user", parts=[types.Part(text=text)])
                async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
                    pass
            if observation is not None and own is not None:
                seen.append(observation.paths(own))
        finally:
            if token is not None:
                observation.end(token)  # type: ignore[union-attr]

    async def all_at_once() -> None:
        await asyncio.gather(*(question() for _ in range(QUESTIONS)))

    asyncio.run(question())  # warm: ADK's first-run imports
    seen.clear()
    started = time.process_time()
    asyncio.run(all_at_once())
    run_s = time.process_time() - started
    hashing_s = 0.0
    if seen:
        from agent_eval_action.repo.git import Git
        from agent_eval_action.repo.observed import IMPORTED, RepositoryInputs

        started = time.process_time()
        inputs = RepositoryInputs(Git(EXAMPLE))
        names: set[str] = set()
        for paths in seen:
            names.update(paths.get(IMPORTED, []))
        recorded = [inputs.record(paths, names) for paths in seen]
        hashing_s = time.process_time() - started
        assert all(recorded), "nothing of the example's files was observed"
    return {"run_per_question_s": run_s / QUESTIONS, "hashing_per_question_s": hashing_s / QUESTIONS}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--side", choices=("on", "off"))
    args = parser.parse_args()
    if args.side:
        print(json.dumps(side(args.side == "on")))
        return
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]), "EXAMPLE_MODEL_LATENCY_MS": "1000"}
    env.pop("GOOGLE_API_KEY", None)
    figures: dict[str, list[dict[str, float]]] = {"on": [], "off": []}
    for round_ in range(args.repeats):
        for mode in ("on", "off") if round_ % 2 == 0 else ("off", "on"):
            done = subprocess.run(
                [sys.executable, "-m", "bench.observed_inputs", "--side", mode],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            figures[mode].append(json.loads(done.stdout.strip().splitlines()[-1]))
    on = statistics.median(f["run_per_question_s"] for f in figures["on"])
    off = statistics.median(f["run_per_question_s"] for f in figures["off"])
    hashing = statistics.median(f["hashing_per_question_s"] for f in figures["on"])
    print(
        json.dumps(
            {
                "question_cpu_ms": {m: [round(1000 * f["run_per_question_s"], 2) for f in figures[m]] for m in figures},
                "hashing_cpu_ms": [round(1000 * f["hashing_per_question_s"], 3) for f in figures["on"]],
                "median_question_cpu_ms": {"on": round(1000 * on, 2), "off": round(1000 * off, 2)},
                "hook_share": f"{100 * (on - off) / off:.1f}%",
                "with_hashing_share": f"{100 * (on - off + hashing) / off:.1f}%",
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
