"""The verdict through the tool on a real stochastic ADK agent (issue 46): unchanged PRs failed and
inconclusive (A/A), a broken question caught, and the PR side's model calls, measured with the real
command at its defaults, not with simulated draws.

The agent: a support desk in ADK (a scripted ``BaseLlm``, a ``Runner`` like any), 40 two-turn
questions ("qNN: where is order N" -> ``lookup_order``; "and cancel it" -> ``cancel_order``, which
writes the state), each with reference tool calls, state and final response. Per question a rate
of being right: 28 always, 8 at 80-95%, 4 at 30-70%. A run is drawn afresh at each of three
decision points, truly at random (``random.SystemRandom``): the first lookup's argument (a wrong
order), the cancel (skipped, with a claim that it is done), and the wording of the last answer
(right, but in other words: ``response_match`` under its pass threshold).

Each round makes a repository, records a fresh baseline on main (``baseline update``, 5 runs a
question), then checks a PR that only adds a comment to the agent's module (every question
re-runs) ``per_round`` times, each with fresh draws: ``check --base main`` at the default config.
Power: the same with one always-right question broken for good in the PR.

    python -m bench.aa_real [--checks 200] [--per-round 20] [--scenario-per-round 5] [--broken 20] [--lanes 2] [--only unchanged,base_drift]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.in_process import Lane

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = 40

AGENT = '''"""A support desk whose scripted model is right with the probability $DESK_RATES gives the
question (JSON: question tag -> rate; 1.0 when absent), drawn afresh at each decision."""

import json
import os
import random
from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools import ToolContext
from google.genai import types

DRAW = random.SystemRandom()
BROKEN = ""  # a PR that breaks one question sets its tag here
WEAKER: list[str] = []  # a PR that makes questions right 0.3 less often names them here


def lookup_order(order: int) -> dict:
    """Where an order is."""
    return {"order": order, "status": "shipped"}


def cancel_order(order: int, tool_context: ToolContext) -> dict:
    """Cancels an order."""
    tool_context.state["cancelled"] = order
    return {"order": order, "cancelled": True}


def _text(content) -> str:
    return "".join(p.text or "" for p in content.parts or [])


class DeskModel(BaseLlm):
    model: str = "scripted-desk"

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
        users = [c for c in llm_request.contents if c.role == "user" and _text(c)]
        tag = _text(users[0]).split(":")[0]
        order = int(tag[1:])
        rate = 0.0 if tag == BROKEN else float(json.loads(os.environ.get("DESK_RATES") or "{}").get(tag, 1.0))
        if tag in WEAKER:
            rate = max(0.0, rate - 0.3)
        # Three decisions a run: each right with rate ** (1/3), so the run is right with ``rate``.
        right = lambda: DRAW.random() < rate ** (1 / 3)  # noqa: E731
        last = llm_request.contents[-1]
        answered = [p.function_response for p in last.parts or [] if p.function_response]
        second = len(users) > 1
        if not answered:
            if not second:
                part = types.Part(function_call=types.FunctionCall(name="lookup_order", args={"order": order if right() else order + 1}))
            elif right():
                part = types.Part(function_call=types.FunctionCall(name="cancel_order", args={"order": order}))
            else:
                part = types.Part(text=f"Order {order} is cancelled.")  # skipped the tool, claims it is done
        elif not second:
            part = types.Part(text=f"Order {answered[0].response.get('order')} has shipped.")
        else:
            part = types.Part(text=f"Order {order} is cancelled." if right() else "Done, that is taken care of for you now.")
        usage = types.GenerateContentResponseUsageMetadata(prompt_token_count=20, candidates_token_count=5)
        calls = os.environ.get("CALLS_FILE")
        if calls:
            with open(calls, "a", encoding="utf-8") as out:
                out.write("call\\n")
        yield LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=usage)


root_agent = LlmAgent(name="desk", model=DeskModel(), instruction="Help with orders.", tools=[lookup_order, cancel_order])
'''


def rates(rng: random.Random) -> dict[str, float]:
    """28 always right, 8 at 80-95%, 4 at 30-70%, placed at random."""
    tags = [f"q{i:02d}" for i in range(QUESTIONS)]
    rng.shuffle(tags)
    out = {t: rng.uniform(0.80, 0.95) for t in tags[:8]}
    out.update({t: rng.uniform(0.30, 0.70) for t in tags[8:12]})
    return out


def dataset() -> dict[str, Any]:
    questions = []
    for i in range(QUESTIONS):
        tag = f"q{i:02d}"
        questions.append(
            {
                "id": tag,
                "user_inputs": [f"{tag}: where is order {i}", f"{tag}: and cancel it"],
                "agents_evaluated": ["desk"],
                "reference_data": {
                    "reference_tool_interactions": [
                        {"tool_name": "lookup_order", "input_arguments": {"order": i}},
                        {"tool_name": "cancel_order", "input_arguments": {"order": i}},
                    ],
                    "reference_state_variables": {"cancelled": i},
                    "reference_response": f"Order {i} is cancelled.",
                },
            }
        )
    return {"golden_questions": questions}


# Where the commands run: a lane process of each thread (bench/in_process.py, the default) or, with
# ``--as-processes``, each a process of its own as a user's shell starts it.
_LANES = threading.local()
_OPEN: list[Lane] = []
_AS_PROCESSES = False


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``python -m agent_eval_action ARGS``."""
    if _AS_PROCESSES:
        return subprocess.run(
            [sys.executable, "-m", "agent_eval_action", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=1800
        )
    lane = getattr(_LANES, "lane", None)
    if lane is None:
        lane = _LANES.lane = Lane()
        _OPEN.append(lane)
    return lane.run(args, cwd=cwd, env=env)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def round_repo(where: Path, desk_rates: dict[str, float], broken: str = "", weaker: list[str] | None = None) -> tuple[Path, dict[str, str]]:
    """A repository with the desk on main, its baseline recorded, and a PR branch that adds a
    comment to the agent's module (``broken``: and breaks that question for good; ``weaker``: and
    makes those questions right 0.3 less often)."""
    repo = where / "repo"
    (repo / "desk").mkdir(parents=True)
    (repo / "desk" / "__init__.py").write_text("from . import agent\n")
    (repo / "desk" / "agent.py").write_text(AGENT)
    (repo / "evaluation" / "datasets").mkdir(parents=True)
    (repo / "evaluation" / "datasets" / "desk_golden.json").write_text(json.dumps(dataset(), indent=1))
    (repo / "agent-eval.toml").write_text('datasets = ["evaluation/datasets/*.json"]\nagent = "desk"\n')
    (repo / ".gitignore").write_text("agent-eval-results/\n__pycache__/\ncalls.txt\n")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "bench@example.com")
    _git(repo, "config", "user.name", "bench")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "desk")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "GOOGLE_"))}
    env |= {"PYTHONPATH": str(ROOT / "src"), "DESK_RATES": json.dumps(desk_rates), "CALLS_FILE": str(where / "calls.txt")}
    done = _run(["baseline", "update"], repo, env)
    if done.returncode != 0:
        raise RuntimeError(done.stdout + done.stderr)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "baseline")
    _git(repo, "checkout", "-q", "-b", "pr")
    agent = repo / "desk" / "agent.py"
    text = agent.read_text().replace('"""A support desk', '"""(PR) A support desk', 1)
    if broken:
        text = text.replace('BROKEN = ""', f'BROKEN = "{broken}"')
    if weaker:
        text = text.replace("WEAKER: list[str] = []", f"WEAKER: list[str] = {weaker!r}")
    agent.write_text(text)
    _git(repo, "commit", "-qam", "a PR")
    return repo, env


