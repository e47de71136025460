"""Spending limits of one run: ``max-model-calls`` and ``max-cost-usd`` for the agent's model
calls, and ``[judge] max-calls`` / ``max-cost-usd`` for the judges' (one :class:`Budget` each).

When a budget is reached no new question (or judge call) starts; what is in flight finishes, and
what never started is reported as skipped for budget: not an error, never a zero.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from agent_eval_action.metrics.trace_metrics import calls_cost
from agent_eval_action.models.results import BudgetUse
from agent_eval_action.models.traces import Trace

# How every reason for work the budget did not let start begins.
SKIPPED = "budget"


def live_calls(trace: Trace) -> int:
    """The model calls of a run that reached the model: as the worker counted them where it
    handed them over (an ``AgentTool``'s runner's too), else the trace's calls less the replayed."""
    if trace.live_model_calls is not None:
        return trace.live_model_calls
    return max(len(trace.llm_calls or []) - (trace.replayed_model_calls or 0), 0)


@dataclass
class Budget:
    max_calls: int | None = None
    max_cost_usd: float | None = None
    calls_setting: str = "max-model-calls"
    cost_setting: str = "max-cost-usd"
    prices: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    calls: int = 0
    cost_usd: float = 0.0
    skipped: int = 0
    # Calls per finished unit of work, to keep a question from starting that would likely overshoot.
    _units: int = 0

    @property
    def limited(self) -> bool:
        return self.max_calls is not None or self.max_cost_usd is not None

    def spend(self, calls: int, cost_usd: float = 0.0, *, units: int = 1) -> None:
        self.calls += calls
        self.cost_usd += cost_usd
        self._units += units

    def spend_trace(self, trace: Trace) -> None:
        """The live (not replayed) model calls of one question run and their cost."""
        made = trace.llm_calls or []
        if not made:
            return  # a run that failed tells nothing of what a question costs (its calls are unknown)
        live = live_calls(trace)
        cost, _ = calls_cost(made, self.prices)
        self.spend(live, cost * live / len(made))  # calls the trace has no usage of (an AgentTool's) at the mean

    def reached(self) -> str | None:
        """Why no more work may start, or None."""
        if self.max_calls is not None and self.calls >= self.max_calls:
            return f"{self.calls_setting} {self.max_calls} reached"
        if self.max_cost_usd is not None and self.cost_usd >= self.max_cost_usd:
            return f"{self.cost_setting} {self.max_cost_usd:g} (USD) reached"
        return None

    def admits(self, in_flight: int) -> bool:
        """May one more unit start, with ``in_flight`` others running? Work in flight is counted at
        the calls per unit seen so far, so the budget is not overrun by what was already started."""
        if self.reached() is not None:
            return False
        if not in_flight:
            return True
        if not self._units:
            return False  # what a question costs is learnt from the first one
        if self.max_calls is not None and self.calls + self.calls / self._units * in_flight >= self.max_calls:
            return False
        return self.max_cost_usd is None or self.cost_usd + self.cost_usd / self._units * in_flight < self.max_cost_usd

    def skip_reason(self) -> str:
        return f"{SKIPPED} {self.reached() or 'reached'}: not run; raise it or select fewer questions"

    def use(self) -> BudgetUse:
        return BudgetUse(
            max_calls=self.max_calls,
            max_cost_usd=self.max_cost_usd,
            calls=self.calls,
            cost_usd=round(self.cost_usd, 6),
            skipped=self.skipped,
            reached=self.reached(),
        )
