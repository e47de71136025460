"""The gate against a seeded stochastic agent (bench/aa_gate.py, small): in base mode with three
runs a side it rarely fails a PR that changes nothing and catches a real 10-point drop made by one
question in ten. Statistical properties at fixed seeds, hence deterministic."""

from __future__ import annotations

from bench.aa_gate import rate


def test_base_mode_with_three_runs_rarely_fails_a_pr_that_changes_nothing() -> None:
    assert rate("base", trials=200, questions=40, runs=3, broken=False) <= 0.05


def test_base_mode_with_three_runs_catches_a_real_drop_in_one_question_in_ten() -> None:
    assert rate("base", trials=100, questions=40, runs=3, broken=True, first_seed=10_000) >= 0.9


def test_a_stored_baseline_of_one_drifted_run_blames_the_pr_far_more_often() -> None:
    """What base mode is for: one run against a baseline drawn earlier fails most A/A PRs."""
    assert rate("baseline", trials=100, questions=40, runs=1, broken=False) >= 0.5
