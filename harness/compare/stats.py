"""The arithmetic of `judge compare`, pure: arrays in, numbers out.

- The paired bootstrap: `numpy.random.default_rng(SEED).integers(0, n, size=(RESAMPLES, n))`
  draws RESAMPLES resamples of the n pairs (sessions, with replacement; drawn CHUNK rows at
  a time from the one generator, which gives the same rows); a figure's
  interval is the 2.5th and 97.5th percentile (numpy's default, linear) of the figure over
  them. Every figure starts again from SEED, so it does not depend on which others were
  computed. Fewer than 2 pairs: no interval.
- A share or a rate over claims is a ratio of sums over the resampled *sessions* (the
  claims of one session are not independent); a resample whose claims sum to 0 is left
  out, and with fewer than half defined there is no interval.
- The Wilcoxon signed-rank test is SciPy's (`scipy.stats.wilcoxon`, two-sided,
  `zero_method="wilcox"`: pairs with no difference are dropped before ranking), with
  no p-value when every difference is 0.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

SEED = 20261206
RESAMPLES = 2000
LEVEL = 0.95
NOISE_Z = 1.96  # the judge's noise band: ±1.96 standard errors of the mean difference

Floats = NDArray[np.float64]


CHUNK = 250  # resamples drawn and used at a time: memory stays flat in n (same stream)


def resample_index(n: int, resamples: int = RESAMPLES, seed: int = SEED) -> NDArray[np.intp]:
    """The RESAMPLES × n indices of the bootstrap (one row per resample)."""
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def resample_chunks(n: int) -> Iterator[NDArray[np.intp]]:
    """`resample_index(n)`, CHUNK rows at a time from one generator: the same rows (numpy
    draws them in order; a test holds this), without holding RESAMPLES × n at once."""
    rng = np.random.default_rng(SEED)
    for _ in range(RESAMPLES // CHUNK):
        yield rng.integers(0, n, size=(CHUNK, n))


def _percentiles(values: Floats) -> tuple[float, float]:
    lo, hi = np.percentile(values, [100 * (1 - LEVEL) / 2, 100 * (1 + LEVEL) / 2])
    return float(lo), float(hi)


def mean_interval(diffs: Floats) -> tuple[float | None, float | None]:
    """The paired bootstrap interval of the mean difference."""
    n = len(diffs)
    if n < 2:
        return None, None
    d = np.asarray(diffs, dtype=np.float64)
    means = np.concatenate([d[idx].mean(axis=1) for idx in resample_chunks(n)])
    return _percentiles(means)


def ratio_difference(
    count_a: Floats, total_a: Floats, count_b: Floats, total_b: Floats
) -> tuple[float | None, float | None, float | None, float | None, float | None]:
    """share A, share B (ratios of sums), B − A, and its session-bootstrap interval."""
    n = len(count_a)
    ta, tb = float(total_a.sum()), float(total_b.sum())
    share_a = float(count_a.sum()) / ta if ta else None
    share_b = float(count_b.sum()) / tb if tb else None
    diff = share_b - share_a if share_a is not None and share_b is not None else None
    if n < 2 or diff is None:
        return share_a, share_b, diff, None, None
    parts = []
    with np.errstate(invalid="ignore", divide="ignore"):
        for idx in resample_chunks(n):
            b = count_b[idx].sum(axis=1) / total_b[idx].sum(axis=1)
            parts.append(b - count_a[idx].sum(axis=1) / total_a[idx].sum(axis=1))
    values = np.concatenate(parts)
    values = values[np.isfinite(values)]
    if len(values) < RESAMPLES / 2:
        return share_a, share_b, diff, None, None
    lo, hi = _percentiles(values)
    return share_a, share_b, diff, lo, hi


@dataclass(frozen=True, slots=True)
class SignedRank:
    statistic: float | None
    p: float | None
    nonzero: int
    note: str | None


def signed_rank(diffs: Floats) -> SignedRank:
    """SciPy's Wilcoxon signed-rank test of the paired differences (see the module)."""
    from scipy.stats import wilcoxon  # type: ignore[import-untyped]

    nonzero = int(np.count_nonzero(diffs))
    if nonzero == 0:
        why = "no pairs" if len(diffs) == 0 else "every pair is equal: nothing to test"
        return SignedRank(None, None, 0, why)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SciPy warns that small samples are small
        result = wilcoxon(diffs, zero_method="wilcox", alternative="two-sided")
    stat, p = float(result.statistic), float(result.pvalue)
    note: str | None = None
    if nonzero < 6:
        note = (
            f"{nonzero} non-zero difference(s): below 6, no two-sided p-value can fall under 0.05"
        )
    return SignedRank(
        stat if math.isfinite(stat) else None, p if math.isfinite(p) else None, nonzero, note
    )


def pooled_sd(groups: list[list[float]]) -> float | None:
    """The judge's own spread: the pooled within-session standard deviation of repeated
    judgments (each group one session's samples; groups under 2 give nothing)."""
    df = 0
    total = 0.0
    for g in groups:
        if len(g) >= 2:
            arr = np.asarray(g, dtype=np.float64)
            total += float(((arr - arr.mean()) ** 2).sum())
            df += len(g) - 1
    return math.sqrt(total / df) if df else None


__all__ = [
    "LEVEL",
    "NOISE_Z",
    "RESAMPLES",
    "SEED",
    "SignedRank",
    "mean_interval",
    "pooled_sd",
    "ratio_difference",
    "resample_chunks",
    "resample_index",
    "signed_rank",
]
