"""The statistics of the per-question verdict: Fisher's exact fall, Holm's count, Holm, the
dataset-wide Cochran-Mantel-Haenszel test, the decision and the sequential re-runs."""

from __future__ import annotations

import dataclasses
import math
import random

import pytest

from agent_eval_action.verdict.noise import (
    DEFAULTS,
    Settings,
    Tally,
    could_fall,
    decide,
    fisher_fall,
    holm,
    in_doubt,
    more_runs,
    settings_for,
    spread_fall,
    spread_in_doubt,
    varies,
)


def test_fisher_fall_is_the_hypergeometric_tail() -> None:
    # 0 of 6 against 5 of 5: only one way in C(11, 6) puts every failure on the PR's side.
    assert fisher_fall(Tally(6, 0), Tally(5, 5)) == pytest.approx(1 / math.comb(11, 6))
    assert fisher_fall(Tally(6, 0), Tally(5, 5)) == pytest.approx(0.002, abs=5e-4)
    # Every run passes on the PR's side: nothing fell.
    assert fisher_fall(Tally(3, 3), Tally(5, 2)) == 1.0
    # One failed run against a 4-of-5 base is what the base does: 2 of the 6 runs failed.
    assert fisher_fall(Tally(1, 0), Tally(5, 4)) == pytest.approx(2 / 6)
    assert fisher_fall(Tally(0, 0), Tally(5, 5)) == 1.0


def test_fisher_fall_against_a_brute_force_count() -> None:
    # Every arrangement of the pooled outcomes counted by hand, for small tables.
    from itertools import combinations

    for pr_runs, base_runs, passes in [(2, 3, 2), (3, 4, 4), (4, 2, 3)]:
        pool = [1] * passes + [0] * (pr_runs + base_runs - passes)
        draws = list(combinations(range(len(pool)), pr_runs))
        for observed in range(min(pr_runs, passes) + 1):
            if passes - observed > base_runs:
                continue
            share = sum(1 for d in draws if sum(pool[i] for i in d) <= observed) / len(draws)
            assert fisher_fall(Tally(pr_runs, observed), Tally(base_runs, passes - observed)) == pytest.approx(share)


def test_every_question_that_passed_on_the_base_shares_alpha() -> None:
    # Re-runs can take any question that passed on the base to its cap: each could fall, so
    # Holm's m counts them all, not only those whose runs so far could reach the level.
    assert could_fall(Tally(5, 5)) and could_fall(Tally(1, 1)) and could_fall(Tally(10, 1))
    assert not could_fall(Tally(5, 0))
    steady = {f"q{i}": (Tally(1, 1), Tally(10, 10)) for i in range(38)}
    flaky = {"a": (Tally(3, 0), Tally(10, 10)), "never": (Tally(1, 0), Tally(10, 0))}
    verdict = decide(steady | flaky)
    assert verdict.m == 39  # every question but the one that never passes on the base
    # 0 of 3 against 10 of 10 (p = 1/286) fell with m = 1; shared by 39 it is in doubt.
    assert verdict.questions[[q.id for q in verdict.questions].index("a")].decision == "inconclusive"
    # The level said is the level Holm used: 0 of 6 (p = 1/8008) falls under 0.005 / 39, not 40.
    hit = decide(steady | flaky | {"a": (Tally(6, 0), Tally(10, 10))}).questions
    (a,) = [q for q in hit if q.id == "a"]
    assert a.decision == "failed" and a.level == pytest.approx(0.005 / 39) and a.p < 0.005 / 39


def test_at_its_cap_a_question_is_in_doubt_at_two_percent_shared_by_the_questions_that_vary() -> None:
    assert varies(Tally(1, 0), Tally(10, 10)) and varies(Tally(1, 1), Tally(10, 9))
    assert not varies(Tally(1, 1), Tally(10, 10)) and not varies(Tally(1, 0), Tally(10, 0))
    settings = Settings(cap=10)
    capped = {"c": (Tally(10, 2), Tally(10, 8))}  # p = 0.012
    alone = decide(capped, settings)
    assert alone.questions[0].decision == "inconclusive"
    # Beside nineteen other flaky questions, 0.012 is what one of twenty does by chance.
    others = {f"f{i}": (Tally(1, 1), Tally(10, 6)) for i in range(19)}
    shared = {q.id: q.decision for q in decide(capped | others, settings).questions}
    assert shared["c"] == "cleared"


