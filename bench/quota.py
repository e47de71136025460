"""Two-turn questions against a loopback Gemini API with a requests-per-minute quota (429
RESOURCE_EXHAUSTED with RetryInfo beyond it), run by the command line as a user runs it, against
the quota floor: the calls the run needs / the quota.

    python -m bench.quota --questions 300 --rpm 120 [--judge] [--src /work/main/src] [--minute-s 60]

``--src``: the package to run (another checkout's ``src``: "before"); ``--minute-s``: a shorter
stand-in minute for a scaled-down run (the pacer is told its length, as the tests tell it).
Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.verdicts import Goal, row  # noqa: E402 - after the path it is found on

# Issue 39's goals: at most 1.1x the quota floor, with no question errored and at most 10% of
# requests answered 429 (a run that breaks either is missed whatever its time).
GOALS_QUOTA = {
    "quota": Goal(1.1, note="the quota floor, no question errored, <= 10% answered 429"),
    "quota_judge": Goal(1.1, note="the quota floor, no question errored, <= 10% answered 429"),
}
MISSED = Goal(0.0, note="(an errored question or over 10% answered 429)")
JUDGE = json.dumps({"score": 4, "explanation": "ok"})


def _reply(prompt: str) -> str:
    return JUDGE if "Expected response" in prompt else "Fine, thanks."


def run_once(questions: int, rpm: int, minute_s: float, *, judge: bool, src: Path | None = None) -> dict[str, Any]:
    """One run of this module in a process of its own (the stand-in API in it, the CLI in another)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    args = ["--questions", str(questions), "--rpm", str(rpm), "--minute-s", str(minute_s), *(["--judge"] if judge else [])]
    args += ["--src", str(src or ROOT / "src")]
    done = subprocess.run([sys.executable, "-m", "bench.quota", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def measure(*, questions: int, rpm: int, minute_s: float, repeats: int, lanes: int = 1, stagger_s: float = 0.0) -> dict[str, Any]:
    """Both rows (the agent alone; a judge metric sharing the quota), run in turn ``repeats`` times;
    ``lanes`` of the runs at once, the k-th started no sooner than ``k * stagger_s`` in. Each run
    has a stand-in API and a quota of its own, and waits on it (a run of 300 questions uses about a
    tenth of a core). Six started together overshoot (3-23% of a run's requests answered 429,
    finished in 0.96x the floor: each learns too high a rate; not CPU load alone, as one run beside
    two CPU hogs reads 2.3%, and the cause is not found); six started 10 s apart read as one run
    alone does (1.04-1.05x, 1.3-1.8% answered 429)."""
    runs: dict[str, list[dict[str, Any]]] = {"agent": [], "agent and judge": []}
    order = [name for round_ in range(repeats) for name in (list(runs) if round_ % 2 == 0 else list(runs)[::-1])]
    began = time.monotonic()

    def once(k: int, name: str) -> tuple[str, dict[str, Any]]:
        time.sleep(max(0.0, began + k * stagger_s - time.monotonic()))
        return name, run_once(questions, rpm, minute_s, judge=name != "agent")

    with ThreadPoolExecutor(max_workers=max(1, lanes)) as pool:
        for name, result in pool.map(once, range(len(order)), order):
            runs[name].append(result)
    samples = {name: [float(r["ratio"]) for r in done] for name, done in runs.items()}
    return {"questions": questions, "rpm": rpm, "minute_s": minute_s, "lanes": lanes, "samples": samples, "runs": runs}


def rows(results: dict[str, Any]) -> list[str]:
    """The two rows of the table: time over the quota floor, with the 429s and errors beside it."""
    lines = []
    for name, goal in (("agent", "quota"), ("agent and judge", "quota_judge")):
        runs = results["runs"][name]
        ratios = results["samples"][name]
        middle = sorted(runs, key=lambda r: r["ratio"])[len(runs) // 2]
        worst_429 = max(r["throttled_share"] for r in runs)
        errored = max(r["errored"] for r in runs)
        minute = "a minute" if results["minute_s"] == 60 else f"a {results['minute_s']:g} s stand-in minute"
        lines.append(
            row(
                f"{results['questions']} two-turn questions{' and a judge metric' if name != 'agent' else ''} against a loopback Gemini "
                f"with a quota of {results['rpm']} requests in {minute} (429 with RetryInfo beyond it; the rate learnt)",
                f"{middle['seconds']:.0f} s; {errored} question(s) errored, at most {worst_429:.1%} of requests answered 429",
                f"the quota floor: {middle['calls_needed']} calls / quota = {middle['floor_seconds']:.0f} s",
                statistics.median(ratios),
                GOALS_QUOTA[goal] if errored == 0 and worst_429 <= 0.1 else MISSED,
                {name: ratios},
            )
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--rpm", type=int, default=120)
    parser.add_argument("--minute-s", type=float, default=60.0)
    parser.add_argument("--latency-ms", type=float, default=200)
    parser.add_argument("--judge", action="store_true", help="a judge metric of the same model and key shares the quota")
    parser.add_argument("--tell", action="store_true", help="give the quota setting (else it is learnt from the 429s)")
    parser.add_argument("--src", default=str(ROOT / "src"), help="the agent_eval_action package's folder to run")
    args = parser.parse_args()

    from tests.fakes.gemini_server import FakeGemini

    server = FakeGemini(_reply, latency_s=args.latency_ms / 1000, rpm=args.rpm, minute_s=args.minute_s)
    work = Path(tempfile.mkdtemp(prefix="bench-quota-"))
    try:
        shutil.copytree(ROOT / "tests" / "apps" / "rate_limited", work / "rate_limited", ignore=shutil.ignore_patterns("__pycache__"))
        questions = [
            {
                "id": f"q{i:04d}",
                "user_inputs": [f"hello {i}", f"and again {i}"],
                "agents_evaluated": ["rate_limited"],
                "reference_data": {"reference_response": "Fine, thanks."},
            }
            for i in range(args.questions)
        ]
        (work / "many.json").write_text(json.dumps({"golden_questions": questions}))
        if args.judge:
            (work / "agent-eval.toml").write_text('[judges.response_correctness]\n[judge]\ncache-dir = ""\n')
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))},
            "PYTHONPATH": args.src,
            "FAKE_GEMINI_URL": server.url,
            "AGENT_EVAL_JUDGE_BASE_URL": server.url,
            "GOOGLE_API_KEY": "loopback-key",
            "GOOGLE_GENAI_USE_VERTEXAI": "false",
            "AGENT_EVAL_QUOTA_MINUTE_S": str(args.minute_s),
        }
        command = [sys.executable, "-m", "agent_eval_action", "evaluate", "many.json", "--agent", "rate_limited.agent:root_agent"]
        command += ["--output-dir", "out", "--progress", "never"]
        if args.tell:
            command += ["--quota", f"gemini-2.5-flash={args.rpm}rpm"]
        started = time.perf_counter()
        done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - started
        results = json.loads((work / "out" / "results.json").read_text()) if (work / "out" / "results.json").is_file() else {}
        dataset = (results.get("datasets") or [{}])[0]
        statuses = [q.get("status") for q in dataset.get("questions", [])]
        summary = (dataset.get("summary") or {}).get("response_correctness") or {}
        needed = 2 * args.questions + (args.questions if args.judge else 0)
        floor = needed / args.rpm * args.minute_s
        print(
            json.dumps(
                {
                    "seconds": seconds,
                    "floor_seconds": floor,
                    "ratio": seconds / floor,
                    "exit_code": done.returncode,
                    "questions": args.questions,
                    "errored": sum(1 for s in statuses if s != "ok") + (args.questions - len(statuses)),
                    "judged": summary.get("n", 0) if args.judge else None,
                    "calls_needed": needed,
                    "requests": server.requests,
                    "throttled": server.throttled,
                    "throttled_share": server.throttled / server.requests if server.requests else 0.0,
                    "answered": len(server.prompts),
                    "run": results.get("run"),
                    "stderr": done.stderr[-600:] if done.returncode else "",
                }
            )
        )
    finally:
        server.close()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
