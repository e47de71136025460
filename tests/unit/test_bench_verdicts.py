"""The bench's judge of each row (bench/verdicts.py): timings in, verdict text out. No timing is
measured here; the figures are given."""

from __future__ import annotations

from bench.verdicts import Goal, alternate, ratio, row, spread, verdict


def test_a_goal_met_and_missed_on_runs_that_agree() -> None:
    samples = {"ours": [2.9, 3.0, 3.1], "floor": [1.0, 1.0, 1.05]}
    value = ratio(samples["ours"], samples["floor"])
    assert value == 3.0
    assert verdict(value, Goal(3.0), samples) == "met"
    assert verdict(value, Goal(2.0), samples) == "missed"
    assert verdict(10.0, Goal(12.0, at_most=False), samples) == "missed"
    assert verdict(14.7, Goal(12.0, at_most=False), samples) == "met"


def test_a_side_spread_over_20_percent_is_too_noisy_to_judge() -> None:
    samples = {"ours": [2.0, 3.0, 2.5], "floor": [1.0, 1.01, 1.0]}
    assert spread(samples["ours"]) == 0.4
    text = verdict(ratio(samples["ours"], samples["floor"]), Goal(3.0), samples)
    assert text == "too noisy to judge: runs spread over 20% (ours 40%); met on the medians"


def test_a_spread_of_exactly_20_percent_is_still_judged() -> None:
    assert verdict(1.0, Goal(2.0), {"ours": [0.9, 1.0, 1.1]}) == "met"


def test_fewer_than_three_runs_a_side_are_not_judged() -> None:
    text = verdict(1.0, Goal(2.0), {"ours": [1.0, 1.0, 1.0], "reference": [1.0]})
    assert text == "not judged: fewer than 3 runs (reference 1)"


def test_a_row_prints_the_figure_with_its_goal_and_verdict() -> None:
    samples = {"many": [20.0, 21.0, 22.0], "none": [10.0, 10.5, 11.0]}
    line = row("PR check", "21.00 s", "10.50 s", ratio(samples["many"], samples["none"]), Goal(2.0), samples)
    assert line == "| PR check | 21.00 s | 10.50 s | 2.00x | <= 2x | met |"
    shown = row("CLI start", "46 ms", "14 ms", 32.0, Goal(300, unit=" ms", note="added"), {"ours": [46, 46, 47]}, shown="+32 ms")
    assert shown == "| CLI start | 46 ms | 14 ms | +32 ms | <= 300 ms added | met |"


def test_sides_run_in_turn_each_round_starting_one_further_on() -> None:
    order: list[str] = []

    def side(name: str, seconds: float) -> float:
        order.append(name)
        return seconds

    samples = alternate({"a": lambda: side("a", 1.0), "b": lambda: side("b", 2.0)}, 3)
    assert order == ["a", "b", "b", "a", "a", "b"]
    assert samples == {"a": [1.0, 1.0, 1.0], "b": [2.0, 2.0, 2.0]}
    order.clear()
    alternate({"a": lambda: side("a", 1.0), "b": lambda: side("b", 1.0), "c": lambda: side("c", 1.0)}, 4)
    assert order == [*"abc", *"bca", *"cab", *"abc"]
    # No side always follows the same one: the one before each run of "b".
    before_b = {order[i - 1] for i in range(1, len(order)) if order[i] == "b"}
    assert len(before_b) > 1
