"""Per-dataset statistics of one metric: mean, spread, a seeded bootstrap CI, percentiles."""

from __future__ import annotations

import math
import zlib
from collections import Counter
from collections.abc import Sequence
from typing import Any

from agent_eval_action.models import MetricSummary, Score

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


def passes(value: float, threshold: float, direction: str) -> bool:
    """Whether a run's score meets a pass threshold: at least it (higher is better) or at most it (lower)."""
    return value <= threshold + 1e-9 if direction == "lower" else value >= threshold - 1e-9


def seed_for(*parts: str, base: int = 0) -> int:
    """A stable seed per (dataset, metric): reruns give the same CI, metrics don't share draws."""
    return (zlib.crc32("\x1f".join(parts).encode()) + base) % 2**32


def bootstrap_mean_ci(values: Sequence[float], seed: int, resamples: int = BOOTSTRAP_RESAMPLES) -> tuple[float, float] | None:
    """95% percentile-bootstrap interval of the mean; ``None`` with fewer than two values."""
    n = len(values)
    if n < 2:
        return None
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
    values: Sequence[float], reasons: Counter[str], *, direction: str, seed: int, percentiles: bool = False
) -> MetricSummary:
    """The summary of one metric's scored values; ``reasons`` counts the unscored ones by explanation
    (ties keep the order reasons were first counted in)."""
    mean = math.fsum(values) / len(values) if values else None
    # statistics.stdev computes in exact fractions: far too slow for thousands of values.
    stdev = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1)) if mean is not None and len(values) >= 2 else None
    summary = MetricSummary(
        mean=mean,
        n=len(values),
        unscored=sum(reasons.values()),
        stdev=stdev,
        ci95=bootstrap_mean_ci(values, seed),
        direction=direction,  # type: ignore[arg-type]
        unscored_reasons=dict(reasons.most_common()),
    )
    if percentiles and values:
        ordered = sorted(values)
        summary.p50, summary.p90, summary.max = _percentile(ordered, 0.5), _percentile(ordered, 0.9), ordered[-1]
    return summary
