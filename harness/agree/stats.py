"""The agreement statistics, pure: arrays in, numbers out (no files, no models).

Rank correlations (Spearman's ρ, Kendall's τ-b, ties handled as scipy defines them), Wilson
intervals (scipy) and Krippendorff's α (the `krippendorff` package) come from well-kept
libraries. The confusion-matrix measures — accuracy, Cohen's κ (unweighted and quadratic),
precision, recall and F1 of one class — are their textbook formulas over the matrix, written
here in numpy because the bootstrap evaluates them a thousand times (scikit-learn's functions
validate their input on every call, ~1 ms each); tests check every one against scikit-learn.

A measure that is undefined on its data (κ when both sides use a single class, ρ of a
constant, α with no unit rated twice) is `None`, never 0 and never NaN.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from harness.agree.report import CalibrationBin, Estimate

BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 20261201  # fixed: the same labels and results give the same intervals
CALIBRATION_BINS = 10

Matrix = NDArray[np.float64]
Index = NDArray[np.intp]


def confusion(truth: ArrayLike, pred: ArrayLike, k: int) -> Matrix:
    """k×k counts: rows the human class, columns the judged class (both coded 0..k-1)."""
    t = np.asarray(truth, dtype=np.intp)
    p = np.asarray(pred, dtype=np.intp)
    return np.bincount(t * k + p, minlength=k * k).reshape(k, k).astype(np.float64)


def _safe(num: float, den: float) -> float | None:
    return None if den == 0 else num / den


def accuracy(cm: Matrix) -> float | None:
    return _safe(float(np.trace(cm)), float(cm.sum()))


def kappa(cm: Matrix, weights: str | None = None) -> float | None:
    """Cohen's κ over a confusion matrix; `weights="quadratic"` for ordinal classes."""
    n = float(cm.sum())
    if n == 0:
        return None
    k = cm.shape[0]
    if weights is None:
        w = 1.0 - np.eye(k)
    else:
        idx = np.arange(k, dtype=np.float64)
        w = (idx[:, None] - idx[None, :]) ** 2
    expected = np.outer(cm.sum(axis=1), cm.sum(axis=0)) / n
    den = float((w * expected).sum())
    if den == 0:
        return None
    return 1.0 - float((w * cm).sum()) / den


def precision(cm: Matrix, cls: int) -> float | None:
    return _safe(float(cm[cls, cls]), float(cm[:, cls].sum()))


def recall(cm: Matrix, cls: int) -> float | None:
    return _safe(float(cm[cls, cls]), float(cm[cls, :].sum()))


def f1(cm: Matrix, cls: int) -> float | None:
    """F1 of one class: 2·tp / (2·tp + fp + fn); undefined when the class is absent on both
    sides."""
    tp = float(cm[cls, cls])
    return _safe(2 * tp, 2 * tp + float(cm[:, cls].sum() - tp) + float(cm[cls, :].sum() - tp))


def bootstrap(
    statistic: Callable[[Index], float | None],
    n: int,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float | None, float | None]:
    """Percentile 95% interval of `statistic` over `resamples` resamples of the n rows (with
    replacement). Resamples where the measure is undefined are left out; with fewer than half
    defined, there is no interval."""
    if n < 2:
        return None, None
    rng = np.random.default_rng(seed)
    values: list[float] = []
    for _ in range(resamples):
        v = statistic(rng.integers(0, n, size=n))
        if v is not None and math.isfinite(v):
            values.append(v)
    if len(values) < resamples / 2:
        return None, None
    lo, hi = np.percentile(values, [2.5, 97.5])
    return float(lo), float(hi)


def matrix_estimate(
    truth: Sequence[int], pred: Sequence[int], k: int, measure: Callable[[Matrix], float | None]
) -> Estimate:
    """A confusion-matrix measure with its bootstrap interval over the rows."""
    t = np.asarray(truth, dtype=np.intp)
    p = np.asarray(pred, dtype=np.intp)
    value = measure(confusion(t, p, k)) if len(t) else None
    lo, hi = bootstrap(lambda i: measure(confusion(t[i], p[i], k)), len(t))
    return Estimate(value=value, low=lo, high=hi, n=len(t))


def _finite(v: float) -> float | None:
    return float(v) if math.isfinite(v) else None


def _rank(
    fn: Callable[..., object], x: NDArray[np.float64], y: NDArray[np.float64]
) -> float | None:
    if len(x) < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return None  # a constant side: no ranking to correlate
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _finite(float(fn(x, y)[0]))  # type: ignore[index]


