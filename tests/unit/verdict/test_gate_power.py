"""The verdict against a seeded stochastic agent (bench/aa_gate.py, small): the real decision code
with the sequential re-runs, at fixed seeds, hence deterministic. The bench measures the same
with fresh randomness and more checks."""

from __future__ import annotations

import pytest
from bench.aa_gate import measure


@pytest.fixture(scope="module")
def measured() -> dict[str, dict[str, dict[str, float]]]:
    return measure(checks=60, seed=36)


@pytest.mark.parametrize("mode", ["baseline", "base"])
def test_an_unchanged_pr_of_a_flaky_agent_rarely_fails_and_costs_little(
    measured: dict[str, dict[str, dict[str, float]]], mode: str
) -> None:
    unchanged = measured[mode]["unchanged"]
    assert unchanged["failed"] <= 2 / 60 and unchanged["inconclusive"] <= 2 / 60
    # The goal is 1.3x (the bench: 1.13-1.17x over 300 checks a mode); 60 seeded checks spread
    # 1.10-1.31x over four seeds, so this guard allows the sample's own spread.
    assert unchanged["cost"] <= 1.4


@pytest.mark.parametrize("mode", ["baseline", "base"])
def test_broken_questions_fail_by_name(measured: dict[str, dict[str, dict[str, float]]], mode: str) -> None:
    assert measured[mode]["one_broken"]["failed_naming"] >= 0.95
    assert measured[mode]["four_broken"]["failed_naming"] >= 0.95
    ten = measured[mode]["ten_lose_0.3"]
    assert ten["failed"] + ten["inconclusive"] >= 0.4
