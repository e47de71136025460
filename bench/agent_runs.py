"""Agent runs: our runner against a bare asyncio loop over ``Runner.run_async``, same agent,
same concurrency, same scripted model latency. One mode per process:

    python -m bench.agent_runs --mode bare|ours --questions 200 --concurrency 32 --latency-ms 50 [--workers N]

Every mode ends as ``python -m agent_eval_action`` does: its output flushed, the atexit handlers
run, the interpreter's teardown skipped (0.2 s of a process that imported ADK), so the whole
processes compared differ in what they do, not in how they exit.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent_eval_action.datasets import LoadedDataset
    from agent_eval_action.run.run_pool import QuestionRunner

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "customer_service"
TURNS = ["Hi", "What's in my cart?"]


async def bare(questions: int, concurrency: int) -> None:
    from customer_service.agent import root_agent
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    sessions = InMemorySessionService()
    runner = Runner(app_name="customer_service", agent=root_agent, session_service=sessions)
    gate = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with gate:
            session = await sessions.create_session(app_name="customer_service", user_id="u")
            for text in TURNS:
                message = types.Content(role="user", parts=[types.Part(text=text)])
                async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
                    pass

    await asyncio.gather(*(one() for _ in range(questions)))


async def adk_evaluator(questions: int) -> None:
    """ADK's AgentEvaluator on the same agent and cases (tool trajectory and ROUGE criteria, offline)."""
    import warnings

    from google.adk.evaluation.agent_evaluator import AgentEvaluator
    from google.adk.evaluation.eval_case import EvalCase, Invocation
    from google.adk.evaluation.eval_config import EvalConfig
    from google.adk.evaluation.eval_metrics import BaseCriterion
    from google.adk.evaluation.eval_set import EvalSet
    from google.genai import types

    warnings.simplefilter("ignore")
    replies = ["Hello! Welcome to the garden store. How can I help?", "Your cart has 2 bags of potting soil, subtotal $25.98."]

    def invocation(text: str, reply: str) -> Invocation:
        return Invocation(
            user_content=types.Content(role="user", parts=[types.Part(text=text)]),
            final_response=types.Content(role="model", parts=[types.Part(text=reply)]),
        )

    cases = [
        EvalCase(eval_id=f"q{i}", conversation=[invocation(t, r) for t, r in zip(TURNS, replies, strict=True)]) for i in range(questions)
    ]
    criteria: dict[str, float | BaseCriterion] = {"tool_trajectory_avg_score": 0.0, "response_match_score": 0.0}
    await AgentEvaluator.evaluate_eval_set(
        agent_module="customer_service",
        eval_set=EvalSet(eval_set_id="bench", eval_cases=cases),
        eval_config=EvalConfig(criteria=criteria),
        num_runs=1,
        print_detailed_results=False,
    )


def ours(questions: int, concurrency: int | None, workers: int) -> dict[str, float]:
    """Our runner: in this process (``workers`` 0) or over worker processes (the default; -1 takes
    the default count), agent loading and worker start included in ``with_setup_seconds``."""
    from agent_eval_action.datasets import Record
    from agent_eval_action.metrics import MetricContext
    from agent_eval_action.models.questions import Question
    from agent_eval_action.run.run_pool import RunSettings, run_records
    from agent_eval_action.scoring.scorer import Scorer

    records = [Record(question=Question(id=f"q{i}", user_inputs=TURNS, agents_evaluated=["customer_service"])) for i in range(questions)]

    async def go() -> tuple[float, float, list[Record]]:
        if workers == 0:
            from agent_eval_action.run.agent.in_process import AdkRunner
            from agent_eval_action.run.agent.loader import load_agent

            runner: QuestionRunner = AdkRunner(load_agent("customer_service", cwd=EXAMPLE))
            pool = None
        else:
            from agent_eval_action.config import Config
            from agent_eval_action.run.agent.env import agent_environment
            from agent_eval_action.run.workers.pool import WorkerPool
            from agent_eval_action.run.workers.start import WorkerSettings

            count = workers if workers > 0 else Config().agent_worker_count()
            pool = WorkerPool(
                WorkerSettings(
                    agent="customer_service", python=sys.executable, cwd=EXAMPLE, env=agent_environment(os.environ), workers=count
                )
            )
            await pool.start()
            runner = pool
        t0 = time.perf_counter()
        done = await run_records(records, runner, RunSettings(concurrency=concurrency))
        t1 = time.perf_counter()
        if pool is not None:
            await pool.close()
        return t0, t1, done

    loading = time.perf_counter()
    t0, t1, done = asyncio.run(go())
    errors = [r.trace.error for r in done if r.trace and r.trace.error]
    assert not errors, errors[:3]
    Scorer.for_names([], MetricContext()).score_dataset(_dataset(), done)
    end = time.perf_counter()
    # with_setup: as AgentEvaluator's figure is taken, loading the agent (and starting workers) included.
    return {"seconds": t1 - t0, "with_scoring_seconds": end - t0, "with_setup_seconds": end - loading}


def _dataset() -> LoadedDataset:
    from agent_eval_action.datasets import LoadedDataset

    return LoadedDataset(path="bench", name="bench", format="golden", records=iter(()))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["bare", "ours", "adk_evaluator"], required=True)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--concurrency", default="32", help="a number, or auto (ours only)")
    parser.add_argument("--latency-ms", type=float, default=50)
    parser.add_argument("--workers", type=int, default=-1, help="ours: 0 in process, N worker processes, -1 the default count")
    args = parser.parse_args()
    os.environ["EXAMPLE_MODEL_LATENCY_MS"] = str(args.latency_ms)
    sys.path.insert(0, str(EXAMPLE))
    import logging

    import google.adk.runners

    logging.getLogger("google_adk").setLevel(logging.ERROR)
    if args.mode == "bare":
        t0 = time.perf_counter()
        asyncio.run(bare(args.questions, int(args.concurrency)))
        result = {"seconds": time.perf_counter() - t0}
    elif args.mode == "adk_evaluator":
        import google.adk.evaluation.agent_evaluator  # noqa: F401  (import cost is not what is measured)

        t0 = time.perf_counter()
        asyncio.run(adk_evaluator(args.questions))
        result = {"seconds": time.perf_counter() - t0}
    else:
        result = ours(args.questions, None if args.concurrency == "auto" else int(args.concurrency), args.workers)
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result), flush=True)
    sys.stderr.flush()
    atexit._run_exitfuncs()
    os._exit(0)


if __name__ == "__main__":
    main()
