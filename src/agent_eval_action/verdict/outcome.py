"""The check's final outcome, set in one place: the gate's verdict (``gate.evaluate_gate``), then
the failures fail-on-drift adds, then "unchecked" when what was compared cannot be trusted (an
input problem, an interrupt, a budget that skipped what the check needed, a disturbed base side).
The service counts; this module decides and words it."""

from __future__ import annotations

from collections.abc import Sequence

from agent_eval_action.models.verdicts import GateFailure, GateResult
from agent_eval_action.text.markdown import plural


def partial_reason(skipped: int, total: int, max_model_calls: float | None, max_cost_usd: float | None, *, base: bool = False) -> str:
    """Why a check that skipped question runs it needed (``skipped`` of ``total``) decided nothing;
    ``base``: the runs skipped were the base's."""
    limits = [f"{name} = {value:g}" for name, value in (("max-model-calls", max_model_calls), ("max-cost-usd", max_cost_usd)) if value]
    runs = "of the base's question runs" if base else "question runs"
    return (
        f"partial: {skipped} of {total} {runs} were skipped by the budget ({', '.join(limits) or 'a spending limit'}), "
        "so the check did not see them; raise the budget, select fewer questions, or set `[gate] allow-partial = true` "
        "in the base branch's config to gate only what was checked"
    )


def interrupted_reason(stopped: int, total: int) -> str:
    """Why an interrupted check decided nothing."""
    return f"interrupted: {stopped} of {plural(total, 'question run')} did not finish (Ctrl-C or SIGTERM); run the check again"


def settle(
    gate: GateResult,
    *,
    why: Sequence[str] = (),
    problems: Sequence[str] = (),
    interrupted: bool = False,
    drift: Sequence[GateFailure] = (),
    notes: Sequence[str] = (),
) -> GateResult:
    """The final verdict from the gate's: ``drift`` (fail-on-drift's failures) fails a check that
    passed or was inconclusive; ``why`` (what was compared cannot be trusted, for no input's
    fault) or ``problems`` (input problems) leave it unchecked; ``why`` alone, unless
    ``interrupted``, is an infrastructure failure (exit 3). ``notes`` are added to the gate's."""
    final = gate.model_copy(deep=True)
    final.failures += list(drift)
    final.notes += list(notes)
    if drift and final.outcome in ("passed", "inconclusive"):
        final.outcome = "failed"
    if problems or why:
        final.outcome, final.unchecked = "unchecked", final.unchecked + list(why) + list(problems[:10])
        if why and not interrupted and not problems and final.infrastructure is None:
            final.infrastructure = why[0].split(";")[0]  # no input's fault: exit 3
    return final
