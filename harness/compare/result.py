"""`judge compare --json`: the typed result (schemas/compare.schema.json is exported from it)."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field, NonNegativeInt

from harness.strict import Strict

COMPARE_VERSION: Literal["compare-v1"] = "compare-v1"


class LeftOut(Strict):
    name: str = Field(description="The session (its folder's name, or its results row).")
    why: str


class SideInfo(Strict):
    source: str = Field(description="The folder or results file read, as a full path.")
    kind: Literal["root", "results"]
    sessions: NonNegativeInt = Field(description="Sessions read with a judgment that counts.")
    leftOut: list[LeftOut] = Field(
        description="Sessions not counted, and why (no sealed run record of this "
        "installation, a record of another folder or other contents, a judge.json the "
        "record does not vouch for, a run that did not complete…)."
    )
    auditsLeftOut: list[LeftOut] = Field(
        default_factory=list,
        description="Sessions counted for their scores whose audit is not (not sealed, "
        "not of the judgment's run set, or no audit ran).",
    )


class Pairing(Strict):
    by: Literal["id", "question"]
    pairs: NonNegativeInt
    unpairedA: list[str] = Field(description="Sessions of A with no partner in B.")
    unpairedB: list[str] = Field(description="Sessions of B with no partner in A.")
    ambiguous: list[str] = Field(
        default_factory=list,
        description="--pair-by question: each question held by more than one session on a "
        "side, or a session whose question cannot be read (answer.md's first line is not a "
        "heading); none of them is paired.",
    )


class PairScores(Strict):
    """One pair: the session on each side and their scores (0-5 or "Unknown")."""

    a: str
    b: str
    scoresA: dict[str, int | str]
    scoresB: dict[str, int | str]


class Interval(Strict):
    low: float | None = Field(description="2.5th percentile of the bootstrap; None: no interval.")
    high: float | None = Field(description="97.5th percentile of the bootstrap.")


class SignedRankTest(Strict):
    statistic: float | None
    pValue: float | None
    nonZero: NonNegativeInt = Field(description="Pairs with a difference (zeros are dropped).")
    note: str | None = None


class Noise(Strict):
    """The judge's own spread, from runs with `--samples K`."""

    measured: bool
    sdA: float | None = Field(default=None, description="Pooled within-session SD on A.")
    sdB: float | None = Field(default=None, description="Pooled within-session SD on B.")
    band: float | None = Field(
        default=None,
        description="±1.96 × the standard error the mean difference would have from the "
        "judge's noise alone: sqrt(sdA² + sdB²) / sqrt(pairs).",
    )
    withinNoise: bool | None = Field(
        default=None, description="|mean difference| ≤ band: the difference is inside the noise."
    )
    note: str


class DimensionResult(Strict):
    dimension: str
    pairs: NonNegativeInt = Field(description="Pairs scored with a number on both sides.")
    meanA: float | None
    meanB: float | None
    difference: float | None = Field(description="Mean of B − A over the pairs.")
    interval: Interval
    wilcoxon: SignedRankTest
    better: NonNegativeInt = Field(description="Pairs where B scored higher.")
    worse: NonNegativeInt
    equal: NonNegativeInt
    betterShare: float | None
    worseShare: float | None
    equalShare: float | None
    unknownA: NonNegativeInt = Field(description="Pairs left out: Unknown on A.")
    unknownB: NonNegativeInt = Field(
        description="Pairs left out: Unknown on B (a pair Unknown on both counts on both)."
    )
    noise: Noise


class ShareResult(Strict):
    name: str = Field(description="A verdict (supported…) or a deterministic problem.")
    shareA: float | None
    shareB: float | None
    difference: float | None = Field(description="B − A.")
    interval: Interval


class ClaimsResult(Strict):
    sessions: NonNegativeInt = Field(description="Pairs with a counted audit on both sides.")
    claimsA: NonNegativeInt
    claimsB: NonNegativeInt
    verdicts: list[ShareResult] = Field(description="Shares of all claims, by verdict.")
    problems: list[ShareResult] = Field(
        description="Share of claims with each deterministic problem (empty when a side is "
        "a results file, which does not carry them)."
    )
    onlyA: list[str] = Field(description="Problem kinds found on A only.")
    onlyB: list[str] = Field(description="Problem kinds found on B only.")
    note: str | None = None


class Spend(Strict):
    mean: float | None
    median: float | None
    total: float


class CostSide(Strict):
    sessions: NonNegativeInt = Field(description="Paired sessions with a run record.")
    requests: Spend
    tokens: dict[str, Spend] = Field(description="input, output, cacheWrite, cacheRead.")
    seconds: Spend
    channelSessions: NonNegativeInt = Field(
        default=0, description="Sessions whose run went through `judge batch --batch-api`."
    )
    channels: dict[str, Spend] = Field(
        default_factory=dict,
        description="Over those sessions: batchRequests, batchTokens (Message Batches, half "
        "price), ordinaryRequests, ordinaryTokens (the Messages API); the judge's and the "
        "audit's together.",
    )


class Cost(Strict):
    a: CostSide | None
    b: CostSide | None
    note: str | None = None


class Mover(Strict):
    a: str = Field(description="The session on A.")
    b: str = Field(description="Its partner on B.")
    before: float
    after: float
    change: float
    pageA: str | None = Field(description="A's report page (`.judge/report.html`).")
    pageB: str | None


class Movers(Strict):
    what: str = Field(description="A dimension, or `supported` (the claims' support share).")
    drops: list[Mover]
    rises: list[Mover]


class FairnessWarning(Strict):
    what: str
    a: list[str]
    b: list[str]
    message: str


class Condition(Strict):
    text: str
    name: str
    op: Literal["<", ">"]
    threshold: float
    interval: Interval
    evaluated: bool
    failed: bool
    why: str

    @property
    def verdict(self) -> Literal["failed", "passed"] | None:
        """The word the summary and the page put before `why`; None when the condition
        was not evaluated, which its `why` already begins by saying."""
        if not self.evaluated:
            return None
        return "failed" if self.failed else "passed"


class Bootstrap(Strict):
    resamples: int
    seed: int
    level: float


class CompareResult(Strict):
    """`judge compare A B`: B − A, paired, with intervals."""

    version: Literal["compare-v1"] = COMPARE_VERSION
    a: SideInfo
    b: SideInfo
    pairing: Pairing
    pairs: list[PairScores] = Field(description="Every pair, in order, with its scores.")
    warnings: list[FairnessWarning] = Field(
        description="The two sides were judged differently: each difference then mixes a "
        "pipeline change with a judge change."
    )
    unchecked: list[str] = Field(
        default_factory=list, description="What could not be compared for fairness, and why."
    )
    dimensions: list[DimensionResult]
    claims: ClaimsResult | None
    cost: Cost
    movers: list[Movers]
    conditions: list[Condition] = Field(default_factory=list)
    failed: bool = Field(description="A --fail-if condition held over its whole interval.")
    bootstrap: Bootstrap

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)


__all__ = [
    "COMPARE_VERSION",
    "ClaimsResult",
    "CompareResult",
    "Condition",
    "Cost",
    "CostSide",
    "DimensionResult",
    "FairnessWarning",
    "Interval",
    "LeftOut",
    "Mover",
    "Movers",
    "Noise",
    "PairScores",
    "Pairing",
    "ShareResult",
    "SideInfo",
    "SignedRankTest",
    "Spend",
]