def test_holm_steps_down() -> None:
    rejected = holm({"a": 0.001, "b": 0.004, "c": 0.03}, 3, 0.01)
    assert rejected == {"a": pytest.approx(0.01 / 3), "b": pytest.approx(0.005)}
    assert holm({"a": 0.004}, 3, 0.01) == {}


def test_spread_fall_sees_many_small_falls_and_not_one_flaky_question() -> None:
    thin = {f"q{i}": (Tally(3, 1), Tally(5, 4)) for i in range(10)}
    assert spread_fall(thin) < 0.01
    noise = {f"q{i}": (Tally(1, 1), Tally(5, 5)) for i in range(39)} | {"flaky": (Tally(1, 0), Tally(5, 3))}
    assert spread_fall(noise) > 0.2
    assert spread_fall({}) == 1.0


def test_in_doubt() -> None:
    assert in_doubt(Tally(1, 0), Tally(5, 5))  # p = 1/6
    assert not in_doubt(Tally(1, 0), Tally(5, 4))  # p = 1/3: the base fails as often
    assert not in_doubt(Tally(1, 1), Tally(5, 5))
    assert not in_doubt(Tally(1, 0), Tally(1, 1))  # p = 1/2: one base run decides by the guard's rule (decide)


def test_decide_tells_the_four_outcomes_apart() -> None:
    tallies = {
        "broken": (Tally(8, 0), Tally(5, 5)),  # p = 1/1287, under 0.005 shared by the 4 questions
        # At its cap, p = 0.002: not confirmed (Holm: 0.005 / 3), and under 2% shared by the 3 that vary.
        "stuck": (Tally(10, 1), Tally(5, 5)),
        "flaky": (Tally(1, 0), Tally(5, 3)),
        "fine": (Tally(1, 1), Tally(5, 5)),
    }
    verdict = decide(tallies)
    by_id = {q.id: q for q in verdict.questions}
    assert [by_id[q].decision for q in tallies] == ["failed", "inconclusive", "cleared", "unchanged"]
    assert by_id["broken"].said() == "broken: 0 of 8 runs pass, 5 of 5 on the base: p < 0.001"
    # The broken question weighs on the dataset-wide test too.
    assert verdict.spread_failed
    assert not decide({"flaky": (Tally(1, 0), Tally(5, 3)), "fine": (Tally(1, 1), Tally(5, 5))}).spread_failed


def _simulate(rates: dict[str, float], pr_rates: dict[str, float], rng: random.Random, settings: Settings) -> tuple[str, int]:
    base = {q: Tally(5, sum(rng.random() < r for _ in range(5))) for q, r in rates.items()}
    pr = {q: Tally(1, int(rng.random() < pr_rates[q])) for q in rates}
    while True:
        again = more_runs({q: (pr[q], base[q]) for q in rates}, settings)
        if not again:
            break
        for q in again:
            pr[q] = pr[q] + Tally(1, int(rng.random() < pr_rates[q]))
    verdict = decide({q: (pr[q], base[q]) for q in rates}, settings)
    failed = verdict.of("failed")
    outcome = "failed" if failed or verdict.spread_failed else "inconclusive" if verdict.of("inconclusive") else "passed"
    return outcome, sum(t.runs for t in pr.values())


