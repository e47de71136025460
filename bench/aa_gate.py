"""The gate's false-alarm rate and power against a stochastic agent, in both comparison modes.

Simulated at the results level with the real comparison and gate (``compare_dataset``,
``evaluate_gate``, the default ``[gate]`` rules) on datasets drawn from a seeded model of a
stochastic agent: each question has a probability of passing (``tool_usage_accuracy`` 1.0, else
0.0), each run is one Bernoulli draw of it.

- **baseline mode**: the stored baseline was drawn earlier, one run per question (as a baseline
  holds today), from probabilities that have drifted since by a little (the model behind the
  name moved); the PR is drawn now, one run per question (the default).
- **base mode**: the merge-base and the PR both drawn now, ``runs`` runs per question each.

An A/A PR changes nothing: every gate failure is a false alarm. A broken PR takes questions of
a seeded order down to a pass probability of 0 until the mean has fallen by 10 points (about
one question in ten): every pass is a miss.

    python -m bench.aa_gate [--trials 100] [--questions 40] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass
from typing import Literal

from agent_eval_action.config import GateConfig
from agent_eval_action.core.models import DatasetResult, QuestionResult, Score
from agent_eval_action.datasets import LoadedDataset
from agent_eval_action.metrics import MetricContext, default_pass_thresholds
from agent_eval_action.scoring.scorer import Scorer
from agent_eval_action.verdict.comparison import compare_dataset
from agent_eval_action.verdict.gate import evaluate_gate

METRIC = "tool_usage_accuracy"
KINDS = {METRIC: "reference"}
# How far each question's pass probability moved between the stored baseline and now (baseline mode).
DRIFT = 0.05
# The real drop a broken PR makes in the expected mean.
DROP = 0.10
Mode = Literal["baseline", "base"]


@dataclass
class Agent:
    """Per question, the probability that a run passes."""

    p: list[float]

    @classmethod
    def seeded(cls, seed: int, questions: int) -> Agent:
        """Most questions near-certain, some usually right, a few coin tosses: what a real
        tool-calling agent on a golden set looks like."""
        rng = random.Random(seed)
        p = []
        for _ in range(questions):
            kind = rng.random()
            p.append(rng.uniform(0.97, 1.0) if kind < 0.7 else rng.uniform(0.8, 0.97) if kind < 0.9 else rng.uniform(0.3, 0.8))
        return cls(p)

    def drifted(self, rng: random.Random) -> Agent:
        return Agent([min(1.0, max(0.0, p + rng.uniform(-DRIFT, DRIFT))) for p in self.p])

    def broken(self, rng: random.Random) -> Agent:
        """Questions in a seeded order down to 0 until the expected mean fell by ``DROP``."""
        p = list(self.p)
        order = list(range(len(p)))
        rng.shuffle(order)
        lost = 0.0
        for i in order:
            if lost >= DROP * len(p) - 1e-9:
                break
            lost += p[i]
            p[i] = 0.0
        return Agent(p)

    def one_broken(self, rng: random.Random) -> Agent:
        """One near-certain question (p >= 0.97), in a seeded order, down to 0: about 2.5 points."""
        broken = next(i for i in rng.sample(range(len(self.p)), len(self.p)) if self.p[i] >= 0.97)
        return Agent([0.0 if i == broken else p for i, p in enumerate(self.p)])

    def draw(self, rng: random.Random, runs: int) -> DatasetResult:
        questions = [
            QuestionResult(id=f"q{i:03d}", run=k, scores={METRIC: Score(value=1.0 if rng.random() < p else 0.0)})
            for i, p in enumerate(self.p)
            for k in range(runs)
        ]
        return SCORER.summarize(LoadedDataset(path="golden.json", name="golden", format="golden", records=iter(())), questions)


SCORER = Scorer.for_names([METRIC], MetricContext(), pass_thresholds=default_pass_thresholds({}))


def gate_fails(mode: Mode, seed: int, *, questions: int, runs: int, broken: bool, one: bool = False) -> bool:
    """One simulated PR check: whether the default gate fails it (``one``: the PR breaks one question)."""
    rng = random.Random(seed)
    agent = Agent.seeded(seed, questions)
    head = agent.one_broken(rng) if one else agent.broken(rng) if broken else agent
    if mode == "baseline":
        base, now = agent.drifted(rng).draw(rng, 1), head.draw(rng, 1)
    else:
        base, now = agent.draw(rng, runs), head.draw(rng, runs)
    comparison = compare_dataset(now, base, baseline_path="baseline.json", seed=seed)
    return not evaluate_gate([now], [comparison], GateConfig(), KINDS).passed


def rate(mode: Mode, *, trials: int, questions: int, runs: int, broken: bool, first_seed: int = 0, one: bool = False) -> float:
    """The share of ``trials`` seeded PRs the gate fails."""
    return sum(gate_fails(mode, first_seed + t, questions=questions, runs=runs, broken=broken, one=one) for t in range(trials)) / trials


def measure(trials: int = 100, questions: int = 40, runs: int = 3) -> dict[str, float | int]:
    settings = {"trials": trials, "questions": questions, "runs": runs}
    return {
        **settings,
        "false_alarm_baseline": rate("baseline", trials=trials, questions=questions, runs=1, broken=False),
        "false_alarm_base": rate("base", trials=trials, questions=questions, runs=runs, broken=False),
        "power_baseline": rate("baseline", trials=trials, questions=questions, runs=1, broken=True, first_seed=10_000),
        "power_base": rate("base", trials=trials, questions=questions, runs=runs, broken=True, first_seed=10_000),
        # Not a goal: what the chance allowance for complete falls costs (a lone break among coin tosses).
        "power_one_question_baseline": rate(
            "baseline", trials=trials, questions=questions, runs=1, broken=True, first_seed=20_000, one=True
        ),
        "power_one_question_base": rate("base", trials=trials, questions=questions, runs=runs, broken=True, first_seed=20_000, one=True),
    }


def row(result: dict[str, float | int]) -> str:
    """The benchmark table's row: both modes side by side."""
    r = result
    return (
        f"| gate on {r['trials']} A/A PRs and {r['trials']} PRs with a real 10-point drop (one question in ten), stochastic agent, "
        f"{r['questions']} questions | base mode, {r['runs']} runs a side: false alarms {r['false_alarm_base']:.0%}, power {r['power_base']:.0%} "
        f"| baseline mode (a stored baseline drifted by up to {DRIFT:.0%}, 1 run): false alarms {r['false_alarm_baseline']:.0%}, "
        f"power {r['power_baseline']:.0%} | one near-certain question broken: caught {r['power_one_question_base']:.0%} (base), "
        f"{r['power_one_question_baseline']:.0%} (baseline) | base mode: <= 5% false alarms, >= 90% power "
        f"| {'met' if r['false_alarm_base'] <= 0.05 and r['power_base'] >= 0.9 else 'missed'} (seeded: no timing noise) |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(json.dumps(measure(args.trials, args.questions, args.runs)))


if __name__ == "__main__":
    main()
