"""Per-dataset statistics of one metric: mean, spread, a seeded bootstrap CI, percentiles."""

from __future__ import annotations

import functools
import math
import sys
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, cast

from agent_eval_action.models.results import QuestionResult
from agent_eval_action.models.scores import MetricSummary, Score

BOOTSTRAP_RESAMPLES = 2000
# Resample in blocks so memory stays bounded for large datasets (n * block integers at a time).
_BLOCK_CELLS = 2_000_000
# Below this many distinct values (rates, 0/1 matches) the bootstrap is drawn per distinct value.
_FEW_DISTINCT = 64
# Above this many values (latencies, tokens of a large table) the middle of the sorted sample is
# resampled in equal-count bins, the extremes value by value: O(resamples * bins), not * n.
_EXACT_MAX = 5000
_EXACT_TAIL = 64
_MIDDLE_BINS = 384
# Values past this magnitude are summarized scaled down by a power of two, which is exact: their
# sums, squares and differences would overflow to infinity (two scores of 1e308). A figure whose
# true value is past the float range (the spread of -1e308 and 1e308) is kept at the largest float.
_LARGE = 2.0**500


def prepare() -> None:
    """What a summary imports on first use (numpy's random generators, and the masked arrays
    ``numpy.unique`` asks about: 12 ms), imported ahead: :meth:`Scorer.prepare` calls it from a
    thread while the agent runs, so a run's summaries do not wait on it after the run."""
    import numpy.ma
    import numpy.random  # noqa: F401


def scale_of(values: Iterable[float]) -> int:
    """The power of two to divide ``values`` by so that no sum or difference of them overflows (0: none)."""
    values = values if isinstance(values, list | tuple) else list(values)
    if not values:
        return 0
    # The largest magnitude as two passes of C, not a call of abs() a value (the same for finite values).
    top = max(max(values), -min(values))
    return math.frexp(top)[1] if top > _LARGE else 0


def scaled(value: float, k: int) -> float:
    return math.ldexp(value, -k) if k else value


def unscaled(value: float, k: int) -> float:
    """``value`` scaled back up; past the float range it stays at the largest float, with its sign."""
    if not k:
        return value
    try:
        return math.ldexp(value, k)
    except OverflowError:
        return math.copysign(sys.float_info.max, value)


def mean_of(values: Sequence[float]) -> float:
    """The mean, which cannot overflow however large the values (``values`` is not empty)."""
    k = scale_of(values)
    return unscaled(math.fsum(scaled(v, k) for v in values) / len(values), k)


def difference(a: float, b: float) -> float:
    """``a - b``, kept at the largest float when it is past the float range."""
    d = a - b
    return d if math.isfinite(d) else math.copysign(sys.float_info.max, d)


def passes(value: float, threshold: float, direction: str) -> bool:
    """Whether a run's score meets a pass threshold: at least it (higher is better) or at most it (lower)."""
    bound, at_most = pass_bound(threshold, direction)
    return value <= bound if at_most else value >= bound


def pass_bound(threshold: float, direction: str) -> tuple[float, bool]:
    """What :func:`passes` compares a score with (the threshold, give or take 1e-9 of rounding)
    and whether a score at most it passes (lower is better), for a caller judging many scores."""
    return (threshold + 1e-9, True) if direction == "lower" else (threshold - 1e-9, False)


def missed_thresholds(question: QuestionResult, summary: dict[str, MetricSummary], fallback: dict[str, float] | None = None) -> list[str]:
    """The metrics whose pass threshold the run ``question`` missed, in its scores' order, judged as
    the dataset's pass rate is: with the threshold and direction ``summary`` records (``fallback``:
    thresholds for metrics whose summary records none, as results written before it did)."""
    return missed_limits(question, pass_limits(summary, fallback))


