"""Judge calls against a loopback Gemini API with 200 ms latency, against the ideal wall time
for the configured concurrency: ceil(calls / concurrency) x latency.

    python -m bench.judges --calls 200 --concurrency 16 --latency-ms 200
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import multiprocessing
import multiprocessing.queues
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _reply(prompt: str) -> str:
    return json.dumps({"score": 4, "explanation": "ok"})


def serve(latency_s: float, urls: multiprocessing.queues.Queue[str]) -> None:
    from tests.fakes.gemini_server import FakeGemini

    server = FakeGemini(_reply, latency_s=latency_s)
    urls.put(server.url)
    server.httpd.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency-ms", type=float, default=200)
    args = parser.parse_args()

    from agent_eval_action.config import Config, JudgeMetricConfig
    from agent_eval_action.datasets import Record
    from agent_eval_action.models.questions import Question, ReferenceData
    from agent_eval_action.models.scores import Score
    from agent_eval_action.models.traces import Trace
    from agent_eval_action.run.judges.client import judge_from_env
    from agent_eval_action.run.judges.engine import JudgeEngine, JudgeSettings
    from agent_eval_action.run.judges.setup import judge_metrics

    # The judge lives in its own process, as a remote service would: no GIL shared with ours.
    ctx = multiprocessing.get_context("spawn")
    urls: multiprocessing.queues.Queue[str] = ctx.Queue()
    server = ctx.Process(target=serve, args=(args.latency_ms / 1000, urls), daemon=True)
    server.start()
    client = judge_from_env({"AGENT_EVAL_JUDGE_API_KEY": "k", "AGENT_EVAL_JUDGE_BASE_URL": urls.get(timeout=30)})
    metrics = judge_metrics(Config(judges={"response_correctness": JudgeMetricConfig()}))
    records = [
        Record(
            question=Question(id=f"q{i}", user_inputs=["hi"], reference_data=ReferenceData(reference_response=f"answer {i}")),
            trace=Trace(final_response="hello"),
        )
        for i in range(args.calls)
    ]
    engine = JudgeEngine(metrics, JudgeSettings(concurrency=args.concurrency, cache_dir=None), client)

    async def timed() -> tuple[dict[tuple[str, int], dict[str, Score]], float]:
        # Warm up in the same loop: the first call imports the rest of google-genai and connects.
        await JudgeEngine(metrics, JudgeSettings(cache_dir=None), client).score(records[:1])
        t0 = time.perf_counter()
        scores = await engine.score(records)
        return scores, time.perf_counter() - t0

    scores, elapsed = asyncio.run(timed())
    server.terminate()
    assert engine.usage.calls == args.calls and all(s["response_correctness"].value == 0.75 for s in scores.values())
    ideal = max(math.ceil(args.calls / args.concurrency) * args.latency_ms / 1000, 1e-9)
    print(
        json.dumps(
            {"seconds": elapsed, "ideal_seconds": ideal, "ratio": elapsed / ideal, "calls": args.calls, "concurrency": args.concurrency}
        )
    )


if __name__ == "__main__":
    main()
