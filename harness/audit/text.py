"""The audit in words: the summary the judge reads, and the lines `judge cite`'s table
(harness.cli.cite_table) is drawn from."""

from __future__ import annotations

from harness.audit.report import CHECKS, SERIOUS, VERDICTS, CitationReport, ClaimResult
from harness.text.terminal import one_line

_RANK = {"error": 0, "unsupported": 1, "uncertain": 2, "unchecked": 3, "supported": 4}


def cut_line(text: str, width: int | None = None) -> str:
    # Ids come from the session: no control character may reach a terminal or break a
    # line. Shown escaped (`\x1b`), so what is printed is what the session holds.
    text = one_line(text)
    if width is not None and len(text) > width:
        text = text[: width - 1] + "…"
    return text


def counts_line(report: CitationReport) -> str:
    verdicts = report.totals.verdicts.model_dump()
    shown = [f"{verdicts[v]} {v}" for v in VERDICTS if verdicts[v] or v != "unchecked"]
    return f"{report.totals.claims} claims: " + ", ".join(shown)


def problems_line(report: CitationReport) -> str:
    checks = report.totals.checks.model_dump()
    found = [f"{name} {checks[name]}" for name in CHECKS if checks[name]]
    return "claims with problems: " + (", ".join(found) if found else "none")


def hints_line(report: CitationReport) -> str | None:
    """The hints (not problems: what a check could not decide), or None without any."""
    hints = report.totals.hints.model_dump()
    found = [f"{name} {hints[name]}" for name in CHECKS if hints[name]]
    return "claims with hints (not problems): " + ", ".join(found) if found else None


def problem_text(claim: ClaimResult, limit: int = 3) -> str:
    parts = [f"{p.check}: {p.detail}" for p in claim.problems[:limit]]
    if len(claim.problems) > limit:
        parts.append(f"… {len(claim.problems) - limit} more")
    parts += [f"hint, {h.check}: {h.detail}" for h in claim.hints[:limit]]
    if len(claim.hints) > limit:
        parts.append(f"… {len(claim.hints) - limit} more hints")
    if claim.error is not None:
        parts.append(f"error: {claim.error.message}")
    return "; ".join(parts)


def _flagged(claim: ClaimResult) -> bool:
    return (
        bool(claim.problems)
        or bool(claim.hints)
        or claim.verdict in ("error", "unsupported", "uncertain")
    )


def worst(report: CitationReport, limit: int = 10) -> list[ClaimResult]:
    """Claims most worth a look: errors and unsupported first, then by serious problems;
    claims with only hints come after every claim with a problem of the same verdict."""
    flagged = [c for c in report.claims if _flagged(c)]
    flagged.sort(
        key=lambda c: (
            _RANK[c.verdict],
            -sum(p.check in SERIOUS for p in c.problems),
            -len(c.problems),
        )
    )
    return flagged[:limit]


def _passage_text(claim: ClaimResult, width: int = 240) -> str:
    """The best passage found for a source-grounded claim, quoted, or nothing."""
    found = [p for p in claim.passages if p.verdict != "dropped"]
    if not found:
        return ""
    best = max(found, key=lambda p: (p.verdict == "holds", p.confirm or 0.0))
    text = cut_line(" ".join(best.text.split()), width)
    return f'; passage {best.passageId} ({best.verdict}): "{text}"'


def judge_summary(report: CitationReport, path: str | None) -> str:
    """The audit as the judge's first message tells it; ids and details come wrapped."""
    from harness.text.untrusted import wrap_untrusted

    if report.offline:
        how = (
            "Only the deterministic checks ran, so no claim's support was judged "
            f"({report.offlineReason}). They compare every claim's source ids with "
            "sources.json, its quotes with the stored snapshots in sources/, and its numbers "
            "with its quotes and its sources' stored text."
        )
    else:
        grounded = sum(1 for c in report.claims if c.against == "sources")
        what = (
            f"whether the passages of each claim's cited sources support it ({grounded} of "
            f"{len(report.claims)} claims, judged against their sources' stored text; the "
            "rest against their quotes)"
            if grounded
            else "whether each claim's quotes support it"
        )
        how = (
            f"A model ({', '.join(report.models) or report.model}) judged, through the "
            f"citation engine, {what}; deterministic checks "
            "compared every claim's source ids with sources.json, its quotes with the stored "
            "snapshots in sources/, and its numbers with its quotes and its sources' stored "
            "text."
        )
    parts = [
        f"The harness ran a citation audit before this conversation. {how}",
        f"Result: {counts_line(report)}. C{problems_line(report)[1:]}.",
    ]
    hinted = hints_line(report)
    if hinted is not None:
        parts.append(
            f"C{hinted[1:]}. A hint is what a check could not decide (a number the quotes "
            "lack, with no stored text of the source to look in): check that claim against "
            "its source; it is not a defect."
        )
    if path is not None:
        parts.append(
            f"The full report is `{path}` inside the session (Read it): every claim's verdict, "
            "problems and quote verdicts. Treat it as evidence for citationAccuracy and "
            "factualAccuracy, not as the score: check what matters yourself."
        )
    listed = worst(report)
    if listed:
        lines = [
            f"- {c.claimId} ({c.file}): {c.verdict}"
            + (f"; {problem_text(c, limit=2)}" if c.problems or c.hints or c.error else "")
            + _passage_text(c)
            for c in listed
        ]
        flagged = sum(1 for c in report.claims if _flagged(c))
        if flagged > len(listed):
            lines.append(f"- … and {flagged - len(listed)} more in the report")
        parts.append(
            "Claims to look at first:\n"
            + wrap_untrusted("report", "\n".join(cut_line(x) for x in lines))
        )
    return "\n\n".join(parts)