def pass_limits(summary: dict[str, MetricSummary], fallback: dict[str, float] | None = None) -> dict[str, tuple[float, str]]:
    """Metric -> (pass threshold, direction) as :func:`missed_thresholds` judges them: read once
    for a dataset's runs, not once a run and score (2,000 runs of 34 scores each)."""
    limits: dict[str, tuple[float, str]] = {
        name: (threshold, summary[name].direction if name in summary else "higher") for name, threshold in (fallback or {}).items()
    }
    limits.update({name: (s.pass_threshold, s.direction) for name, s in summary.items() if s.pass_threshold is not None})
    return limits


def missed_limits(question: QuestionResult, limits: dict[str, tuple[float, str]]) -> list[str]:
    """The metrics of ``limits`` (:func:`pass_limits`) whose threshold the run missed, in its scores' order."""
    if not limits:
        return []
    failed = []
    for name, score in question.scores.items():
        limit = limits.get(name)
        if limit is not None and score.value is not None and not passes(score.value, *limit):
            failed.append(name)
    return failed


def poisson_tail(count: int, expected: float) -> float:
    """P(N >= count) for N ~ Poisson(expected): how likely at least ``count`` chance events are."""
    term = total = math.exp(-expected)
    for i in range(1, count):
        term *= expected / i
        total += term
    return max(0.0, 1.0 - total) if count > 0 else 1.0


def seed_for(*parts: str, base: int = 0) -> int:
    """A stable seed per (dataset, metric): reruns give the same CI, metrics don't share draws."""
    return (zlib.crc32("\x1f".join(parts).encode()) + base) % 2**32


def bootstrap_mean_ci(values: Sequence[float], seed: int, resamples: int = BOOTSTRAP_RESAMPLES) -> tuple[float, float] | None:
    """95% percentile-bootstrap interval of the mean; ``None`` with fewer than two values."""
    k = scale_of(values)
    if k:
        ci = _bootstrap_ci([scaled(v, k) for v in values], seed, resamples)
        return None if ci is None else (unscaled(ci[0], k), unscaled(ci[1], k))
    return _bootstrap_ci(values, seed, resamples)


def _bootstrap_ci(values: Sequence[float], seed: int, resamples: int = BOOTSTRAP_RESAMPLES) -> tuple[float, float] | None:
    """:func:`bootstrap_mean_ci` of values that cannot overflow (scaled already, where they could).
    The interval is a function of the sorted values (as floats), the seed and the number of
    resamples only: one of at most :data:`_KEPT_VALUES` values is kept (the last
    :data:`_KEPT_INTERVALS`) and given again to a summary of the same values in this process (a
    baseline's and then the check's of an unchanged deterministic metric, base mode's two sides, a
    library user's repeated evaluations)."""
    n = len(values)
    if n < 2:
        return None
    if n > _KEPT_VALUES:
        return _bootstrap_drawn(values, seed, resamples)
    import numpy as np

    data = np.sort(np.asarray(values, dtype=float))
    # A negative zero beside zeros is the one value whose place in the input can show in the
    # interval (numpy's sort leaves equal values in no set order, and -0.0 sums to -0.0): not kept.
    if np.any(np.signbit(data) & (data == 0)):
        return _bootstrap_drawn(values, seed, resamples)
    return _kept_bootstrap(data.tobytes(), seed, resamples)


# The intervals kept, by their sorted values' bytes: at most this many values each (4 KB), and how many.
_KEPT_VALUES = 512
_KEPT_INTERVALS = 1024


@functools.lru_cache(maxsize=_KEPT_INTERVALS)
def _kept_bootstrap(values: bytes, seed: int, resamples: int) -> tuple[float, float] | None:
    import numpy as np

    return _bootstrap_drawn(cast("Sequence[float]", np.frombuffer(values, dtype=float)), seed, resamples)


