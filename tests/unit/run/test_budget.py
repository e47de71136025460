"""Spending limits: no new work starts once a budget is reached, work in flight is counted at what
a finished unit cost, replayed model calls cost nothing, and what never started is skipped."""

from __future__ import annotations

import pytest

from agent_eval_action.models.traces import LlmCall, Trace
from agent_eval_action.run.budget import SKIPPED, Budget

PRICES = {"gemini-2.5-flash": {"input": 1.0, "output": 2.0}}  # USD per million tokens


def call(input_tokens: int = 1000, output_tokens: int = 500, model: str = "gemini-2.5-flash") -> LlmCall:
    return LlmCall(model=model, input_tokens=input_tokens, output_tokens=output_tokens)


def test_no_limit_is_not_limited() -> None:
    budget = Budget()
    budget.spend(1_000_000, 1e6)
    assert not budget.limited
    assert budget.reached() is None
    assert budget.admits(0)


def test_a_call_budget_runs_out_mid_run_and_the_rest_is_skipped() -> None:
    """Ten questions of four model calls each, one at a time, under max-model-calls 10."""
    budget = Budget(max_calls=10)
    ran = 0
    for _ in range(10):
        if not budget.admits(0):
            budget.skipped += 1
            continue
        budget.spend(4)
        ran += 1
    assert ran == 3  # 0, 4 and 8 calls spent were under 10 when each started
    assert budget.calls == 12  # what was started finishes: the last question overshoots
    assert budget.reached() == "max-model-calls 10 reached"
    assert budget.skip_reason() == "budget max-model-calls 10 reached: not run; raise it or select fewer questions"
    assert budget.skip_reason().startswith(SKIPPED)
    use = budget.use()
    assert (use.max_calls, use.calls, use.skipped, use.reached) == (10, 12, 7, "max-model-calls 10 reached")


def test_work_in_flight_is_counted_at_the_calls_a_finished_unit_cost() -> None:
    budget = Budget(max_calls=10)
    assert budget.admits(0)
    assert not budget.admits(1)  # what a question costs is not known until one finishes
    budget.spend(3)
    assert budget.admits(2)  # 3 spent + 2 x 3 expected = 9 < 10
    assert not budget.admits(3)  # 3 + 9 = 12: would likely overshoot


def test_a_cost_budget_reads_the_price_table_and_says_usd() -> None:
    budget = Budget(max_cost_usd=0.005, prices=PRICES)
    budget.spend_trace(Trace(llm_calls=[call()]))  # 1000 x 1 + 500 x 2 per million
    assert budget.calls == 1
    assert budget.cost_usd == pytest.approx(0.002)
    assert budget.reached() is None
    assert budget.admits(1)  # 0.002 + 0.002 < 0.005
    assert not budget.admits(2)  # 0.002 + 0.004 >= 0.005
    budget.spend_trace(Trace(llm_calls=[call(), call()]))
    assert budget.reached() == "max-cost-usd 0.005 (USD) reached"
    assert budget.use().cost_usd == pytest.approx(0.006)


def test_replayed_calls_are_not_spent() -> None:
    budget = Budget(max_calls=100, prices=PRICES)
    budget.spend_trace(Trace(llm_calls=[call()] * 4, replayed_model_calls=3))
    assert budget.calls == 1
    assert budget.cost_usd == pytest.approx(0.002)  # one live call of four, at the average cost
    budget.spend_trace(Trace(llm_calls=[call()] * 2, replayed_model_calls=5))  # more replayed than made: none live
    assert budget.calls == 1


def test_a_failed_run_spends_nothing_and_teaches_nothing() -> None:
    budget = Budget(max_calls=10)
    budget.spend_trace(Trace(error="RuntimeError: boom"))
    budget.spend_trace(Trace(llm_calls=[]))
    assert budget.calls == 0
    assert not budget.admits(1)  # still no finished unit to learn a question's cost from


def test_a_model_missing_from_the_price_table_costs_nothing_but_counts_its_calls() -> None:
    budget = Budget(max_cost_usd=0.001, prices=PRICES)
    budget.spend_trace(Trace(llm_calls=[call(model="unknown-model")]))
    assert budget.calls == 1 and budget.cost_usd == 0.0


def test_the_judges_budget_names_its_own_settings() -> None:
    budget = Budget(max_calls=2, calls_setting="[judge] max-calls", cost_setting="[judge] max-cost-usd")
    budget.spend(2)
    assert budget.reached() == "[judge] max-calls 2 reached"
    costly = Budget(max_cost_usd=0.5, cost_setting="[judge] max-cost-usd")
    costly.spend(1, 0.75)
    assert costly.reached() == "[judge] max-cost-usd 0.5 (USD) reached"


def test_the_calls_limit_is_checked_before_the_cost_limit() -> None:
    budget = Budget(max_calls=1, max_cost_usd=0.1)
    budget.spend(1, 1.0)
    assert budget.reached() == "max-model-calls 1 reached"
