"""From paired rows to the agreement report, pure (`harness.agree.collect` does the reading).

A claim row is one person's support label beside the audit's verdict for that claim; a
rating row is one person's score on one dimension beside the judge's. Several raters of one
claim or session give several rows. Intervals resample rows.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from harness.agree import stats
from harness.agree.report import (
    ClaimAgreement,
    DimensionAgreement,
    Estimate,
    ProblemAgreement,
    SampleSpread,
    SelfAgreement,
    Unsettled,
)
from harness.contract.rubric import DIMENSIONS, UNKNOWN

# Human labels and the audit's verdicts, in matrix order: partial ↔ uncertain.
CLASSES = ("supported", "partial", "unsupported")
VERDICT_CLASS = {"supported": 0, "uncertain": 1, "unsupported": 2}
HUMAN_CLASS = {"supported": 0, "partial": 1, "unsupported": 2}
HUMAN_SUPPORT = {"supported": 1.0, "partial": 0.5, "unsupported": 0.0}
UNSUPPORTED = 2
UNSETTLED_RANGE = 2  # samples this far apart on a dimension: the judge cannot make up its mind

Score = int | str


@dataclass(frozen=True, slots=True)
class ClaimRow:
    session: str
    claim_id: str
    rater: str
    human: str  # supported | partial | unsupported
    verdict: str  # the audit's: supported | uncertain | unsupported | error | unchecked
    problems: tuple[str, ...] = ()
    confidence: float | None = None  # the engine's probability that the claim is supported


@dataclass(frozen=True, slots=True)
class RatingRow:
    session: str
    rater: str
    dimension: str
    human: Score
    judge: Score


@dataclass(slots=True)
class SampleSet:
    """Each session's samples: a list of score dicts (dimension → score)."""

    by_session: dict[str, list[dict[str, Score]]] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)


def claim_agreement(rows: Sequence[ClaimRow]) -> ClaimAgreement | None:
    judged = [r for r in rows if r.verdict in VERDICT_CLASS]
    no_verdict: dict[str, int] = defaultdict(int)
    for r in rows:
        if r.verdict not in VERDICT_CLASS:
            no_verdict[r.verdict] += 1
    if not rows:
        return None
    truth = [HUMAN_CLASS[r.human] for r in judged]
    pred = [VERDICT_CLASS[r.verdict] for r in judged]
    k = len(CLASSES)
    cm = stats.confusion(truth, pred, k)

    def est(measure: Callable[[stats.Matrix], float | None]) -> Estimate:
        return stats.matrix_estimate(truth, pred, k, measure)

    by_problem: list[ProblemAgreement] = []
    checks = sorted({p for r in rows for p in r.problems})
    for check in checks:
        having = [r for r in rows if check in r.problems]
        counts = {c: sum(1 for r in having if r.human == c) for c in CLASSES}
        by_problem.append(
            ProblemAgreement(
                check=check,
                claims=len(having),
                humanUnsupported=counts["unsupported"],
                humanPartial=counts["partial"],
                humanSupported=counts["supported"],
                rejectedRate=stats.wilson(counts["unsupported"], len(having)),
            )
        )
    confident = [r for r in rows if r.confidence is not None]
    bins, ece = stats.calibration(
        [float(r.confidence) for r in confident if r.confidence is not None],
        [HUMAN_SUPPORT[r.human] for r in confident],
    )
    return ClaimAgreement(
        classes=list(CLASSES),
        confusion=[[int(v) for v in row] for row in cm],
        rows=len(judged),
        noVerdict=dict(sorted(no_verdict.items())),
        accuracy=est(stats.accuracy),
        kappa=est(stats.kappa),
        unsupported={
            "precision": est(lambda m: stats.precision(m, UNSUPPORTED)),
            "recall": est(lambda m: stats.recall(m, UNSUPPORTED)),
            "f1": est(lambda m: stats.f1(m, UNSUPPORTED)),
        },
        byProblem=by_problem,
        calibration=bins,
        ece=ece,
        calibrated=len(confident),
    )


def _qwk(x: NDArray[np.float64], y: NDArray[np.float64]) -> float | None:
    return stats.kappa(stats.confusion(x.astype(int), y.astype(int), 6), weights="quadratic")


