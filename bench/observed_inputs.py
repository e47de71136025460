"""What observing the agent's inputs costs (the worker's audit hook, and naming and hashing what
it saw): ``baseline update`` of the example agent in a git repository, 64 two-turn questions at
1 s model latency (the bench's setting), with the hook on and off (``AGENT_EVAL_WORKER_OBSERVE``),
alternated; and the same with 8 questions, so the fixed cost (start, imports, loading the agent)
falls out and a question's own CPU is left. CPU is the whole process tree's (user + system):

    python -m bench.observed_inputs [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.agent_runs import EXAMPLE, TURNS

ROOT = Path(__file__).resolve().parent.parent


def _repo(where: Path, questions: int) -> Path:
    repo = where / f"repo_{questions}"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns("__pycache__", "baselines"))
    cases = {
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
    (repo / "evaluation" / "datasets" / "customer_service_golden.json").write_text(json.dumps(cases))
    (repo / ".gitignore").write_text("agent-eval-results/\n__pycache__/\nevaluation/baselines/\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "bench"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    return repo


def _cpu(repo: Path, observe: bool) -> float:
    """CPU seconds (user + system) of one ``baseline update`` and every process it waited for."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "EXAMPLE_MODEL_LATENCY_MS": "1000",
        "AGENT_EVAL_WORKER_OBSERVE": "1" if observe else "0",
    }
    env.pop("GOOGLE_API_KEY", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "agent_eval_action", "baseline", "update"], cwd=repo, env=env, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repos = {n: _repo(Path(tmp), n) for n in (8, 64)}
        cpu: dict[tuple[int, bool], list[float]] = {(n, o): [] for n in repos for o in (True, False)}
        _cpu(repos[8], True)  # warm the page cache and the bytecode of both sides
        for round_ in range(args.repeats):
            order = [True, False] if round_ % 2 == 0 else [False, True]
            for n, repo in repos.items():
                for observe in order:
                    cpu[(n, observe)].append(_cpu(repo, observe))
    med = {key: statistics.median(values) for key, values in cpu.items()}
    per_question = {o: (med[(64, o)] - med[(8, o)]) / 56 for o in (True, False)}
    hook = per_question[True] - per_question[False]
    print(
        json.dumps(
            {
                "cpu_seconds": {f"{n} questions, hook {'on' if o else 'off'}": [round(v, 3) for v in cpu[(n, o)]] for n, o in cpu},
                "cpu_per_question_s": {"on": round(per_question[True], 4), "off": round(per_question[False], 4)},
                "hook_per_question_s": round(hook, 4),
                "hook_share_of_a_question": f"{100 * hook / per_question[False]:.1f}%",
                "hook_fixed_s": round((med[(8, True)] - med[(8, False)]) - 8 * hook, 3),
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