def spearman(x: ArrayLike, y: ArrayLike) -> float | None:
    from scipy.stats import spearmanr  # type: ignore[import-untyped]

    return _rank(spearmanr, np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))


def kendall(x: ArrayLike, y: ArrayLike) -> float | None:
    """Kendall's τ-b (ties on either side corrected)."""
    from scipy.stats import kendalltau

    return _rank(kendalltau, np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))


def paired_estimate(
    x: Sequence[float],
    y: Sequence[float],
    measure: Callable[[NDArray[np.float64], NDArray[np.float64]], float | None],
) -> Estimate:
    xa = np.asarray(x, dtype=np.float64)
    ya = np.asarray(y, dtype=np.float64)
    value = measure(xa, ya) if len(xa) else None
    lo, hi = bootstrap(lambda i: measure(xa[i], ya[i]), len(xa))
    return Estimate(value=value, low=lo, high=hi, n=len(xa))


def mean_absolute_error(x: NDArray[np.float64], y: NDArray[np.float64]) -> float | None:
    return float(np.mean(np.abs(x - y))) if len(x) else None


def within(limit: float) -> Callable[[NDArray[np.float64], NDArray[np.float64]], float | None]:
    """The share of pairs at most `limit` apart (0: exact agreement; 1: within one)."""

    def share(x: NDArray[np.float64], y: NDArray[np.float64]) -> float | None:
        return float(np.mean(np.abs(x - y) <= limit)) if len(x) else None

    return share


def wilson(k: int, n: int) -> Estimate:
    """k of n, with the Wilson score 95% interval."""
    if n == 0:
        return Estimate(value=None)
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return Estimate(value=k / n, low=float(ci.low), high=float(ci.high), n=n)


def krippendorff_alpha(
    data: Sequence[Sequence[float | None]], level: Literal["ordinal", "interval"]
) -> float | None:
    """Krippendorff's α over a raters × units table (None: not rated). Undefined (None) when
    no unit has two ratings or every rating is the same value."""
    table = np.array(
        [[np.nan if v is None else float(v) for v in row] for row in data], dtype=np.float64
    )
    if table.ndim != 2 or table.shape[0] < 2:
        return None
    paired = np.sum(~np.isnan(table), axis=0) >= 2
    if not paired.any():
        return None
    values = table[:, paired]
    values = values[~np.isnan(values)]
    if np.all(values == values[0]):
        return None  # one value throughout: α is 0/0
    import krippendorff

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = krippendorff.alpha(reliability_data=table, level_of_measurement=level)
    return _finite(float(value))


def calibration(
    confidence: Sequence[float], observed: Sequence[float], bins: int = CALIBRATION_BINS
) -> tuple[list[CalibrationBin], float | None]:
    """Equal-width bins over [0, 1] and the expected calibration error: Σ (n_b / N) ·
    |mean confidence_b − mean observed_b|. A confidence of exactly 1 falls in the last bin."""
    p = np.clip(np.asarray(confidence, dtype=np.float64), 0.0, 1.0)
    y = np.asarray(observed, dtype=np.float64)
    which = np.minimum((p * bins).astype(np.intp), bins - 1)
    out: list[CalibrationBin] = []
    ece = 0.0
    for b in range(bins):
        mask = which == b
        count = int(mask.sum())
        conf = float(p[mask].mean()) if count else None
        obs = float(y[mask].mean()) if count else None
        if conf is not None and obs is not None:
            ece += count / len(p) * abs(conf - obs)
        out.append(
            CalibrationBin(
                low=b / bins, high=(b + 1) / bins, n=count, confidence=conf, observed=obs
            )
        )
    return out, (ece if len(p) else None)


def spread(values: Sequence[float]) -> tuple[float, float | None]:
    """(range, sample standard deviation) of one session's samples on one dimension."""
    a = np.asarray(values, dtype=np.float64)
    rng = float(a.max() - a.min()) if len(a) else 0.0
    std = float(np.std(a, ddof=1)) if len(a) >= 2 else None
    return rng, std


__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "BOOTSTRAP_SEED",
    "CALIBRATION_BINS",
    "CalibrationBin",
    "Estimate",
    "accuracy",
    "bootstrap",
    "calibration",
    "confusion",
    "f1",
    "kappa",
    "kendall",
    "krippendorff_alpha",
    "matrix_estimate",
    "mean_absolute_error",
    "paired_estimate",
    "precision",
    "recall",
    "spearman",
    "spread",
    "wilson",
    "within",
]
