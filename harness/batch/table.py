"""The batch's table as data: per-dimension statistics, totals, and the `--results` file.

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
from typing import Any

from harness.batch.result import COLUMNS, VERDICTS, BatchResult, row, rows
from harness.contract.rubric import DIMENSIONS
from harness.errors import UsageError, WriteError

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
    inside a session under `root`, nor where a file cannot be written
    (harness.session.discover.check_output)."""
    from harness.session.discover import check_output

    result_format(path, option)
    check_output(path, root, option, new_folder=True)  # the batch makes its folder


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
    "result_format",
    "row",
    "write_results",
]