def _alpha_table(rows: Sequence[RatingRow], with_judge: bool) -> list[list[float | None]]:
    """The values of each session (a unit) stacked in rows, one column a session: each
    rater's score (a rater's last line for a session wins), then the judge's. Krippendorff's
    α reads only which values share a unit, not who gave them, so this equals the raters ×
    sessions table in α, at the size of the most ratings one session has: a dense table of
    8,000 raters who each rated one session was 8,000 × 8,000 cells."""
    units: dict[str, dict[str, float]] = {}  # session -> rater -> score
    judge: dict[str, float] = {}
    for r in rows:
        scores = units.setdefault(r.session, {})
        if isinstance(r.human, int):
            scores[r.rater] = float(r.human)
        if isinstance(r.judge, int):
            judge[r.session] = float(r.judge)
    columns = [
        [*scores.values(), *([judge[s]] if with_judge and s in judge else [])]
        for s, scores in sorted(units.items())
    ]
    depth = max((len(c) for c in columns), default=0)
    return [[c[i] if i < len(c) else None for c in columns] for i in range(depth)]


def dimension_agreement(dimension: str, rows: Sequence[RatingRow]) -> DimensionAgreement:
    both = [r for r in rows if isinstance(r.human, int) and isinstance(r.judge, int)]
    human = [float(r.human) for r in both]
    judge = [float(r.judge) for r in both]

    def est(
        measure: Callable[[NDArray[np.float64], NDArray[np.float64]], float | None],
    ) -> Estimate:
        return stats.paired_estimate(human, judge, measure)

    humans_only = _alpha_table(rows, with_judge=False)
    rated_twice = any(
        sum(v is not None for v in col) >= 2 for col in zip(*humans_only, strict=True)
    )
    return DimensionAgreement(
        dimension=dimension,
        rows=len(both),
        spearman=est(lambda a, b: stats.spearman(a, b)),
        kendall=est(lambda a, b: stats.kendall(a, b)),
        mae=est(stats.mean_absolute_error),
        exact=est(stats.within(0)),
        withinOne=est(stats.within(1)),
        qwk=est(_qwk),
        judgeUnknown=sum(1 for r in rows if r.judge == UNKNOWN and isinstance(r.human, int)),
        humanUnknown=sum(1 for r in rows if r.human == UNKNOWN and isinstance(r.judge, int)),
        bothUnknown=sum(1 for r in rows if r.human == UNKNOWN and r.judge == UNKNOWN),
        humanAlpha=stats.krippendorff_alpha(humans_only, "ordinal") if rated_twice else None,
        withJudgeAlpha=stats.krippendorff_alpha(_alpha_table(rows, True), "ordinal"),
        pairs=list(zip(human, judge, strict=True)),
    )


def score_agreement(rows: Sequence[RatingRow]) -> list[DimensionAgreement]:
    by_dim: dict[str, list[RatingRow]] = defaultdict(list)
    for r in rows:
        by_dim[r.dimension].append(r)
    return [dimension_agreement(d, by_dim[d]) for d in DIMENSIONS if by_dim.get(d)]


def self_agreement(samples: SampleSet) -> SelfAgreement:
    sessions = sorted(s for s, v in samples.by_session.items() if v)
    spreads: list[SampleSpread] = []
    unsettled: dict[str, dict[str, list[Score]]] = defaultdict(dict)
    for d in DIMENSIONS:
        ranges: list[float] = []
        stds: list[float] = []
        width = max((len(samples.by_session[s]) for s in sessions), default=0)
        table: list[list[float | None]] = [[None] * len(sessions) for _ in range(width)]
        for col, s in enumerate(sessions):
            values: list[Score] = [sample.get(d, UNKNOWN) for sample in samples.by_session[s]]
            numeric = [float(v) for v in values if isinstance(v, int)]
            for row, v in enumerate(values):
                table[row][col] = float(v) if isinstance(v, int) else None
            if len(numeric) >= 2:
                rng, std = stats.spread(numeric)
                ranges.append(rng)
                if std is not None:
                    stds.append(std)
            mixed = 0 < len(numeric) < len(values)
            if mixed or (numeric and max(numeric) - min(numeric) >= UNSETTLED_RANGE):
                unsettled[s][d] = values
        spreads.append(
            SampleSpread(
                dimension=d,
                sessions=len(ranges),
                meanRange=sum(ranges) / len(ranges) if ranges else None,
                maxRange=max(ranges) if ranges else None,
                meanStd=sum(stds) / len(stds) if stds else None,
                alpha=stats.krippendorff_alpha(table, "interval") if width >= 2 else None,
            )
        )
    return SelfAgreement(
        sessions=len(sessions),
        samples=sum(len(samples.by_session[s]) for s in sessions),
        dimensions=spreads,
        unsettled=[Unsettled(session=s, dimensions=dims) for s, dims in sorted(unsettled.items())],
        unreadable=list(samples.unreadable),
    )


__all__ = [
    "CLASSES",
    "ClaimRow",
    "RatingRow",
    "SampleSet",
    "claim_agreement",
    "dimension_agreement",
    "score_agreement",
    "self_agreement",
]
