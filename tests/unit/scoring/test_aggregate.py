from __future__ import annotations

import random
import statistics

import pytest

from agent_eval_action.models.scores import Score
from agent_eval_action.scoring import aggregate
from agent_eval_action.scoring.aggregate import bootstrap_mean_ci, seed_for, summarize


@pytest.fixture(autouse=True)
def _no_kept_intervals() -> None:
    """Every test draws its intervals: none kept from an earlier test (or under other constants)."""
    aggregate._kept_bootstrap.cache_clear()


def test_unscored_is_counted_not_averaged() -> None:
    scores = [
        Score(value=1.0),
        Score(value=0.0),
        Score(value=None, explanation="no reference"),
        Score(value=None, explanation="no reference"),
    ]
    summary = summarize(scores, direction="higher", seed=1)
    assert summary.mean == 0.5 and summary.n == 2 and summary.unscored == 2
    assert summary.unscored_reasons == {"no reference": 2}
    assert summary.stdev == pytest.approx(statistics.stdev([1.0, 0.0]))


def test_bootstrap_is_reproducible_and_covers_the_mean() -> None:
    rng = random.Random(3)
    values = [rng.random() for _ in range(50)]
    first = bootstrap_mean_ci(values, seed=7)
    aggregate._kept_bootstrap.cache_clear()
    assert first == bootstrap_mean_ci(values, seed=7)
    assert first is not None and first[0] < statistics.fmean(values) < first[1]


def test_bootstrap_edge_cases() -> None:
    assert bootstrap_mean_ci([1.0], seed=0) is None
    assert bootstrap_mean_ci([2.0, 2.0, 2.0], seed=0) == (2.0, 2.0)
    assert summarize([Score(value=None, explanation="x")], direction="higher", seed=0).mean is None


def test_large_input_resamples_in_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Value-by-value resampling of a sample too large for one block of draws: the blocks give
    exactly what one block would (the draws are the same, only the memory differs)."""
    import numpy as np

    from agent_eval_action.scoring import aggregate

    values = [float(v) for v in np.random.default_rng(5).lognormal(0.0, 1.0, 4000)]
    # What reaches the block path: too many distinct values for the multinomial draw, too few for
    # the binned one, and more draws than one block holds.
    assert len(set(values)) > aggregate._FEW_DISTINCT and len(values) <= aggregate._EXACT_MAX
    assert aggregate._BLOCK_CELLS // len(values) < aggregate.BOOTSTRAP_RESAMPLES
    ci = bootstrap_mean_ci(values, seed=0)
    assert ci is not None and ci[0] < statistics.fmean(values) < ci[1]
    monkeypatch.setattr(aggregate, "_BLOCK_CELLS", len(values) * aggregate.BOOTSTRAP_RESAMPLES)
    assert bootstrap_mean_ci(values, seed=0) == ci


def test_ci_coverage_close_to_95_percent() -> None:
    rng = random.Random(11)
    hits = 0
    trials = 200
    for t in range(trials):
        sample = [rng.gauss(0.7, 0.2) for _ in range(40)]
        ci = bootstrap_mean_ci(sample, seed=t, resamples=500)
        assert ci is not None
        hits += ci[0] <= 0.7 <= ci[1]
    assert 0.88 <= hits / trials <= 0.99


def test_percentiles_for_lower_is_better() -> None:
    summary = summarize([Score(value=float(v)) for v in range(1, 11)], direction="lower", seed=0, percentiles=True)
    assert summary.p50 == 5.5 and summary.max == 10 and summary.p90 == pytest.approx(9.1)


def test_seed_differs_per_metric() -> None:
    assert seed_for("d", "a") != seed_for("d", "b")
    assert seed_for("d", "a") == seed_for("d", "a")


def test_binned_bootstrap_of_a_large_sample_matches_the_exact_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above _EXACT_MAX values the middle is resampled in bins; on a heavy-tailed sample the
    interval must agree with value-by-value resampling to within the resampling noise."""
    import numpy as np

    from agent_eval_action.scoring import aggregate

    values = list(np.random.default_rng(7).lognormal(0.0, 1.2, 8000))
    binned = bootstrap_mean_ci(values, seed=3, resamples=10_000)
    assert binned == bootstrap_mean_ci(values[::-1], seed=3, resamples=10_000)  # order-free and seeded
    monkeypatch.setattr(aggregate, "_EXACT_MAX", 10**9)
    exact = bootstrap_mean_ci(values, seed=3, resamples=10_000)
    assert binned is not None and exact is not None
    width = exact[1] - exact[0]
    assert abs(binned[0] - exact[0]) < 0.04 * width
    assert abs(binned[1] - exact[1]) < 0.04 * width


def test_an_interval_given_again_for_the_same_values_is_the_one_drawn_for_them() -> None:
    """The intervals of up to 512 values are kept by their sorted values, seed and resamples: given
    again, in any order, it is what drawing gives, to the bit; a negative zero and a larger sample
    are drawn each time."""
    rng = random.Random(11)
    samples = [[float(rng.random() < 0.6) for _ in range(n)] for n in (2, 20, 300)]
    samples += [[round(rng.random(), 6) for _ in range(n)] for n in (3, 60, 512, 513)]
    samples += [[rng.choice([0.0, 0.5, 1.0, 2.5]) for _ in range(40)], [-0.0, -0.0, -0.0], [0.0, 0.0, 0.0], [-0.0, 0.0, 1.0]]
    samples += [[1, True, 0.5, 2], [float("nan"), 1.0, 2.0]]  # ints and bools as floats; a NaN
    for values in samples:
        for seed in (0, 7):
            drawn = repr(aggregate._bootstrap_drawn(values, seed, aggregate.BOOTSTRAP_RESAMPLES))
            kept_before = aggregate._kept_bootstrap.cache_info().hits
            assert repr(bootstrap_mean_ci(values, seed)) == drawn
            assert repr(bootstrap_mean_ci(list(reversed(values)), seed)) == drawn
            again = aggregate._kept_bootstrap.cache_info().hits - kept_before
            assert again == (0 if len(values) > 512 or any(str(v) == "-0.0" for v in values) else 1), values[:4]


def test_a_summary_after_prepare_imports_nothing() -> None:
    """What a summary imports on first use is imported by ``prepare`` (run while the agent runs):
    the summary after the run waits on no import. In a fresh interpreter: this one has them all."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from agent_eval_action.models.scores import Score\n"
        "from agent_eval_action.scoring import aggregate\n"
        "aggregate.prepare()\n"
        "before = set(sys.modules)\n"
        "scores = [Score(value=v) for v in (0.0, 1.0, 0.5, 0.25, 1.0, 0.75)]\n"
        "summary = aggregate.summarize(scores, direction='higher', percentiles=True, seed=aggregate.seed_for('d', 'm'))\n"
        "assert summary.ci95 is not None\n"
        "print(sorted(set(sys.modules) - before))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
