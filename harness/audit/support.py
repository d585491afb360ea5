"""Claim–quote support through the citation engine: what is asked, and how it is read.

Each claim's quotes are one engine source (`as: "quotes"`); every passage carries the
quote (`text`) and the `claim` (not the quote's source id: the model does not need it to
judge support, and the report keeps it). One screened concern, `supports`, asks in
round 1 whether each quote supports its claim and, in round 2, confirms the matching quotes
read together. The engine's finding then maps onto the claim:

| engine                                   | claim         | quotes                     |
|------------------------------------------|---------------|----------------------------|
| finding `holds`                          | `supported`   | cited `holds` / `review`   |
| finding `review`                         | `uncertain`   | cited `holds` / `review`   |
| finding `fails`, or no quote matched     | `unsupported` | the rest `dropped`         |
| the finding's request failed, or every   | `error`       | not judged: `unchecked`    |
| window failed before anything matched    |               |                            |

Passage ids are `<claim id>-q<n>` (1-based), made safe for the engine (`.`, `:`, backticks
and spaces become `_`) and unique (a repeated claim id gets `~2`, `~3`): replays are keyed
by them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from harness.audit.report import ClaimError, ClaimVerdict, QuoteResult, QuoteVerdict
from harness.cite import (
    CiteSource,
    Concerns,
    Criterion,
    Noul,
    NoulCriteria,
    Report,
    ScreenedConcern,
)
from harness.session.models import Claim

CONCERN = "supports"
TEXT_CAP = 6000  # characters of a quote or claim sent to the model

CRITERIA = NoulCriteria(
    true=Criterion(
        what="It states or plainly entails the claim, numbers, names and dates included."
    ),
    false=Criterion(
        what="It does not state the claim.",
        not_for="the same topic only, part of the claim only, or other numbers",
    ),
)

SUPPORTS = Concerns(
    concerns=[
        ScreenedConcern(
            name=CONCERN,
            detect=Noul(
                question="Does {passage} support its passage's `claim`?",
                criteria=CRITERIA,
            ),
            confirm=Noul(
                question="Beside the claim's other quotes, does {passage} evidence its "
                "passage's `claim`?",
                criteria=CRITERIA,
            ),
        )
    ]
)

ID_UNSAFE = re.compile(r"[.:`\s]+")  # what a passage-id prefix may not hold


def unique_name(base: str, seen: set[str], sep: str) -> str:
    """`base`, else `base<sep>2`, `base<sep>3`, …: the first not in `seen` (added to it)."""
    name, n = base, 1
    while name in seen:
        n += 1
        name = f"{base}{sep}{n}"
    seen.add(name)
    return name


def passage_prefixes(claim_ids: Iterable[str]) -> list[str]:
    """A safe, unique passage-id prefix per claim, in order."""
    seen: set[str] = set()
    return [unique_name(ID_UNSAFE.sub("_", c) or "claim", seen, "~") for c in claim_ids]


def passage_ids(prefix: str, claim: Claim) -> list[str]:
    return [f"{prefix}-q{i}" for i in range(1, len(claim.quotes) + 1)]


def needs_model(claim: Claim) -> bool:
    """A claim with no quote, or only blank ones, is unsupported without asking."""
    return any(q.text.strip() for q in claim.quotes)


def _cap(text: str) -> str:
    return text if len(text) <= TEXT_CAP else text[: TEXT_CAP - 1] + "…"


def claim_source(passages: list[str], claim: Claim) -> CiteSource:
    """The claim's quotes as one engine source (ids from `passage_ids`), each with its claim."""
    claim_text = _cap(claim.text)
    return CiteSource.model_validate(
        {
            "as": "quotes",
            "passages": [
                {"id": pid, "text": _cap(q.text), "claim": claim_text}
                for pid, q in zip(passages, claim.quotes, strict=True)
            ],
        }
    )


_VERDICTS: dict[str, ClaimVerdict] = {
    "holds": "supported",
    "review": "uncertain",
    "fails": "unsupported",
}


def decided_confidence(confirms: Iterable[float], screened: Iterable[float]) -> float | None:
    """The confidence that decided a claim's verdict, one rule in both modes: its highest
    round-2 confirm (the strongest that holds, else the highest that failed), or, where no
    finding of its own was confirmed (nothing gathered), its highest round-1 score; None
    when the model gave neither."""
    said = list(confirms)
    if said:
        return max(said)
    first = list(screened)
    return max(first) if first else None


def read_report(
    report: Report, passages: list[str], sources: list[str]
) -> tuple[ClaimVerdict, list[QuoteResult], ClaimError | None, float | None]:
    """The claim's verdict, each quote's verdict, the error that stopped it, if any, and
    the confidence that decided the verdict (`decided_confidence`; None with an error)."""
    status: dict[str, tuple[QuoteVerdict, float | None]] = dict.fromkeys(
        passages, ("dropped", None)
    )
    for pid in report.set_aside:  # a failed window: these quotes were never judged
        status[pid] = ("unchecked", None)
    verdict: ClaimVerdict
    error: ClaimError | None = None
    confidence: float | None = None
    finding = next((f for f in report.findings if f.concern == CONCERN), None)
    if finding is not None and finding.verdict is not None:
        verdict = _VERDICTS[finding.verdict]
        confidence = decided_confidence(finding.confirms.values(), ())
        for citation in finding.citations:
            status[citation.passage] = (citation.status, citation.score)
    elif finding is not None:
        verdict = "error"
        for pid in finding.passages:
            status[pid] = ("unchecked", None)
        if finding.error is not None:
            error = _error(finding.error.kind, finding.error.round, finding.error.message)
    elif report.errors:
        # A failed window might have held the supporting quote: no verdict can be given.
        # The source is this claim's quotes alone, so every error is its own (round 1's:
        # with no finding there was no round 2).
        verdict = "error"
        first = report.errors[0]
        error = _error(first.kind, first.round, first.message)
    else:
        verdict = "unsupported"
        said = report.strongest.get(CONCERN)
        confidence = decided_confidence((), () if said is None else (said,))
    quotes = [
        QuoteResult(
            index=i,
            sourceId=sid,
            passage=pid,
            verdict=status[pid][0],
            confirm=status[pid][1],
        )
        for i, (pid, sid) in enumerate(zip(passages, sources, strict=True))
    ]
    return verdict, quotes, error, confidence


def _error(kind: str, round_: int, message: str) -> ClaimError:
    return ClaimError(kind=kind, message=message or f"{kind.replace('_', ' ')} in round {round_}")
