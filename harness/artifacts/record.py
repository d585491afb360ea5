"""`.judge/run.json`: the typed, versioned record of one run, written in one place.

`schemas/run.schema.json` is exported from `RunRecord` by `scripts/export_schemas.py`.
Field names are camelCase, like judge.json and citations.json; token counts keep the
API's own names (`input_tokens`, …), as citations.json's usage does.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, NonNegativeInt

from harness import redact
from harness.agent.calls import ToolCallRecord
from harness.audit.record import ApiFault, AuditRecord, Channels
from harness.events import Halt
from harness.strict import Strict
from harness.usage import Usage

# run-v2: `outcome.apiFault` and `citations.apiFault` (a request the API refused as
# invalid is told apart from an outage). Still run-v2 with `channels` (`judge batch
# --batch-api` only), as with `time`, `samples` and `citations.channels` before it: an
# optional field that changes the meaning of no other, absent from every other run's
# record, so every run-v2 record stays one of this version (a bump would make every
# session's last record unreadable: judged again, refused by the page).
RUN_RECORD_VERSION: Literal["run-v2"] = "run-v2"

OutcomeKind = Literal[
    "model-written",
    "repaired",
    "fallback",
    "kept-previous",
    "not-written",
    "up-to-date",
    "interrupted",
]


class BriefInfo(Strict):
    path: str
    digest: str = Field(description="sha256 of the template, `sha256:<hex>`.")
    warnings: list[str] = Field(default_factory=list)


class PreviousJudge(Strict):
    present: bool
    valid: bool


class SessionSummary(Strict):
    findings: NonNegativeInt
    claims: NonNegativeInt
    quotes: NonNegativeInt
    sources: NonNegativeInt
    sourcesJson: bool
    snapshots: NonNegativeInt
    answer: bool
    trace: bool
    traceCalls: NonNegativeInt
    problems: NonNegativeInt


class TokenTotals(Usage):
    """The SDK's own token names, as in citations.json's usage."""

    total_tokens: NonNegativeInt = 0

    @classmethod
    def of(cls, usage: Usage) -> TokenTotals:
        """`usage` with its sum, as run.json records it."""
        return cls(**usage.model_dump(), total_tokens=usage.total)


class Writes(Strict):
    valid: NonNegativeInt = 0
    refused: NonNegativeInt = 0


class RefusedWrite(Strict):
    """A Write of judge.json the check refused: the raw content and the errors."""

    content: str
    errors: list[dict[str, str]]


class Receipt(Strict):
    """The contract's receipt, printed on stdout as one line: exactly these three keys."""

    wroteJudge: bool = Field(description="This run wrote judge.json (the advisory fallback too).")
    upToDate: bool = Field(
        default=False,
        description="The run was skipped as up to date: the judge.json of a completed run "
        "on identical inputs is in place, and nothing was written. Always printed; a run.json "
        "written before this field has none (false).",
    )
    note: str = Field(description="What happened, in one line.")

    def line(self) -> str:
        # One line of ASCII-safe JSON whatever the note holds: U+2028, U+0085 and lone
        # surrogates are escaped, so a consumer splitting lines sees exactly one.
        return redact.artifact_text(self.model_dump(), indent=None)


class Interruption(Strict):
    """A run stopped by a signal: which, and the exit code it ended with."""

    signal: str
    exitCode: int


class Outcome(Strict):
    kind: OutcomeKind
    reason: str
    wroteJudge: bool
    apiFault: ApiFault | None = Field(
        default=None,
        description="Why the model API gave no usable reply, when that ended the run: "
        "`invalid-request`, the API refused a request as invalid (invalid_request_error, "
        "HTTP 400/404/413/422: a defect of the harness or of the options, never an outage; "
        "`reason` has the API's message), or `unavailable` (it stayed unavailable after the "
        "retries: temporary).",
    )
    halted: Halt | None = Field(
        default=None,
        description="Why the caller (`judge batch`), not the session, ended the run short: "
        "`interrupted` (its interrupt) or `limit` (its token or time limit). Absent for a run "
        "its caller did not stop.",
    )


class UpToDateStamp(Strict):
    inputs: str = Field(description="sha256 of the session, brief, model and judging options.")
    judgeSha256: str = Field(description="sha256 of the judge.json this run left.")
    complete: Literal["no-findings"] | None = Field(
        default=None, description="Set when the completed run was the no-findings fallback."
    )


class Proof(Strict):
    """A proof of origin (harness.fs.origin): this installation's MAC over the rest of the
    document, and the public name of the key that made it."""

    mac: str
    key: str


class ArtifactRef(Strict):
    """Which run wrote an artifact of the set this record vouches for."""

    runId: str | None = Field(
        description="The run that wrote it; None when no record of this installation says."
    )
    sha256: str | None = Field(default=None, description="sha256 of the file, `sha256:<hex>`.")
    ended: str | None = Field(default=None, description="When that run ended (ISO 8601).")


class ArtifactSet(Strict):
    """The artifacts in place when the run ended, and the run each came from: one run's
    judge.json and citations.json belong together; a run that kept the previous ones
    names the run that wrote them."""

    judge: ArtifactRef | None = None
    citations: ArtifactRef | None = None


class TimeShare(Strict):
    allowed: float = Field(description="Seconds this phase was given.")
    used: float = Field(description="Seconds it took.")


class TimeShares(Strict):
    """How `--max-seconds` was shared across the run (harness.run.budget)."""

    maxSeconds: float = Field(description="The run's whole time, as given.")
    rule: str = Field(description="The sharing rule, in words.")
    beforeAudit: float = Field(
        description="Seconds spent before the audit (or, without one, the judge) started: "
        "waiting for the lock, loading and hashing the session, building the judge's client."
    )
    lockWait: float = Field(
        default=0.0,
        description="Seconds spent waiting for another run of the session to release its "
        "lock, before loading began; counted in beforeAudit and under maxSeconds.",
    )
    reserve: float = Field(description="Seconds kept for writing judge.json and run.json.")
    audit: TimeShare | None = None
    judge: TimeShare | None = None


