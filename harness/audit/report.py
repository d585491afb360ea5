"""The citation report (`.judge/citations.json`, `judge cite --json`): pydantic models.

The harness defines this document, so every model forbids extra fields;
`schemas/citations.schema.json` is exported from `CitationReport` by
`scripts/export_schemas.py`. Optional fields are left out of the JSON when empty
(`to_json` drops `None`), so a claim without problems reads `"problems": []` and no `error`.

A claim's `problems` are defects the checks know of; its `hints` are what a check could not
decide (a number its quotes lack when a quoted source has no stored text to look in): they
point the support check at the claim and are never counted against it.
"""

from __future__ import annotations

import json
from typing import Any, Literal, get_args

from pydantic import Field, NonNegativeInt

from harness.config import Against as Against  # the one declaration, named here too
from harness.strict import Strict
from harness.usage import Usage

REPORT_VERSION: Literal["citations-v3"] = "citations-v3"

CheckName = Literal[
    "dangling_source",
    "quote_not_in_source",
    "number_mismatch",
    "no_quote",
    "quote_source_not_cited",
    "source_unreadable",
    "source_does_not_support",
]
CHECKS: tuple[CheckName, ...] = get_args(CheckName)
# Problems that make a citation wrong whatever the model thinks of the quote's wording.
SERIOUS: frozenset[str] = frozenset({"dangling_source", "quote_not_in_source", "no_quote"})
# Problems that leave a citation unverified: the claim earns at most half credit.
UNVERIFIED: frozenset[str] = frozenset({"source_unreadable"})

ClaimVerdict = Literal["supported", "uncertain", "unsupported", "error", "unchecked"]
VERDICTS: tuple[ClaimVerdict, ...] = get_args(ClaimVerdict)
QuoteVerdict = Literal["holds", "review", "dropped", "unchecked"]
PassageVerdict = Literal["holds", "review", "dropped"]
Checked = Literal["sources", "quotes"]
Overlap = Literal["within", "overlaps", "apart", "unlocated", "no_quote"]


class Problem(Strict):
    """One deterministic check that failed on a claim (or, in `hints`, could not decide)."""

    check: CheckName
    detail: str = Field(description="What is wrong, in one sentence.")
    quote: NonNegativeInt | None = Field(
        default=None, description="Index of the quote in the claim's `quotes`, when about one."
    )
    sourceIds: list[str] | None = Field(default=None, description="The source ids concerned.")
    numbers: list[str] | None = Field(
        default=None, description="number_mismatch: the claim's numbers no quote carries."
    )
    similarity: float | None = Field(
        default=None,
        ge=0,
        le=100,
        description="quote_not_in_source: how much of the quote the nearest passage matches, %.",
    )
    nearest: str | None = Field(
        default=None, description="quote_not_in_source: the nearest passage (normalised)."
    )
    foundIn: list[str] | None = Field(
        default=None,
        description="quote_not_in_source: other sources whose snapshot holds the quote.",
    )


class QuoteResult(Strict):
    """How the model judged one quote (screened and confirmed as a set with its siblings)."""

    index: NonNegativeInt
    sourceId: str
    passage: str = Field(description="The quote's passage id in the engine's requests.")
    verdict: QuoteVerdict
    confirm: float | None = Field(default=None, description="The confirm probability, 0..1.")


class PassageResult(Strict):
    """A passage of a cited source gathered for the claim, and how round 2 judged it.

    `start`/`end` are character offsets into the source's plain text (`text` is that
    slice); the claim's passages were confirmed as a set: show them together.
    """

    sourceId: str
    passageId: str = Field(description="`<source id>:p<n>`, n its order in the whole text.")
    start: NonNegativeInt
    end: NonNegativeInt
    text: str
    verdict: PassageVerdict
    confirm: float | None = Field(default=None, description="The confirm probability, 0..1.")


class ClaimError(Strict):
    kind: str
    message: str


class ClaimResult(Strict):
    claimId: str
    findingId: str
    file: str
    pointer: str
    verdict: ClaimVerdict
    problems: list[Problem]
    hints: list[Problem] = Field(
        default_factory=list,
        description="What a check could not decide: worth the support check's look, never "
        "counted against the claim (e.g. number_mismatch when a quoted source has no text).",
    )
    quotes: list[QuoteResult]
    requests: NonNegativeInt = 0
    error: ClaimError | None = None
    against: Checked | None = Field(
        default=None,
        description="What support was judged against: the cited sources' text (`sources`) or "
        "the claim's quotes (`quotes`); absent when support was not judged.",
    )
    passages: list[PassageResult] = Field(
        default_factory=list,
        description="sources: the passages gathered for the claim in round 1, judged as a set.",
    )
    together: float | None = Field(
        default=None,
        description="sources: the best probability, over its cited sources, that the "
        "gathered passages taken together support the claim.",
    )
    confidence: float | None = Field(
        default=None,
        description="The model's probability that decided the verdict, one rule in both modes: "
        "the claim's highest round-2 confirm (the strongest that holds, else the highest that "
        "failed), else, with nothing gathered, its highest round-1 score; absent for an error, "
        "an unchecked claim, or one no model was asked about.",
    )
    quoteOverlap: Overlap | None = Field(
        default=None,
        description="sources: whether a quote of the claim lies within a passage that holds "
        "or is for review, overlaps one, lies apart from them, cannot be found in the text "
        "(`unlocated`), or the claim has none (`no_quote`).",
    )


