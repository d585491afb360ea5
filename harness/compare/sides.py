"""What one side of a comparison holds: its sessions as read, and what was left out, why.

Pure values: `harness.compare.read` fills them from a folder of judged sessions or from a
results file; the pairing and the statistics read only these.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Score = int | str  # 0-5, or "Unknown"


@dataclass(frozen=True, slots=True)
class Claims:
    """One session's audit: claims per verdict and claims with each deterministic problem.
    `problems` is None when the source does not say (a results file)."""

    verdicts: dict[str, int]
    problems: dict[str, int] | None

    @property
    def total(self) -> int:
        return sum(self.verdicts.values())


@dataclass(frozen=True, slots=True)
class SessionCost:
    """What the session's last run spent, from its sealed run record."""

    requests: int  # the judge's turns and the audit's requests
    tokens: dict[str, int]  # input, output, cacheWrite, cacheRead: the judge's and the audit's
    seconds: float | None
    # `judge batch --batch-api` runs only: requests and tokens through Message Batches
    # (`batch`, half price) and the ordinary API, the judge's and the audit's together.
    channels: dict[str, int] | None = None


@dataclass(frozen=True, slots=True)
class Judging:
    """How the session was judged, from its run record (what the fairness warnings compare)."""

    model: str
    auditModel: str | None
    brief: str | None
    options: str  # the judging options, canonical JSON
    recordVersion: str
    rubricVersion: str
    harnessVersion: str | None


@dataclass(frozen=True, slots=True)
class ComparedSession:
    id: str
    question: str | None
    scores: dict[str, Score]
    claims: Claims | None = None
    cost: SessionCost | None = None
    judging: Judging | None = None
    samples: tuple[dict[str, Score], ...] = ()
    page: str | None = None  # the session's report page (`.judge/report.html`), absolute


@dataclass(slots=True)
class Side:
    source: str
    kind: Literal["root", "results"]
    sessions: dict[str, ComparedSession] = field(default_factory=dict)
    left_out: list[tuple[str, str]] = field(default_factory=list)  # (name, why)
    audits_left_out: list[tuple[str, str]] = field(default_factory=list)  # judged, audit not
    # Why a folder held no session at all, when the reader can tell (one session's folder
    # given instead of the folder holding it): said when nothing pairs.
    hint: str | None = None


__all__ = ["Claims", "ComparedSession", "Judging", "Score", "SessionCost", "Side"]
