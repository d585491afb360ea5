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
import re
import statistics
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.contract.rubric import DIMENSIONS
from harness.errors import UsageError, WriteError
from harness.text.terminal import one_line

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


def result_format(path: Path, option: str = "--results") -> str:
    """`csv` or `jsonl` from the extension; a usage error otherwise (checked up front)."""
    kind = RESULT_FORMATS.get(path.suffix.lower())
    if kind is None:
        raise UsageError(
            f"{option} {path}: the extension must be .csv, .jsonl or .ndjson "
            "(it decides the format)"
        )
    return kind


def check_target(path: Path, root: Path, option: str = "--results") -> None:
    """Before any session is judged or read: the extension, and that the file is not
    inside a session under `root` (a session's files are the pipeline's; judge writes
    only judge.json and .judge/ there, and a file added would change what it judges)."""
    from harness.session.discover import holds_session_files

    result_format(path, option)
    try:
        base = Path(root).expanduser().resolve()
        folder = Path(path).expanduser().absolute().parent.resolve()
    except (OSError, RuntimeError):
        return  # an unresolvable path: the write itself says what is wrong
    if folder != base and base in folder.parents:
        session = base / folder.relative_to(base).parts[0]
        if holds_session_files(session):
            raise UsageError(
                f"{option} {path} is inside the session {session.name}: judge writes only "
                "judge.json and .judge/ into a session; write the file in ROOT or elsewhere"
            )


def row(result: SessionResult) -> dict[str, Any]:
    if result.row is not None:  # slimmed: its row was taken while it was whole
        return dict(result.row)
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


def render(batch: BatchResult, console: Any) -> None:
    """The summary table, totals and statistics, and the outcomes, on `console` (rich),
    fitted to its width (harness.batch.widths)."""
    from harness.batch.widths import summary_table

    table = rows(batch)
    shown = [r for r in table if r["outcome"] != "not-started"]
    never = len(table) - len(shown)
    foot: list[dict[str, Any]] = []
    if never:  # one row for all the sessions never started (the notes name them)
        foot.append({"session": f"{never} not started", "outcome": "not-started"})
    if table:
        foot.append(totals_row(table))
        stats = dimension_stats(table)
        for label in ("mean", "median", "unknown"):
            foot.append({"session": label, **{d: stats[d][label] for d in DIMENSIONS}})
    fitted = summary_table(
        f"judge batch: {len(table)} session(s)", COLUMNS, shown, foot, console.width
    )
    console.print(fitted.table)
    for note in fitted.notes():
        _say(console, f"judge batch: {note}")
    totals = batch.totals
    outcomes = ", ".join(f"{n} {k}" for k, n in sorted(totals["outcomes"].items()))
    replayed = totals.get("replayed", 0)
    requests = (
        f"{totals['requests']:,} requests paid, {replayed:,} replayed (not sent)"
        if replayed
        else f"{totals['requests']:,} requests"
    )
    _say(
        console,
        f"judge batch: {totals['ok']}/{totals['sessions']} sessions with a valid judge.json "
        f"({outcomes or 'none'}); {requests}, {totals['tokens']:,} tokens, "
        f"{totals['seconds']:.1f} s",
    )
    api = batch.batch_api
    if api:
        failed = ", ".join(f"{n} {k}" for k, n in sorted(api["failed"].items())) or "none"
        _say(
            console,
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
        )
        channels = api.get("channels")
        if channels:
            _say(
                console,
                f"judge batch: by channel: {_channel_words('audit', channels['audit'])}; "
                f"{_channel_words('agent turns', channels['judge'])}",
            )
    paced = batch.rate_limit
    if paced and paced["pauses"]:
        _say(
            console,
            f"judge batch: waited for the API's rate limit: closed {paced['closedSeconds']:.1f} s "
            f"({paced['pauses']} signal(s): 429 retry-after or a limit's remaining at 0); "
            f"{paced['heldRequests']:,} request(s) held, {paced['heldSeconds']:.1f} s in all",
        )
    never_started = [s for s in batch.sessions if s.outcome == "not-started"]
    for s in batch.sessions:
        if s.outcome == "not-started":
            continue
        # A request the API refused as invalid is a defect to fix, never a passing outage:
        # said even when the session still has its (advisory) judge.json.
        lines = [s.note] if not s.ok or _refused_as_invalid(s, "outcome") else []
        if _refused_as_invalid(s, "citations"):
            failure = s.audit_failure
            if failure is None and s.record is not None and s.record.citations is not None:
                failure = s.record.citations.failure
            lines.append(f"citation audit: {failure}")
        for line in lines:
            _say(console, f"  {one_line(s.session)}: {one_line(line)}")
    if never_started:  # one line, not one per session: they all say the same
        names = ", ".join(one_line(s.session) for s in never_started[:5])
        more = len(never_started) - 5
        _say(
            console,
            f"  {len(never_started)} session(s) not started ({names}"
            f"{f', and {more} more' if more > 0 else ''}): "
            f"{one_line(never_started[0].note).removeprefix('not judged: ')}",
        )


