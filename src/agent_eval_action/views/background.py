"""What the views show beside a run: its base runs, each metric's history and the gate's rules.
The service assembles it from what the check already read; the views only display it."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_eval_action.models.results import DatasetResult
from agent_eval_action.repo.history import BaseRuns, Point
from agent_eval_action.verdict.gate import RuleView


@dataclass
class Background:
    """What the views show beside this run. Every part may be empty: a run without a base, a
    baseline written before transcripts were recorded, a checkout without history."""

    # Where the base runs were read: "merge-base 1a2b3c4", "the working tree", a file name.
    base_label: str | None = None
    # Dataset path -> the base's run of it.
    base_runs: dict[str, DatasetResult] = field(default_factory=dict)
    # Dataset path -> metric -> the last baseline commits' values, oldest first.
    history: dict[str, dict[str, list[Point]]] = field(default_factory=dict)
    # Metric -> its gate rule (metrics without one are absent).
    rules: dict[str, RuleView] = field(default_factory=dict)
    # Final-state keys the config's ignore-state names: shown as volatile, never as a change.
    ignore_state: frozenset[str] = frozenset()

    @classmethod
    def of(cls, runs: BaseRuns, rules: dict[str, RuleView]) -> Background:
        return cls(base_label=runs.label, base_runs=runs.runs, history=runs.history, rules=rules)