class Sample(Strict):
    """One of the K judgments of `judge run --samples K` (.judge/samples/<index>.json)."""

    index: int = Field(ge=1, description="1 to K, in the order they were made.")
    file: str = Field(description="Where it is kept, relative to the session.")
    sha256: str = Field(description="sha256 of that file, `sha256:<hex>`: only it is trusted.")
    scores: dict[str, int | str]
    turns: NonNegativeInt


class Samples(Strict):
    asked: int = Field(ge=2, description="--samples K.")
    made: list[Sample] = Field(description="The samples that ended with a valid judgment.")
    chosen: int | None = Field(description="The index of the sample now in judge.json.")
    rule: str = Field(description="How judge.json was chosen among them.")
    cut: str | None = Field(default=None, description="Why fewer than K were made, if so.")


class RunChannels(Strict):
    """`judge batch --batch-api`: what THIS run's requests went through, audit and agent
    turns apart (`citations.channels` is that of the audit whose report is in place: the
    previous run's when this one kept the previous set). Summed over the sessions' records
    of one batch, they are the batch summary's `totals.batchApi.channels`."""

    audit: Channels = Field(
        default_factory=Channels,
        description="The citation audit's requests: `batch` answered from a Message Batch "
        "(half price), `ordinary` sent to the Messages API (full price: a failed batch "
        "result, a request the planner did not foresee). Zeros with --no-cite.",
    )
    judge: Channels = Field(
        default_factory=Channels,
        description="The agent's turns, of every sample with --samples K: `batch` answered "
        "in an agent round's Message Batch, `ordinary` sent to the Messages API because "
        "their batch result was errored, expired or canceled, or the round's batch could "
        "not be submitted or read. A turn replayed from the saved conversation of a killed "
        "batch was paid by that batch and is not counted again.",
    )


class RunRecord(Strict):
    """Everything a run did and why it ended as it did."""

    version: Literal["run-v2"] = RUN_RECORD_VERSION
    harness: Literal["judge"] = "judge"
    harnessVersion: str | None = Field(
        default=None,
        description="The version of the judge-harness package that wrote the record (None "
        "in records written before it was kept).",
    )
    runId: str | None = Field(default=None, description="This run's id (in each artifact).")
    rubricVersion: str
    sessionId: str
    sessionDir: str
    # The run's inputs: absent (None) only in the record of a run interrupted before it had
    # read them (`outcome.kind` is then `interrupted`).
    sessionDigest: str | None
    sessionDigestCut: list[str] = Field(
        default_factory=list, description="Files the digest did not hash in full, and why."
    )
    brief: BriefInfo | None
    model: str
    options: dict[str, Any] = Field(description="The run's options as given (paths as text).")
    replay: str | None = None
    started: str
    ended: str | None = None
    seconds: float | None = None
    sessionSummary: SessionSummary | None
    previousJudge: PreviousJudge | None
    citations: AuditRecord | None = None
    turns: NonNegativeInt = 0
    reasks: NonNegativeInt = 0
    stopReasons: list[str | None] = Field(default_factory=list)
    models: list[str] = Field(default_factory=list)
    usage: TokenTotals | None = None
    channels: RunChannels | None = Field(
        default=None,
        description="`judge batch --batch-api` only (absent otherwise): this run's requests "
        "and tokens (input + output + cache writes) by channel, so a doubled bill shows as "
        "`ordinary` requests.",
    )
    toolCalls: list[ToolCallRecord] = Field(default_factory=list)
    writes: Writes = Field(default_factory=Writes)
    formatErrors: list[str] = Field(default_factory=list)
    refusedWrites: list[RefusedWrite] = Field(default_factory=list)
    finalText: str = ""
    time: TimeShares | None = Field(
        default=None, description="How --max-seconds was shared by the audit and the judge."
    )
    replyProblems: list[str] = Field(
        default_factory=list,
        description="What the harness corrected or cut in the model's replies and tool "
        "results: token usage out of range, a streamed tool input past its cap, a turn's "
        "tool results past their byte limit.",
    )
    samples: Samples | None = Field(
        default=None, description="--samples K: the judgments made and the one chosen."
    )
    outcome: Outcome | None = None
    interrupted: Interruption | None = None
    receipt: Receipt | None = Field(default=None, description="The receipt printed on stdout.")
    judge: dict[str, Any] | None = Field(default=None, description="The judgment in place.")
    upToDate: UpToDateStamp | None = Field(
        default=None,
        description="For a completed run: the digest of its inputs and of the judge.json it "
        "left, so a later run on identical inputs can skip it (harness.run.uptodate).",
    )
    upToDateRefused: str | None = Field(
        default=None,
        description="Why the last run's judgment could not be reused: an artifact the "
        "up-to-date rule reads (.judge/run.json, judge.json) was refused by the confined "
        "reader or unusable, so this run judged again.",
    )
    artifacts: ArtifactSet | None = Field(
        default=None, description="The artifact set in place when the run ended."
    )
    origin: Proof | None = Field(
        default=None,
        description="This installation's MAC over the record (harness.fs.origin); a record "
        "without a valid one is not trusted.",
    )

    def document(self) -> dict[str, Any]:
        """run.json's content: `channels` is left out when there are none, so the record of
        a run without --batch-api is exactly what it was before the field came (and one an
        installation without the field still reads)."""
        return self.model_dump(mode="json", exclude={"channels"} if self.channels is None else None)
