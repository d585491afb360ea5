"""The report `judge` returns: findings, errors, usage and models, in a fixed order."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, NonNegativeInt

from harness.strict import Frozen
from harness.usage import Usage

Verdict = Literal["holds", "review", "fails"]
# `time_limit`: the run's (or the audit's) time ran out before the request was answered;
# `unavailable`: the API did not answer after the retries.
ErrorKind = Literal[
    "request_too_large", "missing_answers", "malformed_answers", "unavailable", "time_limit"
]


class Answer(Frozen):
    """A checked answer: a noul's probability, a score's level, or a choice's option."""

    value: float | str
    confidence: float | None = None


class Citation(Frozen):
    """A passage cited for a finding. `score` is its confirm (screened concerns only)."""

    passage: str
    status: Literal["holds", "review"]
    score: float | None = None
    roles: list[str] = Field(default_factory=list)


class CiteError(Frozen):
    """One request that produced nothing readable (data, not an exception).

    Round 1 errors name their `window` (passage ids); round 2 errors their `finding`
    (index into `Report.findings`) and `concern`.
    """

    kind: ErrorKind
    round: Literal[1, 2]
    keys: list[str]
    window: list[str] | None = None
    finding: int | None = None
    concern: str | None = None
    message: str = ""


class CiteFinding(Frozen):
    """One concern's finding. `verdict` is None exactly when `error` is set."""

    concern: str
    kind: Literal["screened", "factored"]
    verdict: Verdict | None
    passages: list[str]
    # Factories, not literal defaults: pydantic deep-copies a literal one per instance.
    roles: dict[str, str] = Field(default_factory=dict)
    citations: list[Citation] = Field(default_factory=list)
    checks: dict[str, Answer] = Field(default_factory=dict)
    descriptors: dict[str, Answer] = Field(default_factory=dict)
    # Every confirm's probability by passage, the dropped ones included: what the verdict
    # was read from (a screened finding only; the verdict rules read nothing else here).
    confirms: dict[str, float] = Field(default_factory=dict)
    error: CiteError | None = None


class Report(Frozen):
    """Findings in concern order; errors in window order, then finding order.

    `set_aside` lists passages no concern could use (a failed filter or a failed window);
    `models` lists each model once, in the order replies were read. `strongest` holds each
    screened concern's highest round-1 score over the passages that were scored (a match
    or not): for a concern with nothing gathered, the score that decided so.
    """

    findings: list[CiteFinding]
    errors: list[CiteError]
    set_aside: list[str]
    usage: Usage
    models: list[str]
    requests: NonNegativeInt
    strongest: dict[str, float] = Field(default_factory=dict)
