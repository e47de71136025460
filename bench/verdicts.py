"""How every row of ``make bench`` is measured and judged: the sides of a comparison run in turn
(one round = each side once), at least three rounds, each side's median; a goal is judged only
when every side's runs agree within 20% (a shared machine swings more than that from one
minute to the next, and a ratio of two such figures then says nothing).

Pure: timings in, verdict text out (``tests/unit/test_bench_verdicts.py``).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

MIN_RUNS = 3
# Spread of one side's runs, (slowest - fastest) / median, beyond which the machine was too
# noisy to judge the goal.
NOISE = 0.20


def alternate(sides: Mapping[str, Callable[[], float]], rounds: int) -> dict[str, list[float]]:
    """Each side's measurements (seconds), the sides run in turn ``rounds`` times, so drift in
    the machine's load hits every side alike; each round starts one side further on, so no side
    always runs in the same place (the first process after ADK's AgentEvaluator, a minute of it,
    ran 0.1 s slower than the next ones: on one side always, that was its median)."""
    samples: dict[str, list[float]] = {name: [] for name in sides}
    names = list(sides)
    for round_ in range(rounds):
        shift = round_ % len(names) if names else 0
        for name in names[shift:] + names[:shift]:
            samples[name].append(sides[name]())
    return samples


def median(samples: Sequence[float]) -> float:
    return statistics.median(samples)


def ratio(ours: Sequence[float], reference: Sequence[float]) -> float:
    """Median over median."""
    return median(ours) / median(reference)


def spread(samples: Sequence[float]) -> float:
    """(slowest - fastest) / median: 0 for one run or runs that agree."""
    middle = median(samples)
    return (max(samples) - min(samples)) / middle if middle else 0.0


@dataclass(frozen=True)
class Goal:
    """A bound on a figure: ``<= 3x`` (``at_most``) or ``>= 12x``; ``unit`` as printed after the number."""

    limit: float
    at_most: bool = True
    unit: str = "x"
    note: str = ""  # what the limit means, printed after it: "(4x the questions)"

    def met(self, value: float) -> bool:
        return value <= self.limit if self.at_most else value >= self.limit

    @property
    def text(self) -> str:
        bound = f"{'<=' if self.at_most else '>='} {self.limit:g}{self.unit}"
        return f"{bound} {self.note}".rstrip()


def verdict(value: float, goal: Goal, samples: Mapping[str, Sequence[float]]) -> str:
    """``met`` / ``missed`` for ``value`` against ``goal``, unless a side of ``samples`` (name ->
    its measurements) ran fewer than :data:`MIN_RUNS` times or spread over :data:`NOISE`: then
    it says so, and the goal is not judged."""
    few = {name: len(runs) for name, runs in samples.items() if len(runs) < MIN_RUNS}
    if few:
        counts = ", ".join(f"{name} {count}" for name, count in few.items())
        return f"not judged: fewer than {MIN_RUNS} runs ({counts})"
    # Rounded: 0.9, 1.0, 1.1 spread 20%, not the 20.000000000000004% floats make of it.
    noisy = {name: spread(runs) for name, runs in samples.items() if round(spread(runs), 9) > NOISE}
    if noisy:
        spreads = ", ".join(f"{name} {value:.0%}" for name, value in noisy.items())
        return f"too noisy to judge: runs spread over {NOISE:.0%} ({spreads}); {'met' if goal.met(value) else 'missed'} on the medians"
    return "met" if goal.met(value) else "missed"


def row(
    benchmark: str, ours: str, reference: str, value: float, goal: Goal, samples: Mapping[str, Sequence[float]], shown: str = ""
) -> str:
    """One markdown table row: the figure (``shown``, else ``value`` as a ratio), its goal and the verdict."""
    figure = shown or f"{value:.2f}{goal.unit}"
    return f"| {benchmark} | {ours} | {reference} | {figure} | {goal.text} | {verdict(value, goal, samples)} |"


HEADER = "| benchmark | ours | reference | figure | goal | verdict |\n|---|---|---|---|---|---|"


def reported(benchmark: str, ours: str, reference: str, figure: str, goal: str = "none: a cost reported") -> str:
    """A row with no goal to judge (a cost set beside its reference): its verdict says so."""
    return f"| {benchmark} | {ours} | {reference} | {figure} | {goal} | reported |"