def check(
    repo: Path, env: dict[str, str], calls: Path, base_mode: bool = False, keep: Path | None = None, lock: threading.Lock | None = None
) -> dict[str, Any]:
    """One ``check --base main``; ``keep``: where to copy the output folder and the command's
    output when the check did not pass (what decided it, for a row that misses its goal), numbered
    under ``lock`` (the lanes share the folder)."""
    calls.write_text("")
    args = ["check", "--base", "main", "--no-comment"]
    done = _run([*args, "--compare-with", "base"] if base_mode else args, repo, env)
    results = json.loads((repo / "agent-eval-results" / "results.json").read_text())
    gate = results["gate"]
    if keep is not None and gate["outcome"] != "passed":
        with lock or contextlib.nullcontext():
            kept = keep / f"{len(list(keep.glob('*'))) if keep.exists() else 0:03d}-{gate['outcome']}"
            shutil.copytree(repo / "agent-eval-results", kept)
        (kept / "output.txt").write_text(done.stdout + done.stderr)
    return {
        "exit": done.returncode,
        "outcome": gate["outcome"],
        "named": sorted({f["question"] for f in gate["failures"] if f.get("question")}),
        "calls": len(calls.read_text().splitlines()),
        "reasons": [f["message"][:200] for f in gate["failures"]][:3],
        "drift": bool(results.get("drift")),
        "drift_notes": results.get("drift_notes") or [],
    }