def _bootstrap_drawn(values: Sequence[float], seed: int, resamples: int) -> tuple[float, float] | None:
    n = len(values)
    import numpy as np

    # Sorted: the interval must not depend on the order questions came in (shards merge in any order).
    data = np.sort(np.asarray(values, dtype=float))
    if np.all(data == data[0]):
        return (float(data[0]), float(data[0]))
    rng = np.random.default_rng(seed)
    distinct, counts = np.unique(data, return_counts=True)
    if len(distinct) <= _FEW_DISTINCT:
        # Resampling n items with replacement draws each distinct value a multinomial number
        # of times: the same distribution of means, in O(resamples * distinct) instead of O(resamples * n).
        means = rng.multinomial(n, counts / n, size=resamples) @ distinct / n
    elif n > _EXACT_MAX:
        # The same draw over bins of neighbouring sorted values, each standing for its mean. What
        # is lost is the spread inside a bin: about 1e-5 of the variance in the middle, none in
        # the tails, which stay exact; far below the resampling's own noise (20,000 values: 0.4 s -> 0.05 s).
        values, weights = _binned(data)
        means = rng.multinomial(n, weights / n, size=resamples) @ values / n
    else:
        block = max(1, min(resamples, _BLOCK_CELLS // n))
        means = np.empty(resamples)
        for start in range(0, resamples, block):
            stop = min(start + block, resamples)
            means[start:stop] = data[rng.integers(0, n, size=(stop - start, n), dtype=np.int32)].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return (float(low), float(high))


def paired_runs_ci(
    now: Sequence[Sequence[float]], before: Sequence[Sequence[float]], seed: int, resamples: int = BOOTSTRAP_RESAMPLES
) -> tuple[float, float] | None:
    """95% two-level bootstrap interval of the mean paired difference: ``now[i]`` and ``before[i]``
    are question i's run scores on each side (values that cannot overflow: scaled by the caller).

    Each resample draws the questions with replacement and, for each question drawn, its runs on
    each side with replacement; its difference is the mean of the drawn runs now minus the mean of
    the drawn runs before. A question whose runs disagree thus brings its own spread into the
    interval, which a question-level bootstrap of per-question means cannot see. When no question's
    runs disagree on either side the run draws change nothing, and this is exactly
    :func:`bootstrap_mean_ci` of the per-question differences (same draws, same interval).
    """
    import numpy as np

    n = len(now)
    diffs = [math.fsum(a) / len(a) - math.fsum(b) / len(b) for a, b in zip(now, before, strict=True)]
    varying = np.array([max(a) > min(a) or max(b) > min(b) for a, b in zip(now, before, strict=True)], dtype=bool)
    if not varying.any():
        return bootstrap_mean_ci(diffs, seed, resamples)
    # Questions in a fixed order and runs sorted: the interval must not depend on the order shards
    # or runs came in. Runs are padded to the widest question; only the first k_i of row i count.
    order = sorted(range(n), key=lambda i: (diffs[i], sorted(now[i]), sorted(before[i])))
    fixed = np.array([diffs[i] for i in order])
    varying = varying[order]
    sides = [_padded([sorted(now[i]) for i in order]), _padded([sorted(before[i]) for i in order])]
    rng = np.random.default_rng(seed)
    widest = max(values.shape[1] for values, _ in sides)
    block = max(1, min(resamples, _BLOCK_CELLS // (n * widest)))
    means = np.empty(resamples)
    for start in range(0, resamples, block):
        stop = min(start + block, resamples)
        picks = rng.integers(0, n, size=(stop - start, n), dtype=np.int32)
        drawn = fixed[picks]
        # Only the picked questions whose runs disagree need their runs drawn: the rest have one mean.
        where = varying[picks]
        chosen = picks[where]
        inner = [_drawn_run_means(values, counts, chosen, rng) for values, counts in sides]
        drawn[where] = inner[0] - inner[1]
        means[start:stop] = drawn.mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return (float(low), float(high))


def _padded(rows: list[list[float]]) -> tuple[Any, Any]:
    """Ragged rows -> (a zero-padded matrix, each row's length)."""
    import numpy as np

    counts = np.array([len(r) for r in rows], dtype=np.int64)
    values = np.zeros((len(rows), int(counts.max())))
    for i, row in enumerate(rows):
        values[i, : len(row)] = row
    return values, counts


def _drawn_run_means(values: Any, counts: Any, chosen: Any, rng: Any) -> Any:
    """For each question index in ``chosen``, the mean of its runs drawn with replacement."""
    import numpy as np

    width = values.shape[1]
    flat = values.ravel()
    if counts.min() == width:  # every question has the same number of runs (the usual case): no padding to skip
        picks = rng.integers(0, width, size=(len(chosen), width), dtype=np.int32)
        picks += (chosen * width)[:, None].astype(np.int32)
        return flat[picks].mean(axis=1)
    k = counts[chosen]
    picks = (rng.random((len(chosen), width)) * k[:, None]).astype(np.int64)
    used = np.arange(width)[None, :] < k[:, None]
    return np.where(used, flat[picks + (chosen * width)[:, None]], 0.0).sum(axis=1) / k


def _binned(data: Any) -> tuple[Any, Any]:
    """Sorted values -> (representative values, how many each stands for)."""
    import numpy as np

    n = len(data)
    middle = data[_EXACT_TAIL : n - _EXACT_TAIL]
    starts = np.linspace(0, len(middle), _MIDDLE_BINS + 1).astype(np.int64)[:-1]
    sizes = np.diff(np.append(starts, len(middle)))
    means = np.add.reduceat(middle, starts) / sizes
    ones = np.ones(_EXACT_TAIL)
    return np.concatenate([data[:_EXACT_TAIL], means, data[n - _EXACT_TAIL :]]), np.concatenate([ones, sizes, ones])


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    # Linear interpolation between closest ranks (numpy's default), without importing numpy.
    position = (len(sorted_values) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def summarize(scores: Sequence[Score], *, direction: str, seed: int, percentiles: bool = False) -> MetricSummary:
    values = [s.value for s in scores if s.value is not None]
    reasons = Counter(s.explanation or "unscored" for s in scores if s.value is None)
    return summarize_values(values, reasons, direction=direction, seed=seed, percentiles=percentiles)


def summarize_values(
    values: Sequence[float], reasons: Counter[str], *, direction: str, seed: int, percentiles: bool = False, interval: bool = True
) -> MetricSummary:
    """The summary of one metric's scored values; ``reasons`` counts the unscored ones by explanation
    (ties keep the order reasons were first counted in). ``interval=False``: no ``ci95`` (its
    bootstrap is most of a summary's cost), for a summary only read for its other figures;
    :func:`bootstrap_mean_ci` of the same values and seed gives it later, the same."""
    k = scale_of(values)
    figures = _figures([scaled(v, k) for v in values] if k else values, seed, percentiles, interval)
    if k:
        figures = {name: None if v is None else unscaled(v, k) for name, v in figures.items()}
    low, high = figures["ci_low"], figures["ci_high"]
    return MetricSummary(
        mean=figures["mean"],
        n=len(values),
        unscored=sum(reasons.values()),
        stdev=figures["stdev"],
        ci95=None if low is None or high is None else (low, high),
        direction=direction,  # type: ignore[arg-type]
        unscored_reasons=dict(reasons.most_common()),
        p50=figures.get("p50"),
        p90=figures.get("p90"),
        max=figures.get("max"),
    )


def _figures(values: Sequence[float], seed: int, percentiles: bool, interval: bool) -> dict[str, float | None]:
    """Mean, spread, CI (with ``interval``) and (with ``percentiles``) p50, p90 and max of values that cannot overflow."""
    mean = math.fsum(values) / len(values) if values else None
    # statistics.stdev computes in exact fractions: far too slow for thousands of values.
    stdev = math.sqrt(math.fsum([(v - mean) ** 2 for v in values]) / (len(values) - 1)) if mean is not None and len(values) >= 2 else None
    ci = _bootstrap_ci(values, seed) if interval else None  # values that cannot overflow: no second look at their scale
    figures = {"mean": mean, "stdev": stdev, "ci_low": ci and ci[0], "ci_high": ci and ci[1]}
    if percentiles and values:
        ordered = sorted(values)
        figures.update(p50=_percentile(ordered, 0.5), p90=_percentile(ordered, 0.9), max=ordered[-1])
    return figures
