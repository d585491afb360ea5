"""The report for people: a table for `judge cite`, and the summary the judge reads."""

from __future__ import annotations

from harness.audit.fetched import ignored_note
from harness.audit.report import CHECKS, SERIOUS, VERDICTS, CitationReport, ClaimResult
from harness.text.terminal import one_line

_RANK = {"error": 0, "unsupported": 1, "uncertain": 2, "unchecked": 3, "supported": 4}


def _safe(text: str, width: int | None = None) -> str:
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


def _problem_text(claim: ClaimResult, limit: int = 3) -> str:
    parts = [f"{p.check}: {p.detail}" for p in claim.problems[:limit]]
    if len(claim.problems) > limit:
        parts.append(f"… {len(claim.problems) - limit} more")
    parts += [f"hint, {h.check}: {h.detail}" for h in claim.hints[:limit]]
    if len(claim.hints) > limit:
        parts.append(f"… {len(claim.hints) - limit} more hints")
    if claim.error is not None:
        parts.append(f"error: {claim.error.message}")
    return "; ".join(parts)


def table_lines(report: CitationReport, width: int | None = None) -> list[str]:
    """One line per claim (id, finding, verdict, problems), then the totals.

    `width` (a terminal's columns, 40 at least): no line is wider; ids are cut with `…` at
    their share of it and the problems fold under their column (or, with less than 20
    cells left for them, onto indented lines below the claim). None: wide, one line per
    claim, as a log file is read."""
    how = (
        f"offline ({report.offlineReason})"
        if report.offline
        else f"model {', '.join(report.models) or report.model}, concurrency {report.concurrency}"
        f", against {report.against}"
    )
    head = [f"citations: session {_safe(report.sessionId)}: {how}"]
    hinted = hints_line(report)
    u = report.usage
    foot = [
        counts_line(report),
        problems_line(report),
        *([hinted] if hinted is not None else []),
        *([ignored] if (ignored := _ignored(report)) is not None else []),
        f"requests {report.totals.requests}, tokens in {u.input_tokens:,} / out "
        f"{u.output_tokens:,} (cache read {u.cache_read_input_tokens:,}, written "
        f"{u.cache_creation_input_tokens:,})",
    ]
    if width is not None:
        return _fitted(report, head, foot, max(width, 40))
    lines = list(head)
    width = max([5, *(len(_safe(c.claimId, 40)) for c in report.claims)])
    fwidth = max([7, *(len(_safe(c.findingId, 24)) for c in report.claims)])
    lines.append(f"  {'claim':<{width}}  {'finding':<{fwidth}}  {'verdict':<11}  problems")
    for claim in report.claims:
        problems = _problem_text(claim) or "-"
        lines.append(
            f"  {_safe(claim.claimId, 40):<{width}}  {_safe(claim.findingId, 24):<{fwidth}}  "
            f"{claim.verdict:<11}  {_safe(problems, 160)}"
        )
    lines += [f"  {line}" for line in foot]
    return lines


def _ignored(report: CitationReport) -> str | None:
    texts = report.sourceTexts
    return ignored_note(texts.refused) if texts is not None else None


PROBLEMS_ROOM = 20  # fewer cells than this left for the problems: they go below the claim


def _fold(text: str, width: int) -> list[str]:
    """`text` folded at word ends (a word longer than `width` is cut) into lines of at
    most `width` cells (rich measures wide characters)."""
    import io

    from rich.console import Console
    from rich.text import Text

    console = Console(file=io.StringIO(), width=max(width, 1), color_system=None)
    return [line.plain.rstrip() for line in Text(text).wrap(console, max(width, 1))] or [""]


def _cut(text: str, cells: int) -> str:
    """`text` in at most `cells` cells, ending with `…` when cut, padded to `cells`."""
    from rich.cells import cell_len, set_cell_size

    if cell_len(text) > cells:
        text = set_cell_size(text, cells - 1) + "…"
    return set_cell_size(text, cells)


def _fitted(report: CitationReport, head: list[str], foot: list[str], width: int) -> list[str]:
    from rich.cells import cell_len

    lines = [*_fold(head[0], width)]
    cap = max(8, min(40, width * 3 // 10))
    fcap = max(7, min(24, width // 5))
    ids = [_safe(c.claimId) for c in report.claims]
    findings = [_safe(c.findingId) for c in report.claims]
    cw = max([5, *(min(cell_len(i), cap) for i in ids)])
    fw = max([7, *(min(cell_len(f), fcap) for f in findings)])
    left = 2 + cw + 2 + fw + 2 + 11 + 2
    room = width - left
    beside = room >= PROBLEMS_ROOM
    header = f"  {_cut('claim', cw)}  {_cut('finding', fw)}  {'verdict':<11}"
    lines.append(header + ("  problems" if beside else ""))
    for claim, cid, fid in zip(report.claims, ids, findings, strict=True):
        row = f"  {_cut(cid, cw)}  {_cut(fid, fw)}  {claim.verdict:<11}"
        problems = _safe(_problem_text(claim) or "-", 160)
        if beside:
            folded = _fold(problems, room)
            lines.append(f"{row}  {folded[0]}")
            lines += [" " * left + more for more in folded[1:]]
        elif problems == "-":
            lines.append(row.rstrip())
        else:
            lines.append(row.rstrip())
            lines += ["      " + more for more in _fold(problems, width - 6)]
    for line in foot:
        lines += ["  " + part for part in _fold(line, width - 2)]
    return lines


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
    text = _safe(" ".join(best.text.split()), width)
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
            + (f"; {_problem_text(c, limit=2)}" if c.problems or c.hints or c.error else "")
            + _passage_text(c)
            for c in listed
        ]
        flagged = sum(1 for c in report.claims if _flagged(c))
        if flagged > len(listed):
            lines.append(f"- … and {flagged - len(listed)} more in the report")
        parts.append(
            "Claims to look at first:\n"
            + wrap_untrusted("report", "\n".join(_safe(x) for x in lines))
        )
    return "\n\n".join(parts)
