"""The final outcome, set once from the gate's: fail-on-drift's failures, then unchecked."""

from __future__ import annotations

from agent_eval_action.models.verdicts import GateFailure, GateResult
from agent_eval_action.verdict.outcome import interrupted_reason, partial_reason, settle

DRIFT = GateFailure(dataset="d.json", metric="response_match", rule="drift", message="d: the model drifted", subject="d", detail="drifted")


def test_drift_fails_a_passed_or_inconclusive_check_and_leaves_the_gates_result_alone() -> None:
    passed = GateResult(outcome="passed")
    final = settle(passed, drift=[DRIFT], notes=["a note"])
    assert final.outcome == "failed" and final.failures == [DRIFT] and final.notes == ["a note"]
    assert passed.outcome == "passed" and not passed.failures and not passed.notes  # a new result, not a mutation
    assert settle(GateResult(outcome="inconclusive"), drift=[DRIFT]).outcome == "failed"
    assert settle(GateResult(outcome="passed")).outcome == "passed"


def test_problems_and_untrusted_comparisons_leave_the_check_unchecked() -> None:
    problems = settle(GateResult(outcome="failed"), problems=["d.json: broken"], drift=[DRIFT])
    assert problems.outcome == "unchecked" and problems.unchecked == ["d.json: broken"] and problems.infrastructure is None
    disturbed = settle(GateResult(outcome="passed"), why=["the base's files changed; the comparison could not be made"])
    # No input's fault: exit 3, its cause up to the first semicolon.
    assert disturbed.outcome == "unchecked" and disturbed.infrastructure == "the base's files changed"
    stopped = settle(GateResult(outcome="passed"), why=[interrupted_reason(2, 10)], interrupted=True)
    assert stopped.outcome == "unchecked" and stopped.infrastructure is None
    assert stopped.unchecked == ["interrupted: 2 of 10 question runs did not finish (Ctrl-C or SIGTERM); run the check again"]
    many = settle(GateResult(outcome="passed"), problems=[f"p{i}" for i in range(12)])
    assert many.unchecked == [f"p{i}" for i in range(10)]


def test_partial_reason_names_the_limits_and_the_side() -> None:
    ours = partial_reason(3, 8, 10, None)
    assert ours.startswith("partial: 3 of 8 question runs were skipped by the budget (max-model-calls = 10)")
    theirs = partial_reason(3, 8, None, 0.5, base=True)
    assert theirs.startswith("partial: 3 of 8 of the base's question runs were skipped by the budget (max-cost-usd = 0.5)")
    assert "a spending limit" in partial_reason(1, 2, None, None)