def test_sequential_reruns_catch_a_broken_question_and_spare_an_unchanged_agent() -> None:
    rng = random.Random(20261126)
    rates = {f"q{i}": 1.0 for i in range(30)} | {f"f{i}": 0.85 for i in range(7)} | {f"c{i}": 0.5 for i in range(3)}
    broken = dict(rates, q0=0.0)
    settings = settings_for(alpha=0.01, doubt=0.2, max_reruns=None, questions=len(rates), base_runs=5)
    outcomes = [_simulate(rates, broken, rng, settings) for _ in range(40)]
    assert sum(o == "failed" for o, _ in outcomes) >= 39
    same = [_simulate(rates, rates, rng, settings) for _ in range(40)]
    assert sum(o == "failed" for o, _ in same) <= 1
    # Re-runs only where in doubt: well under 1.3 runs a question on average.
    assert sum(runs for _, runs in same) / (40 * len(rates)) < 1.3


def test_more_runs_stops_at_the_cap() -> None:
    assert more_runs({"q": (Tally(10, 3), Tally(5, 5))}, Settings(cap=10)) == []
    assert decide({"q": (Tally(10, 6), Tally(5, 5))}).questions[0].decision == "cleared"  # p = 0.15 at the cap
    assert more_runs({"q": (Tally(3, 0), Tally(5, 5))}, Settings(cap=10)) == ["q"]
    # 2 of 3 against 5 of 5: p = 0.375, cleared.
    assert more_runs({"q": (Tally(3, 2), Tally(5, 5))}, Settings(cap=10)) == []


def test_a_thin_fall_on_reliable_questions_runs_everything_though_flaky_noise_hides_it() -> None:
    """Two questions the base passed 10 of 10 now pass 2 of 3 each: over all 40 questions the
    dataset-wide test is far from doubt (flaky questions that happened to pass hide it, p = 0.43),
    over those the base never failed it is not (p = 0.04), so every question runs again. One such
    question alone is what a flaky agent does: no more runs."""
    steady = {f"q{i}": (Tally(1, 1), Tally(10, 10)) for i in range(26)}
    flaky = {f"f{i}": (Tally(1, int(i < 8)), Tally(10, 6)) for i in range(12)}
    thin = steady | flaky | {"w1": (Tally(3, 2), Tally(10, 10)), "w2": (Tally(3, 2), Tally(10, 10))}
    verdict = decide(thin)
    assert verdict.spread_p == pytest.approx(0.43, abs=0.01)
    assert spread_in_doubt(thin, verdict.spread_p)
    assert more_runs(thin) == sorted(thin)  # up to five runs each, w1 and w2 included
    # Never past [gate] max-reruns (the cap): at 3, the questions at 3 runs stop; at 1, nothing runs again.
    assert more_runs(thin, dataclasses.replace(DEFAULTS, cap=3)) == sorted(q for q in thin if q not in ("w1", "w2"))
    assert more_runs(thin, dataclasses.replace(DEFAULTS, cap=1)) == []
    one = steady | flaky | {"w1": (Tally(3, 2), Tally(10, 10))}
    assert not spread_in_doubt(one, decide(one).spread_p)
    assert more_runs(one) == []
    # Once every question has its five runs, nothing more, though still in doubt.
    five = {q: (Tally(5, 5), base) for q, (_, base) in steady.items()} | {f"f{i}": (Tally(5, 4), Tally(10, 6)) for i in range(12)}
    five |= {f"w{i}": (Tally(5, 4), Tally(10, 10)) for i in range(3)}
    assert spread_in_doubt(five, decide(five).spread_p)
    assert more_runs(five) == []


def test_a_short_base_record_decides_by_the_guards_rule_confirmed_by_reruns() -> None:
    """An older baseline of one run: a question that passed it and fails every run here fell (a
    deterministic break still fails), confirmed by MIN_BASE_RUNS runs before the check stops."""
    verdict = decide({"q": (Tally(1, 0), Tally(1, 1)), "flaky": (Tally(3, 1), Tally(1, 1))})
    by_id = {q.id: q for q in verdict.questions}
    assert (by_id["q"].decision, by_id["q"].short) == ("failed", True)
    assert by_id["flaky"].decision == "cleared"  # its runs disagree: no break
    assert more_runs({"q": (Tally(1, 0), Tally(1, 1))}) == ["q"]
    assert more_runs({"q": (Tally(3, 0), Tally(1, 1))}) == []
