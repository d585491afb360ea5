"""The agreement report (`judge agree --json`, schemas/agreement.schema.json): pydantic models.

The harness defines this document, so every model forbids extra fields. Every measure is an
`Estimate`: its value (None where the data cannot define it), a 95% interval where one can be
had, and the number of rows it was computed on.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import ConfigDict, Field, NonNegativeInt

from harness.strict import Strict

AGREEMENT_VERSION: Literal["agreement-v1"] = "agreement-v1"


class Estimate(Strict):
    value: float | None = Field(description="None where the data cannot define the measure.")
    low: float | None = Field(default=None, description="95% interval, low end.")
    high: float | None = Field(default=None, description="95% interval, high end.")
    n: NonNegativeInt = Field(default=0, description="Rows the measure was computed on.")


# The audit's word for each human label (shown by `judge agree` and its page).
VERDICT_OF = {"supported": "supported", "partial": "uncertain", "unsupported": "unsupported"}


def fmt(e: Estimate, percent: bool = False, digits: int = 2) -> str:
    """`0.81 [0.75, 0.87]`, or `—` where the data cannot define the measure."""
    if e.value is None:
        return "—"

    def one(v: float) -> str:
        return f"{v:.0%}" if percent else f"{v:.{digits}f}"

    if e.low is None or e.high is None:
        return one(e.value)
    return f"{one(e.value)} [{one(e.low)}, {one(e.high)}]"


class ProblemAgreement(Strict):
    """Claims with one problem kind the audit names (a deterministic check's, or
    `source_does_not_support`, the source-grounded audit's): how often people reject them
    too."""

    check: str
    claims: NonNegativeInt = Field(description="Labelled rows whose claim has this problem.")
    humanUnsupported: NonNegativeInt
    humanPartial: NonNegativeInt
    humanSupported: NonNegativeInt
    rejectedRate: Estimate = Field(description="Share labelled unsupported (Wilson interval).")


class CalibrationBin(Strict):
    low: float
    high: float
    n: NonNegativeInt
    confidence: float | None = Field(description="Mean engine confidence in the bin.")
    observed: float | None = Field(
        description="Mean human support in the bin (supported 1, partial ½, unsupported 0)."
    )


class ClaimAgreement(Strict):
    """The audit's support verdicts against people's support labels."""

    classes: list[str] = Field(description="Row/column order: human label ↔ audit verdict.")
    confusion: list[list[NonNegativeInt]] = Field(
        description="Rows: the human label; columns: the audit verdict (supported ↔ "
        "supported, partial ↔ uncertain, unsupported ↔ unsupported)."
    )
    rows: NonNegativeInt = Field(description="(claim, rater) pairs in the matrix.")
    noVerdict: dict[str, NonNegativeInt] = Field(
        description="Labelled claims the audit gave no verdict (error, unchecked), by verdict."
    )
    accuracy: Estimate
    kappa: Estimate = Field(description="Cohen's κ, unweighted, three classes.")
    unsupported: dict[str, Estimate] = Field(
        description="precision, recall and f1 of `unsupported`, the verdict an operator acts on."
    )
    byProblem: list[ProblemAgreement]
    calibration: list[CalibrationBin]
    ece: float | None = Field(description="Expected calibration error over the bins.")
    calibrated: NonNegativeInt = Field(description="Rows with an engine confidence.")


class DimensionAgreement(Strict):
    """One rubric dimension: the judge's score against each person's rating."""

    dimension: str
    rows: NonNegativeInt = Field(description="(session, rater) pairs both scored 0–5.")
    spearman: Estimate
    kendall: Estimate = Field(description="Kendall's τ-b.")
    mae: Estimate = Field(description="Mean absolute error, in score points.")
    exact: Estimate
    withinOne: Estimate
    qwk: Estimate = Field(description="Quadratic-weighted κ over the six scores.")
    judgeUnknown: NonNegativeInt = Field(description='The judge said "Unknown", a person scored.')
    humanUnknown: NonNegativeInt = Field(description='A person said "Unknown", the judge scored.')
    bothUnknown: NonNegativeInt
    humanAlpha: float | None = Field(
        description="Krippendorff's α (ordinal) among the people, where a session has two or "
        "more ratings: the ceiling the judge is measured against."
    )
    withJudgeAlpha: float | None = Field(
        description="Krippendorff's α with the judge counted as one more rater."
    )
    pairs: list[tuple[float, float]] = Field(
        default_factory=list, description="(human, judge) for the scatter."
    )


class SampleSpread(Strict):
    dimension: str
    sessions: NonNegativeInt = Field(description="Sessions with two or more numeric samples.")
    meanRange: float | None
    maxRange: float | None
    meanStd: float | None = Field(description="Mean of the sessions' sample standard deviations.")
    alpha: float | None = Field(
        description="Krippendorff's α (interval) across samples: 1 means the samples agree."
    )


class Unsettled(Strict):
    session: str
    dimensions: dict[str, list[int | str]] = Field(
        description="The dimensions the samples disagree on (range ≥ 2, or Unknown beside a "
        "score), with every sample's value."
    )


class SelfAgreement(Strict):
    """The judge against itself: K samples of a session (`judge run --samples K`)."""

    sessions: NonNegativeInt = Field(description="Sessions with saved samples.")
    samples: NonNegativeInt = Field(description="Samples read, in all.")
    dimensions: list[SampleSpread]
    unsettled: list[Unsettled]
    unreadable: list[str] = Field(default_factory=list, description="Samples that did not read.")


class Coverage(Strict):
    """What was paired with what, and what was not: nothing is dropped silently."""

    labelledSessions: NonNegativeInt
    claimLabels: NonNegativeInt
    ratings: NonNegativeInt
    unlabelled: list[str] = Field(description="Sessions under the root that no label names.")
    missing: list[str] = Field(description="Labelled sessions not found under the root.")
    unjudged: list[str] = Field(description="Labelled sessions without a valid judge.json.")
    unaudited: list[str] = Field(
        description="Sessions with claim labels but no readable .judge/citations.json."
    )
    unknownClaims: list[str] = Field(
        description="`session#claimId` of claim labels the audit has no such claim for."
    )
    changed: list[str] = Field(
        description="Sessions whose inputs changed after labelling (their sessionDigest)."
    )
    problems: list[str] = Field(default_factory=list, description="Other reasons, per session.")


class AgreementReport(Strict):
    version: Literal["agreement-v1"] = AGREEMENT_VERSION
    labels: str = Field(description="The labels file.")
    root: str
    coverage: Coverage
    claims: ClaimAgreement | None = Field(description="None: no claim label could be paired.")
    scores: list[DimensionAgreement]
    self_: SelfAgreement | None = Field(default=None, alias="self")
    resamples: NonNegativeInt = Field(description="Bootstrap resamples behind each interval.")

    model_config = ConfigDict(populate_by_name=True)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)


__all__ = [
    "AGREEMENT_VERSION",
    "VERDICT_OF",
    "AgreementReport",
    "CalibrationBin",
    "ClaimAgreement",
    "Coverage",
    "DimensionAgreement",
    "Estimate",
    "ProblemAgreement",
    "SampleSpread",
    "SelfAgreement",
    "Unsettled",
    "fmt",
]