def drifted(desk_rates: dict[str, float], rng: random.Random) -> dict[str, float]:
    """The model moved behind its name after the baseline was stored: ten always-right questions
    now right 30% of the time, two of the less reliable ones now always right."""
    steady = sorted(f"q{i:02d}" for i in range(QUESTIONS) if f"q{i:02d}" not in desk_rates)
    moved = dict(desk_rates)
    for tag in rng.sample(steady, 10):
        moved[tag] = 0.3
    for tag in rng.sample(sorted(desk_rates), 2):
        moved[tag] = 1.0
    return moved


# The scenarios: (name, base mode, what the PR does, whether the model drifts after the baseline).
SCENARIOS = {
    "unchanged": (False, "", False),
    "one_broken": (False, "broken", False),
    "ten_weaker": (False, "weaker", False),
    "base_drift": (True, "", True),
    "base_one_broken": (True, "broken", False),
}


def measure(
    checks: int = 200,
    per_round: int = 20,
    broken_checks: int = 20,
    seed: int | None = None,
    scenarios: dict[str, int] | None = None,
    scenario_per_round: int = 5,
    keep: Path | None = None,
    lanes: int = 1,
    as_processes: bool = False,
) -> dict[str, Any]:
    """``scenarios``: how many checks of each (by default ``checks`` unchanged and
    ``broken_checks`` of each other scenario); ``per_round`` unchanged checks share a repository
    and its baseline (one draw of the agent's rates), ``scenario_per_round`` of any other scenario
    (one draw of its rates and of what the PR breaks, weakens or the model moves). ``keep``: a
    folder to keep every check not passed of the scenarios that should pass (unchanged, the
    model moved) in, one folder each. ``lanes``: rounds run at once, each in its own repository
    (a check's verdict does not hang on how busy the machine is; its minutes do).
    ``as_processes``: each command a process of its own instead of in a lane process."""
    global _AS_PROCESSES
    _AS_PROCESSES = as_processes
    rng = random.Random(seed)
    counts = scenarios or {name: (checks if name == "unchanged" else broken_checks) for name in SCENARIOS}
    out: dict[str, Any] = {name: [] for name in counts}
    rounds = []  # every draw made here, in one order, whatever the lanes
    for scenario, total in counts.items():
        _, change, drift = SCENARIOS[scenario]
        size = per_round if scenario == "unchanged" else scenario_per_round
        for first in range(0, total, size):
            desk_rates = rates(rng)
            steady = sorted(f"q{i:02d}" for i in range(QUESTIONS) if f"q{i:02d}" not in desk_rates)
            broken = rng.choice(steady) if change == "broken" else ""
            weaker = sorted(rng.sample(steady, 10)) if change == "weaker" else None
            moved = drifted(desk_rates, rng) if drift else None
            rounds.append(_Round(scenario, desk_rates, broken, weaker, moved, min(size, total - first), total))
    progress = _Progress(keep)
    try:
        with ThreadPoolExecutor(max_workers=max(1, lanes)) as pool:
            for scenario, done in pool.map(lambda r: (r.scenario, r.run(progress)), rounds):
                out[scenario].extend(done)
    finally:
        while _OPEN:
            _OPEN.pop().close()
    return summarize(out)


