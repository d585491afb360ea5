"""Does the judge's `citationAccuracy` agree with the audit? The rule, as pure functions.

Each claim the audit could assess earns credit: 0 when a deterministic check found its
citation wrong (`dangling_source`, `quote_not_in_source`, `no_quote`), otherwise 1 for
`supported`, 0.5 for `uncertain`, 0 for `unsupported`. Claims that ended in `error` are
left out. A claim's hints (what a check could not decide) earn and cost nothing. The
audit's rate is the mean credit, and the score it expects is round(5 x rate) (halves up).

A claim judged against its cited sources' text (`--against sources`, or `auto` where
they have text) earns by that source-grounded verdict, and its lack of a quote (`no_quote`)
does not zero it: the source itself was read. A dangling source or a quote not in its
source still does.

Offline, no support was judged: an `unchecked` claim without a serious problem earns 1,
so the rate is only an upper bound on support. A claim one of whose quotes could not be
checked because its snapshot cannot become text (`source_unreadable`) earns at most 0.5,
online or offline: its citation was not verified.

The judge disagrees with the audit when:

- online: its score is 2 or more points from the expected score;
- offline: its score is 2 or more points *above* the bound (scoring lower is consistent);
- it scored `"Unknown"` while the audit assessed at least one claim.

With no assessed claim there is no expectation, and nothing to disagree with.
"""

from __future__ import annotations

import math

from harness.audit.record import Agreement, Expectation
from harness.audit.report import SERIOUS, UNVERIFIED, CitationReport

CREDIT = {"supported": 1.0, "uncertain": 0.5, "unsupported": 0.0, "unchecked": 1.0}
UNVERIFIED_CREDIT = 0.5
GAP = 2


def expectation(report: CitationReport) -> Expectation | None:
    """The audit's support rate and the citationAccuracy it expects; None without data."""
    credits: list[float] = []
    grounded = 0
    for claim in report.claims:
        if claim.verdict == "error":
            continue
        from_sources = claim.against == "sources"
        grounded += from_sources
        serious = any(
            p.check in SERIOUS and not (from_sources and p.check == "no_quote")
            for p in claim.problems
        )
        credit = 0.0 if serious else CREDIT[claim.verdict]
        if any(p.check in UNVERIFIED for p in claim.problems):
            credit = min(credit, UNVERIFIED_CREDIT)
        credits.append(credit)
    if not credits:
        return None
    rate = sum(credits) / len(credits)
    return Expectation(
        basis="checks only (upper bound)" if report.offline else "support",
        assessed=len(credits),
        rate=round(rate, 3),
        expected=math.floor(5 * rate + 0.5),
        grounded=grounded,
    )


def compare(expected: Expectation | None, score: int | str | None) -> Agreement:
    """The judge's score against the expectation."""
    base = expected.model_dump() if expected else {}

    def out(disagrees: bool, why: str) -> Agreement:
        judge = score if score is None or isinstance(score, int) else "Unknown"
        return Agreement(judge=judge, **base, disagrees=disagrees, why=why)

    if score is None:
        return out(False, "no judgment by the model to compare")
    if expected is None:
        return out(False, "the audit assessed no claim")
    want = expected.expected
    offline = expected.basis != "support"
    if not isinstance(score, int):
        return out(
            True, f"the judge scored {score!r} while the audit assessed {expected.assessed} claims"
        )
    gap = score - want
    disagrees = gap >= GAP if offline else abs(gap) >= GAP
    if offline:
        why = f"judge {score} vs at most {want} by the deterministic checks"
    else:
        why = f"judge {score} vs {want} expected from a support rate of {expected.rate:.0%}"
    return out(disagrees, why)
