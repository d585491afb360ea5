"""The batch's summary table: one row per session, totals, and per-dimension statistics.

A row: the session, its outcome, the five scores (an integer, `Unknown`, or empty when
there is no judge.json), how many are Unknown, the audit's supported / uncertain /
unsupported claims and whether the judge's citationAccuracy disagrees with the audit
(run.json's `citations.agreement`). Statistics: mean and median of each dimension over
the sessions that scored it with a number; `Unknown` is counted apart, never as a 0.

`--results FILE` writes the rows as CSV (`.csv`) or JSON Lines (`.jsonl`, `.ndjson`).
"""

from __future__ import annotations

import csv
import io
import json
import statistics
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.batch.safe import safe
from harness.contract.rubric import DIMENSIONS
from harness.errors import UsageError, WriteError

if TYPE_CHECKING:
    from harness.batch.core import BatchResult, SessionResult

VERDICTS = ("supported", "uncertain", "unsupported")
COLUMNS = [
    "session",
    "outcome",
    *DIMENSIONS,
    "unknowns",
    *VERDICTS,
    "disagrees",
]
RESULT_FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}


def result_format(path: Path) -> str:
    """`csv` or `jsonl` from the extension; a usage error otherwise (checked up front)."""
    kind = RESULT_FORMATS.get(path.suffix.lower())
    if kind is None:
        raise UsageError(
            f"--results {path}: the extension must be .csv, .jsonl or .ndjson "
            "(it decides the format)"
        )
    return kind


def row(result: SessionResult) -> dict[str, Any]:
    out: dict[str, Any] = {"session": result.session, "outcome": result.outcome}
    scores = result.judgment.scores.model_dump() if result.judgment is not None else {}
    for dim in DIMENSIONS:
        out[dim] = scores.get(dim)
    out["unknowns"] = len(result.judgment.unknowns) if result.judgment is not None else None
    citations = result.record.citations if result.record is not None else None
    verdicts = citations.verdicts.model_dump() if citations and citations.verdicts else {}
    for verdict in VERDICTS:
        out[verdict] = verdicts.get(verdict)
    agreement = citations.agreement if citations is not None else None
    out["disagrees"] = agreement.disagrees if agreement is not None else None
    return out


def rows(batch: BatchResult) -> list[dict[str, Any]]:
    return [row(s) for s in batch.sessions]


