"""What run.json records of the citation audit: typed, written in one place (`RunAudit`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, NonNegativeInt

from harness.audit.report import Against, CheckCounts, JudgedAgainst, VerdictCounts
from harness.strict import Strict
from harness.usage import Usage

ApiFault = Literal["invalid-request", "unavailable"]


class Expectation(Strict):
    """The audit's support rate and the citationAccuracy it expects (see `agreement`)."""

    basis: Literal["support", "checks only (upper bound)"]
    assessed: NonNegativeInt
    rate: float = Field(ge=0, le=1)
    expected: int = Field(ge=0, le=5)
    grounded: NonNegativeInt = Field(
        default=0, description="Assessed claims whose support was judged against their sources."
    )


class Agreement(Strict):
    """The judge's citationAccuracy against the expectation (its fields repeated, if any)."""

    judge: int | Literal["Unknown"] | None
    basis: Literal["support", "checks only (upper bound)"] | None = None
    assessed: NonNegativeInt | None = None
    rate: float | None = None
    expected: int | None = None
    grounded: NonNegativeInt | None = None
    disagrees: bool
    why: str


class ChannelUse(Strict):
    """Requests and tokens (input + output + cache writes) through one channel."""

    requests: NonNegativeInt = 0
    tokens: NonNegativeInt = 0


class Channels(Strict):
    """`judge batch --batch-api`: what the audit's requests went through. `batch`: answered
    by a Message Batch (half price); `ordinary`: sent to the Messages API (full price), e.g.
    a request whose batch result failed. A doubled bill shows as `ordinary` requests."""

    batch: ChannelUse = Field(default_factory=ChannelUse)
    ordinary: ChannelUse = Field(default_factory=ChannelUse)


class AuditRecord(Strict):
    """run.json's `citations`: where the report is, how it was made, its counts."""

    skipped: str | None = Field(default=None, description="Why no audit ran (e.g. --no-cite).")
    path: str | None = Field(default=None, description="The report, relative to the session.")
    failure: str | None = None
    apiFault: ApiFault | None = Field(
        default=None,
        description="`invalid-request` when the audit failed because the API refused a "
        "request as invalid (a defect of the harness or the options, never an outage; "
        "`failure` has the API's message); `unavailable` when the model API was "
        "unavailable for every claim.",
    )
    writeError: str | None = None
    seconds: float = 0.0
    offline: bool | None = None
    offlineReason: str | None = None
    model: str | None = None
    models: list[str] = Field(default_factory=list)
    concurrency: NonNegativeInt | None = None
    against: Against | None = Field(default=None, description="The --against mode asked.")
    judgedAgainst: JudgedAgainst | None = Field(
        default=None, description="How many claims were judged against sources, quotes, neither."
    )
    claims: NonNegativeInt = 0
    quotes: NonNegativeInt = 0
    requests: NonNegativeInt = 0
    verdicts: VerdictCounts | None = None
    checks: CheckCounts | None = None
    usage: Usage | None = None
    replyProblems: list[str] | None = Field(
        default=None,
        description="What was wrong in the audit model's replies and how each was read (a "
        "token count clamped), each once: citations.json's `replyProblems`.",
    )
    expected: Expectation | None = None
    agreement: Agreement | None = None
    channels: Channels | None = Field(
        default=None, description="--batch-api: requests and tokens by channel."
    )
