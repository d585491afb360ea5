"""Every agreement measure against values computed independently: by hand on small tables,
and by a second library (scikit-learn) on generated ones."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score, confusion_matrix, precision_recall_fscore_support

from harness.agree import stats

# -- by hand ----------------------------------------------------------------------------------

# truth, pred (3 classes), accuracy, kappa: kappa = (po - pe) / (1 - pe), worked out by hand.
HAND = [
    # perfect agreement over two classes used: po 1, pe (2*2+2*2)/16 = 0.5 -> 1
    ([0, 0, 1, 1], [0, 0, 1, 1], 1.0, 1.0),
    # po 0.5; marginals truth (2,2), pred (2,2): pe 0.5 -> 0
    ([0, 0, 1, 1], [0, 1, 0, 1], 0.5, 0.0),
    # po 0.75; truth (3,1) pred (2,2): pe (3*2 + 1*2)/16 = 0.5 -> 0.5
    ([0, 0, 0, 1], [0, 0, 1, 1], 0.75, 0.5),
    # always wrong, symmetric: po 0, pe 0.5 -> -1
    ([0, 1, 0, 1], [1, 0, 1, 0], 0.0, -1.0),
]


@pytest.mark.parametrize(("truth", "pred", "acc", "kap"), HAND)
def test_accuracy_and_kappa_by_hand(
    truth: list[int], pred: list[int], acc: float, kap: float
) -> None:
    cm = stats.confusion(truth, pred, 3)
    assert stats.accuracy(cm) == pytest.approx(acc)
    assert stats.kappa(cm) == pytest.approx(kap)


def test_precision_recall_f1_by_hand() -> None:
    # class 2: tp 2, fp 1 (a 0 called 2), fn 1 (a 2 called 1)
    truth = [2, 2, 2, 0, 0, 1]
    pred = [2, 2, 1, 2, 0, 1]
    cm = stats.confusion(truth, pred, 3)
    assert stats.precision(cm, 2) == pytest.approx(2 / 3)
    assert stats.recall(cm, 2) == pytest.approx(2 / 3)
    assert stats.f1(cm, 2) == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    ("truth", "pred"),
    [
        ([0, 0, 0], [0, 0, 0]),  # a single class on both sides: κ is 0/0
        ([], []),  # empty
    ],
)
def test_undefined_measures_are_none(truth: list[int], pred: list[int]) -> None:
    cm = stats.confusion(truth, pred, 3)
    assert stats.kappa(cm) is None
    assert stats.precision(cm, 2) is None
    assert stats.recall(cm, 2) is None
    assert stats.f1(cm, 2) is None


def test_quadratic_kappa_by_hand() -> None:
    # two raters, 3 ordinal classes; w_ij = (i-j)^2. observed disagreement weight: one pair
    # 0 vs 2 (4) over n 4 -> sum w*o = 4; expected: marginals truth (2,0,2), pred (1,1,2) ...
    truth = [0, 0, 2, 2]
    pred = [0, 2, 2, 1]
    cm = stats.confusion(truth, pred, 3)
    expected = np.outer([2, 0, 2], [1, 1, 2]) / 4
    w = np.array([[(i - j) ** 2 for j in range(3)] for i in range(3)], dtype=float)
    by_hand = 1 - (4 * 1 + 1 * 1) / float((w * expected).sum())
    assert stats.kappa(cm, weights="quadratic") == pytest.approx(by_hand)


def test_wilson_by_hand() -> None:
    # 8 of 10: centre (8 + 1.96²/2) / (10 + 1.96²), half-width 1.96·sqrt(.8·.2/10 + 1.96²/400)
    # / (1 + 1.96²/10)
    z = 1.959963984540054
    p, n = 0.8, 10
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    e = stats.wilson(8, 10)
    assert e.value == pytest.approx(0.8)
    assert e.low == pytest.approx(centre - half)
    assert e.high == pytest.approx(centre + half)
    assert stats.wilson(0, 0).value is None


def test_rank_correlations_with_ties_and_constants() -> None:
    # Spearman with ties (average ranks): x ranks 1, 2.5, 2.5, 4; y ranks 1, 2, 3, 4
    x, y = [1, 2, 2, 3], [1, 2, 3, 4]
    rx, ry = np.array([1, 2.5, 2.5, 4]), np.array([1, 2, 3, 4])
    by_hand = float(np.corrcoef(rx, ry)[0, 1])
    assert stats.spearman(x, y) == pytest.approx(by_hand)
    # Kendall tau-b: concordant 5, discordant 0, ties in x 1: 5 / sqrt((6-1)*(6-0))
    assert stats.kendall(x, y) == pytest.approx(5 / math.sqrt(5 * 6))
    assert stats.spearman([3, 3, 3], [1, 2, 3]) is None  # constant ratings
    assert stats.kendall([1, 2, 3], [4, 4, 4]) is None
    assert stats.spearman([1], [1]) is None


def test_krippendorff_alpha_by_hand() -> None:
    # Two raters, interval data, three units all rated by both.
    # values 1,2 | 2,2 | 3,4. Interval alpha = 1 - D_o / D_e with pairable values n = 6.
    data = [[1, 2, 3], [2, 2, 4]]
    vals = [1, 2, 2, 2, 3, 4]
    n = len(vals)
    d_o = (
        sum((a - b) ** 2 * 2 for a, b in [(1, 2), (2, 2), (3, 4)]) / n
    )  # per unit: 2 pairs / (m-1)
    d_e = sum((a - b) ** 2 for a in vals for b in vals) / (n * (n - 1))
    assert stats.krippendorff_alpha(data, "interval") == pytest.approx(1 - d_o / d_e)
    assert stats.krippendorff_alpha([[1, 2, 3]], "ordinal") is None  # one rater
    assert stats.krippendorff_alpha([[1, None], [None, 2]], "ordinal") is None  # no unit twice
    assert stats.krippendorff_alpha([[3, 3], [3, 3]], "ordinal") is None  # one value only


def test_calibration_by_hand() -> None:
    bins, ece = stats.calibration([0.05, 0.15, 0.95, 1.0], [0.0, 1.0, 1.0, 1.0], bins=10)
    assert [b.n for b in bins] == [1, 1, 0, 0, 0, 0, 0, 0, 0, 2]
    assert bins[9].confidence == pytest.approx(0.975)
    # |0.05-0| + |0.15-1| + 2·|0.975-1|, over 4
    assert ece == pytest.approx((0.05 + 0.85 + 2 * 0.025) / 4)
    assert stats.calibration([], [])[1] is None


def test_bootstrap_is_deterministic_and_brackets_the_value() -> None:
    truth = [0, 1, 2, 0, 1, 2, 0, 0, 2, 1] * 5
    pred = [0, 1, 2, 0, 2, 2, 1, 0, 2, 1] * 5
    a = stats.matrix_estimate(truth, pred, 3, stats.kappa)
    b = stats.matrix_estimate(truth, pred, 3, stats.kappa)
    assert a == b
    assert a.low is not None and a.high is not None and a.value is not None
    assert a.low <= a.value <= a.high
    assert a.n == 50
    assert stats.matrix_estimate([0], [0], 3, stats.kappa).low is None  # one row: no interval


# -- against scikit-learn ---------------------------------------------------------------------

pairs = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)), min_size=1, max_size=60)


@pytest.mark.filterwarnings("ignore:.*cohen_kappa_score.*")
@settings(max_examples=150, deadline=None)
@given(pairs)
def test_matrix_measures_match_scikit_learn(rows: list[tuple[int, int]]) -> None:
    truth = [t for t, _ in rows]
    pred = [p for _, p in rows]
    cm = stats.confusion(truth, pred, 3)
    assert (cm == confusion_matrix(truth, pred, labels=[0, 1, 2])).all()
    assert stats.accuracy(cm) == pytest.approx(np.mean(np.array(truth) == np.array(pred)))
    ours = stats.kappa(cm)
    theirs = cohen_kappa_score(truth, pred, labels=[0, 1, 2])
    if ours is None:
        assert not math.isfinite(theirs) or len(set(truth) | set(pred)) == 1
    else:
        assert ours == pytest.approx(theirs)
    p, r, f, _ = precision_recall_fscore_support(
        truth,
        pred,
        labels=[2],
        zero_division=np.nan,  # type: ignore[arg-type]
    )
    for mine, sk in ((stats.precision(cm, 2), p[0]), (stats.recall(cm, 2), r[0])):
        assert (mine is None and math.isnan(sk)) or mine == pytest.approx(sk)
    mine_f1 = stats.f1(cm, 2)
    if mine_f1 is not None and math.isfinite(f[0]):
        assert mine_f1 == pytest.approx(f[0])


ordinal = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=2, max_size=40)


@pytest.mark.filterwarnings("ignore:.*cohen_kappa_score.*")
@settings(max_examples=150, deadline=None)
@given(ordinal)
def test_quadratic_kappa_matches_scikit_learn(rows: list[tuple[int, int]]) -> None:
    a = [x for x, _ in rows]
    b = [y for _, y in rows]
    ours = stats.kappa(stats.confusion(a, b, 6), weights="quadratic")
    theirs = cohen_kappa_score(a, b, labels=list(range(6)), weights="quadratic")
    if ours is None:
        assert not math.isfinite(theirs)
    else:
        assert ours == pytest.approx(theirs, abs=1e-9)


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["s1", "s2", "s3", "s4"]),
            st.sampled_from(["r1", "r2", "r3", "r4", "r5"]),
            st.integers(min_value=0, max_value=5),
            st.integers(min_value=0, max_value=5),
        ),
        max_size=30,
    ),
    st.booleans(),
)
def test_the_compact_alpha_table_gives_the_raters_by_sessions_alpha(
    rows: list[tuple[str, str, int, int]], with_judge: bool
) -> None:
    """Issue 31 §4: the α table holds each session's values stacked (size: the most ratings a
    session has), not raters × sessions; α is the same as the dense table's."""
    from harness.agree.compute import RatingRow, _alpha_table

    rating_rows = [RatingRow(s, r, "citationAccuracy", h, j) for s, r, h, j in rows]
    sessions = sorted({s for s, _, _, _ in rows})
    raters = sorted({r for _, r, _, _ in rows})
    dense: dict[str, list[float | None]] = {r: [None] * len(sessions) for r in raters}
    judge: list[float | None] = [None] * len(sessions)
    for s, r, h, j in rows:
        dense[r][sessions.index(s)] = float(h)
        judge[sessions.index(s)] = float(j)
    expected = [*dense.values(), *([judge] if with_judge else [])]
    compact = _alpha_table(rating_rows, with_judge)
    assert len(compact) <= max(len(raters), 1) + 1
    for level in ("ordinal", "interval"):
        want = stats.krippendorff_alpha(expected, level)  # type: ignore[arg-type]
        got = stats.krippendorff_alpha(compact, level)  # type: ignore[arg-type]
        assert (want is None) == (got is None)
        if want is not None and got is not None:
            assert got == pytest.approx(want, abs=1e-9)


def test_each_session_rated_by_a_different_worker_is_not_quadratic() -> None:
    """8,000 label lines, each by its own rater, made a dense 8,000 × 8,000 table (98.8 s,
    2.2 GB); the compact table has one row per rating of the most-rated session."""
    from harness.agree.compute import RatingRow, _alpha_table

    rows = [
        RatingRow(f"s{i // 2}", f"worker-{i}", "citationAccuracy", i % 6, (i + 1) % 6)
        for i in range(8000)
    ]
    table = _alpha_table(rows, with_judge=True)
    assert len(table) == 3 and len(table[0]) == 4000  # two workers and the judge a session