@dataclass
class _Round:
    """One repository and its baseline (one draw of the agent's rates), checked ``checks`` times."""

    scenario: str
    desk_rates: dict[str, float]
    broken: str
    weaker: list[str] | None
    moved: dict[str, float] | None  # the model's rates after the baseline, when it drifted
    checks: int
    total: int  # the scenario's checks in all, for the progress lines

    def run(self, progress: _Progress) -> list[dict[str, Any]]:
        base_mode, change, _ = SCENARIOS[self.scenario]
        done = []
        with tempfile.TemporaryDirectory(prefix="aa-real-") as tmp:
            repo, env = round_repo(Path(tmp), self.desk_rates, self.broken, self.weaker)
            if self.moved is not None:
                env = env | {"DESK_RATES": json.dumps(self.moved)}
            kept = progress.keep / self.scenario if progress.keep is not None and change == "" else None
            for _ in range(self.checks):
                one = check(repo, env, Path(tmp) / "calls.txt", base_mode, kept, progress.lock)
                one["broken"] = self.broken
                one["round"] = id(self)  # the checks of one draw of the rates, told apart in the summary
                done.append(one)
                progress.said(self.scenario, self.total, one)
            shutil.rmtree(repo, ignore_errors=True)
        return done


class _Progress:
    """The lanes' one progress count a scenario, and the lock the kept folders are numbered under."""

    def __init__(self, keep: Path | None) -> None:
        self.keep = keep
        self.lock = threading.Lock()
        self.done: Counter[str] = Counter()

    def said(self, scenario: str, total: int, one: dict[str, Any]) -> None:
        with self.lock:
            self.done[scenario] += 1
            print(
                f"{scenario} {self.done[scenario]}/{total}: exit {one['exit']} {one['outcome']} {one['named']}", file=sys.stderr, flush=True
            )


def summarize(out: dict[str, Any]) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    # One run a question on the PR's side: 40 two-turn questions, 4 model calls each.
    one_run = QUESTIONS * 4
    for scenario, checks in out.items():
        if not checks:
            continue
        outcomes = Counter(c["outcome"] for c in checks)
        n = len(checks)
        summary[scenario] = {
            "checks": n,
            "failed": outcomes["failed"] / n,
            "inconclusive": outcomes["inconclusive"] / n,
            "unchecked": outcomes["unchecked"] / n,
            "calls": sum(c["calls"] for c in checks) / n / one_run,
            # The mean above hangs on a few rounds' draws (a round with more flaky questions
            # re-runs more): each round's, in the order they ran.
            "calls_by_round": [round(statistics.mean(calls) / one_run, 2) for calls in _by_round(checks).values()],
            "failed_naming": sum(1 for c in checks if c["outcome"] == "failed" and c["broken"] in c["named"]) / n,
            "not_passed": sum(1 for c in checks if c["outcome"] != "passed") / n,
            # Told the reviewer: a drift line said (results.json's "drift" holds the comparison whether or not it moved).
            "drift_reported": sum(1 for c in checks if c.get("drift_notes")) / n,
            "drift_examples": [c["drift_notes"] for c in checks if c.get("drift_notes")][:2],
            "examples": [c["reasons"] for c in checks if c["outcome"] != "passed"][:5],
        }
    return summary