def dimension_stats(table: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per dimension: n scored with a number, mean, median, unknown, missing."""
    table = list(table)
    stats: dict[str, dict[str, Any]] = {}
    for dim in DIMENSIONS:
        values = [r[dim] for r in table]
        numbers = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
        stats[dim] = {
            "n": len(numbers),
            "mean": round(statistics.fmean(numbers), 3) if numbers else None,
            "median": statistics.median(numbers) if numbers else None,
            "unknown": sum(v == "Unknown" for v in values),
            "missing": sum(v is None for v in values),
        }
    return stats


def totals_row(table: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"session": f"total ({len(table)})", "outcome": ""}
    for dim in DIMENSIONS:
        out[dim] = ""
    out["unknowns"] = sum(r["unknowns"] or 0 for r in table)
    for verdict in VERDICTS:
        out[verdict] = sum(r[verdict] or 0 for r in table)
    out["disagrees"] = sum(bool(r["disagrees"]) for r in table)
    return out


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return safe(value)


def render(batch: BatchResult, console: Any) -> None:
    """The summary table, totals and statistics, and the outcomes, on `console` (rich)."""
    from rich.table import Table

    table = rows(batch)
    short = {
        "factualAccuracy": "factual",
        "citationAccuracy": "citation",
        "completeness": "complete",
        "sourceQuality": "sources",
        "toolEfficiency": "tools",
        "supported": "supp",
        "uncertain": "uncert",
        "unsupported": "unsupp",
        "disagrees": "disagree",
    }
    grid = Table(title=f"judge batch: {len(table)} session(s)", show_footer=False)
    for column in COLUMNS:
        grid.add_column(short.get(column, column), overflow="fold")
    for r in table:
        grid.add_row(*(_cell(r[c]) for c in COLUMNS))
    if table:
        total = totals_row(table)
        grid.add_section()
        grid.add_row(*(_cell(total[c]) for c in COLUMNS))
        stats = dimension_stats(table)
        for label in ("mean", "median", "unknown"):
            cells = [label, ""]
            cells += [_cell(stats[d][label]) for d in DIMENSIONS]
            cells += [""] * (len(COLUMNS) - len(cells))
            grid.add_row(*cells)
    console.print(grid)
    totals = batch.totals
    outcomes = ", ".join(f"{n} {k}" for k, n in sorted(totals["outcomes"].items()))
    console.print(
        f"judge batch: {totals['ok']}/{totals['sessions']} sessions with a valid judge.json "
        f"({outcomes or 'none'}); {totals['requests']:,} requests, {totals['tokens']:,} "
        f"tokens, {totals['seconds']:.1f} s",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    api = batch.batch_api
    if api:
        failed = ", ".join(f"{n} {k}" for k, n in sorted(api["failed"].items())) or "none"
        console.print(
            f"judge batch: Message Batches: {api['submissions']} submitted "
            f"({api['resumed']} resumed), {api['requests']:,} audit requests, "
            f"{api['succeeded']:,} succeeded, failed: {failed}; "
            f"{api['answeredFromBatches']:,} answered from batches, "
            f"{api['fellBackToTheAPI']:,} fell back to the ordinary API; agent turns: "
            f"{api['judgeRounds']} round(s), {api['judgeRequests']:,} turns, "
            f"{api['judgeFellBack']:,} fell back, {api.get('judgeResumed', 0)} batch(es) "
            f"resumed, {api.get('judgeReplayed', 0):,} replayed from saved conversations; "
            f"not submitted for the batch's limits: {api.get('notSubmitted', 0):,} audit "
            f"requests, {api.get('judgeHalted', 0):,} turns",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    for s in batch.sessions:
        # A request the API refused as invalid is a defect to fix, never a passing outage:
        # said even when the session still has its (advisory) judge.json.
        lines = [s.note] if not s.ok or _refused_as_invalid(s, "outcome") else []
        if _refused_as_invalid(s, "citations"):
            assert s.record is not None and s.record.citations is not None
            lines.append(f"citation audit: {s.record.citations.failure}")
        for line in lines:
            console.print(
                f"  {safe(s.session)}: {safe(line)}",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )


def _refused_as_invalid(s: Any, part: str) -> bool:
    """Whether the session's run (`outcome`) or audit (`citations`) ended because the API
    refused a request as invalid (run.json's `apiFault`)."""
    record = getattr(s, "record", None)
    section = getattr(record, part, None) if record is not None else None
    return getattr(section, "apiFault", None) == "invalid-request"


FORMULA_STARTS = ("=", "+", "-", "@")


def _csv_cell(value: Any) -> Any:
    """A CSV cell: control characters escaped as the table escapes them (an ESC in a
    session folder's name would act on the terminal of whoever prints the file), and a
    text a spreadsheet would run as a formula (a folder named `=HYPERLINK(...)`) starting
    with an apostrophe, which the spreadsheet shows as text."""
    if value is None:
        return ""
    if isinstance(value, str):
        value = safe(value)
        if value.startswith(FORMULA_STARTS):
            return "'" + value
    return value


def write_results(path: Path, batch: BatchResult) -> None:
    """The rows as CSV or JSON Lines, by extension, written whole or not at all."""
    from harness.fs.files import replace_atomically

    kind = result_format(path)
    table = rows(batch)
    if kind == "csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        for r in table:
            writer.writerow({k: _csv_cell(v) for k, v in r.items()})
        text = buffer.getvalue()
    else:
        text = "".join(json.dumps(r, ensure_ascii=True) + "\n" for r in table)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_atomically(path, text.encode())
    except OSError as exc:
        raise WriteError(
            f"cannot write --results {path}: {exc.strerror or exc}; choose a writable path",
            path=str(path),
        ) from exc


__all__ = ["COLUMNS", "dimension_stats", "render", "result_format", "row", "write_results"]