def _say(console: Any, text: str) -> None:
    """A line of prose: folded at word ends to a terminal's width (or to COLUMNS when it
    is set); whole in a log file, which is read wide."""
    from harness.batch.widths import env_columns

    if console.is_terminal or env_columns() is not None:
        console.print(text, markup=False, highlight=False, overflow="fold")
    else:  # soft wrap: neither folded nor cut
        console.print(text, markup=False, highlight=False, soft_wrap=True)


def _refused_as_invalid(s: Any, part: str) -> bool:
    """Whether the session's run (`outcome`) or audit (`citations`) ended because the API
    refused a request as invalid (run.json's `apiFault`)."""
    if getattr(s, "refused", None) is not None:  # slimmed: taken while it was whole
        return part in s.refused
    record = getattr(s, "record", None)
    section = getattr(record, part, None) if record is not None else None
    return getattr(section, "apiFault", None) == "invalid-request"


def _channel_words(what: str, use: dict[str, dict[str, int]]) -> str:
    batch, ordinary = use["batch"], use["ordinary"]
    return (
        f"{what} {batch['requests']:,} through batches ({batch['tokens']:,} tokens, half "
        f"price), {ordinary['requests']:,} through the ordinary API "
        f"({ordinary['tokens']:,} tokens, full price)"
    )


FORMULA_STARTS = ("=", "+", "-", "@", "'")
_CSV_UNSAFE = {"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"}


def _csv_char(ch: str) -> str:
    if ch == "\\":
        return "\\\\"
    if unicodedata.category(ch) not in _CSV_UNSAFE:
        return ch
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def csv_text(value: str) -> str:
    """A text cell, escaped injectively (two texts never give one cell; `csv_untext`
    undoes it): a backslash is doubled and each control, format, separator, surrogate or
    unassigned character becomes `\\xHH`, `\\uHHHH` or `\\UHHHHHHHH` (an ESC in a session
    folder's name would act on the terminal of whoever prints the file); a text a
    spreadsheet would run as a formula (`=HYPERLINK(...)`), or one starting with an
    apostrophe, gets one apostrophe in front, which the spreadsheet shows as text."""
    if value.isascii() and value.isprintable() and "\\" not in value:
        out = value  # the common case, at C speed
    else:
        out = "".join(_csv_char(c) for c in value)
    return "'" + out if out.startswith(FORMULA_STARTS) else out


_ESCAPED = re.compile(r"\\(\\|x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8})")


def csv_untext(cell: str) -> str:
    """The text `csv_text` escaped into `cell`."""
    if cell.startswith("'"):
        cell = cell[1:]

    def one(match: re.Match[str]) -> str:
        body = match.group(1)
        return "\\" if body == "\\" else chr(int(body[1:], 16))

    return _ESCAPED.sub(one, cell)


def _csv_cell(value: Any) -> Any:
    """A CSV cell: empty for None, `csv_text` for a text, a number as it is."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return csv_text(value)
    return value


def write_results(path: Path, batch: BatchResult, option: str = "--results") -> None:
    """The rows as CSV or JSON Lines, by extension, written whole or not at all."""
    from harness.fs.files import replace_atomically

    kind = result_format(path, option)
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
            f"cannot write {option} {path}: {exc.strerror or exc}; choose a writable path",
            path=str(path),
        ) from exc


__all__ = [
    "COLUMNS",
    "csv_text",
    "csv_untext",
    "dimension_stats",
    "render",
    "result_format",
    "row",
    "write_results",
]
