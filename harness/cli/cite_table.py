"""`judge cite`'s table on stderr: one line per claim (id, finding, verdict, problems), then
the totals, fitted to a terminal's width or wide for a log file."""

from __future__ import annotations

from collections.abc import Sequence

from harness.audit.fetched import ignored_note
from harness.audit.report import CitationReport
from harness.audit.text import counts_line, cut_line, hints_line, problem_text, problems_line
from harness.session.file_problems import summary


def table_lines(
    report: CitationReport, width: int | None = None, files: Sequence[str] = ()
) -> list[str]:
    """One line per claim (id, finding, verdict, problems), then the totals.

    `width` (a terminal's columns, 40 at least): no line is wider; ids are cut with `…` at
    their share of it and the problems fold under their column (or, with less than 20
    cells left for them, onto indented lines below the claim). None: wide, one line per
    claim, as a log file is read. `files`: the session's file problems, said under the
    totals ("N problems in the session's files; the first: …")."""
    how = (
        f"offline ({report.offlineReason})"
        if report.offline
        else f"model {', '.join(report.models) or report.model}, concurrency {report.concurrency}"
        f", against {report.against}"
    )
    head = [f"citations: session {cut_line(report.sessionId)}: {how}"]
    hinted = hints_line(report)
    u = report.usage
    foot = [
        counts_line(report),
        problems_line(report),
        *([said] if (said := summary(files)) is not None else []),
        *([hinted] if hinted is not None else []),
        *([ignored] if (ignored := _ignored(report)) is not None else []),
        f"requests {report.totals.requests}, tokens in {u.input_tokens:,} / out "
        f"{u.output_tokens:,} (cache read {u.cache_read_input_tokens:,}, written "
        f"{u.cache_creation_input_tokens:,})",
    ]
    if width is not None:
        return _fitted(report, head, foot, max(width, 40))
    lines = list(head)
    width = max([5, *(len(cut_line(c.claimId, 40)) for c in report.claims)])
    fwidth = max([7, *(len(cut_line(c.findingId, 24)) for c in report.claims)])
    lines.append(f"  {'claim':<{width}}  {'finding':<{fwidth}}  {'verdict':<11}  problems")
    for claim in report.claims:
        problems = problem_text(claim) or "-"
        lines.append(
            f"  {cut_line(claim.claimId, 40):<{width}}  {cut_line(claim.findingId, 24):<{fwidth}}  "
            f"{claim.verdict:<11}  {cut_line(problems, 160)}"
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
    ids = [cut_line(c.claimId) for c in report.claims]
    findings = [cut_line(c.findingId) for c in report.claims]
    cw = max([5, *(min(cell_len(i), cap) for i in ids)])
    fw = max([7, *(min(cell_len(f), fcap) for f in findings)])
    left = 2 + cw + 2 + fw + 2 + 11 + 2
    room = width - left
    beside = room >= PROBLEMS_ROOM
    header = f"  {_cut('claim', cw)}  {_cut('finding', fw)}  {'verdict':<11}"
    lines.append(header + ("  problems" if beside else ""))
    for claim, cid, fid in zip(report.claims, ids, findings, strict=True):
        row = f"  {_cut(cid, cw)}  {_cut(fid, fw)}  {claim.verdict:<11}"
        problems = cut_line(problem_text(claim) or "-", 160)
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


__all__ = ["table_lines"]