class VerdictCounts(Strict):
    supported: NonNegativeInt = 0
    uncertain: NonNegativeInt = 0
    unsupported: NonNegativeInt = 0
    error: NonNegativeInt = 0
    unchecked: NonNegativeInt = 0


class CheckCounts(Strict):
    """Claims with at least one problem of each check."""

    dangling_source: NonNegativeInt = 0
    quote_not_in_source: NonNegativeInt = 0
    number_mismatch: NonNegativeInt = 0
    no_quote: NonNegativeInt = 0
    quote_source_not_cited: NonNegativeInt = 0
    source_unreadable: NonNegativeInt = 0
    source_does_not_support: NonNegativeInt = 0


class Totals(Strict):
    claims: NonNegativeInt
    quotes: NonNegativeInt
    requests: NonNegativeInt
    verdicts: VerdictCounts
    checks: CheckCounts
    hints: CheckCounts = Field(
        default_factory=CheckCounts, description="Claims with at least one hint of each check."
    )


class SourceTexts(Strict):
    """The fetched-text cache (`.judge/sources/`) in this audit (harness.audit.fetched)."""

    mode: Literal["stored", "live", "off"]
    fetched: list[str] = Field(default_factory=list, description="Source ids fetched.")
    reused: list[str] = Field(default_factory=list, description="Source ids read from the cache.")
    failed: dict[str, str] = Field(
        default_factory=dict, description="Source id -> why its fetch failed."
    )
    refused: dict[str, str] = Field(
        default_factory=dict,
        description="Source id -> why its cached text was refused by the confined reader "
        "(a link, a hard link, a special file): never read.",
    )


class CitationReport(Strict):
    """Every claim of a session: its support verdict, its problems and its quotes' verdicts."""

    version: Literal["citations-v3"] = REPORT_VERSION
    sessionId: str
    against: Against = Field(
        default="auto",
        description="--against: `sources` judges claims against their cited sources' text, "
        "`quotes` against their quotes, `auto` sources where they have text, else quotes.",
    )
    offline: bool
    offlineReason: str | None = Field(
        default=None, description="Why support was not judged (only when offline)."
    )
    model: str | None = Field(default=None, description="The model asked (None offline).")
    concurrency: NonNegativeInt
    claims: list[ClaimResult]
    totals: Totals
    usage: Usage
    models: list[str]
    sourceTexts: SourceTexts | None = Field(
        default=None, description="The fetched-text cache, when the audit used one."
    )
    cuts: list[str] | None = Field(
        default=None,
        description="What the audit left unread to stay bounded, one sentence each "
        "(sources: a text's part past the ranking cap, a claim's terms past the query cap); "
        "absent when nothing was cut.",
    )
    replyProblems: list[str] | None = Field(
        default=None,
        description="What was wrong in the model's replies and how each was read (a token "
        "count out of range, clamped), each once with how many replies had it; absent when "
        "nothing was.",
    )
    runId: str | None = Field(
        default=None, description="The run that wrote it (`.judge/citations.json` only)."
    )
    sessionDir: str | None = Field(
        default=None,
        description="The session folder it was written in (`.judge/citations.json` only): "
        "a report copied into another session is not that session's.",
    )
    origin: dict[str, str] | None = Field(
        default=None,
        description="This installation's MAC over the report (harness.fs.origin); a saved "
        "report without a valid one is not trusted.",
    )

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)


class JudgedAgainst(Strict):
    """How many claims had their support judged against what (`--against auto` splits)."""

    sources: NonNegativeInt = Field(description="Against their cited sources' text.")
    quotes: NonNegativeInt = Field(description="Against their quotes.")
    neither: NonNegativeInt = Field(
        description="Against nothing: offline, or (sources) no cited source has text."
    )


def judged_against(claims: list[ClaimResult]) -> JudgedAgainst:
    sources = sum(1 for c in claims if c.against == "sources")
    quotes = sum(1 for c in claims if c.against == "quotes")
    return JudgedAgainst(sources=sources, quotes=quotes, neither=len(claims) - sources - quotes)


def totals(claims: list[ClaimResult], requests: int) -> Totals:
    verdicts = dict.fromkeys(VERDICTS, 0)
    checks = dict.fromkeys(CHECKS, 0)
    hints = dict.fromkeys(CHECKS, 0)
    for claim in claims:
        verdicts[claim.verdict] += 1
        for name in {p.check for p in claim.problems}:
            checks[name] += 1
        for name in {p.check for p in claim.hints}:
            hints[name] += 1
    return Totals(
        claims=len(claims),
        quotes=sum(len(c.quotes) for c in claims),
        requests=requests,
        verdicts=VerdictCounts(**verdicts),
        checks=CheckCounts(**checks),
        hints=CheckCounts(**hints),
    )