def _by_round(checks: list[dict[str, Any]]) -> dict[int, list[int]]:
    rounds: dict[int, list[int]] = {}
    for c in checks:
        rounds.setdefault(c.get("round", 0), []).append(c["calls"])
    return rounds


def _spread(summary: dict[str, Any]) -> str:
    rounds = summary.get("calls_by_round") or []
    return f" (its {len(rounds)} rounds {min(rounds):.2f}-{max(rounds):.2f}x)" if len(rounds) > 1 else ""


GOALS = (
    "unchanged PRs failed <= 2%, inconclusive <= 3% (200+ checks); one broken failed naming it >= 95% (baseline and base mode); "
    "ten questions 0.3 weaker not passed >= 60%; base mode with the model drifted: passed >= 98%, the drift reported; PR-side calls <= 1.3x"
)


def row(result: dict[str, Any]) -> str:
    """The benchmark table's row: every scenario through the real command, judged once the
    unchanged checks number 200."""
    u = result["unchanged"]
    cells = [
        f"{u['checks']} unchanged checks: failed {u['failed']:.1%}, inconclusive {u['inconclusive']:.1%}, "
        f"could not be checked {u['unchecked']:.1%}, PR calls {u['calls']:.2f}x{_spread(u)}"
    ]
    met = u["failed"] <= 0.02 and u["inconclusive"] <= 0.03 and u["calls"] <= 1.3
    for name, label in (("one_broken", "one broken"), ("base_one_broken", "base mode, one broken")):
        if b := result.get(name):
            cells.append(f"{label} ({b['checks']} checks): failed naming it {b['failed_naming']:.0%}")
            met = met and b["failed_naming"] >= 0.95
    if w := result.get("ten_weaker"):
        cells.append(f"ten 0.3 weaker ({w['checks']} checks): not passed {w['not_passed']:.0%}")
        met = met and w["not_passed"] >= 0.60
    if d := result.get("base_drift"):
        passed = 1 - d["not_passed"]
        cells.append(f"base mode, model drifted ({d['checks']} checks): passed {passed:.0%}, drift reported {d['drift_reported']:.0%}")
        met = met and passed >= 0.98 and d["drift_reported"] >= 0.98
    judged = u["checks"] >= 200
    verdict = ("met" if met else "missed") if judged else f"not judged: {u['checks']} checks ({'met' if met else 'missed'} so far)"
    return f"| verdict through the tool on a real stochastic ADK agent (issue 46) | {'; '.join(cells)} | {GOALS} | {verdict} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checks", type=int, default=200)
    parser.add_argument("--per-round", type=int, default=20, help="unchanged checks a repository")
    parser.add_argument("--scenario-per-round", type=int, default=5, help="checks a repository of every other scenario")
    parser.add_argument("--broken", type=int, default=20, help="checks of each scenario but the unchanged one")
    parser.add_argument("--keep", type=Path, help="keep every unchanged or drifted check not passed here")
    parser.add_argument("--lanes", type=int, default=1, help="rounds run at once, each in its own repository")
    parser.add_argument(
        "--as-processes", action="store_true", help="each command a process of its own (default: in a lane process, bench/in_process.py)"
    )
    parser.add_argument("--only", default="", help="scenarios, comma-separated (" + ", ".join(SCENARIOS) + ")")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n] or list(SCENARIOS)
    unknown = sorted(set(names) - set(SCENARIOS))
    if unknown:
        parser.error(f"unknown scenario {', '.join(unknown)}: choose from {', '.join(SCENARIOS)}")
    counts = {n: args.checks if n == "unchanged" else args.broken for n in names}
    result = measure(
        args.checks,
        args.per_round,
        args.broken,
        scenarios=counts,
        scenario_per_round=args.scenario_per_round,
        keep=args.keep,
        lanes=args.lanes,
        as_processes=args.as_processes,
    )
    print(json.dumps(result, indent=1))
    if "unchanged" in result:
        print(row(result))


if __name__ == "__main__":
    main()
