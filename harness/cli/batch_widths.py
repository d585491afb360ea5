"""What `judge batch` shows on stderr at a given width: the summary table and the progress line.

The summary table (`summary_table`) is the full table, boxed, with whole headers, when it
fits without folding a cell; otherwise a compact table: no box, short headers, `?` for
`Unknown`, short outcome words, and the columns of least interest left out one by one
(`DROP_ORDER`) until it fits. A session name longer than its share of the width
(`name_cap`) is cut in the middle (its start and its end are what tell names apart). What
was cut is said under the table; `--results FILE` always has every column and whole names.

The progress line (`progress_line`) is made of pieces, each with a short form; below a
width the pieces of least interest are shortened first, then dropped, in `PROGRESS_ORDER`;
`done/total` and the elapsed time are never dropped.

Both are pure functions of their figures and the width (docs/batch.md, "Reading the
output", says what is shown at which width).
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table

from harness.batch.progress import Figures
from harness.contract.rubric import DIMENSIONS
from harness.text.terminal import one_line

# Full headers (the boxed table) and short ones (the compact table).
FULL_HEADERS = {
    "factualAccuracy": "factual",
    "citationAccuracy": "citation",
    "completeness": "complete",
    "sourceQuality": "sources",
    "toolEfficiency": "tools",
    "supported": "supp",
    "uncertain": "uncert",
    "unsupported": "unsupp",
    "disagrees": "disagree",
    "files": "file problems",
}
SHORT_HEADERS = {
    "factualAccuracy": "fact",
    "citationAccuracy": "cite",
    "completeness": "comp",
    "sourceQuality": "src",
    "toolEfficiency": "tool",
    "unknowns": "unk",
    "supported": "sup",
    "uncertain": "unc",
    "unsupported": "uns",
    "disagrees": "dis",
    "files": "fil",
}
SHORT_OUTCOMES = {
    "model-written": "written",
    "kept-previous": "kept",
    # harness.cli.batch_table's words for a fallback the batch's interrupt caused
    "fallback: interrupted": "interrupted",
}
# The compact table leaves these out first (least interest first); `session` and
# `outcome` are always shown.
DROP_ORDER = (
    "unknowns",
    "uncertain",
    "supported",
    "disagrees",
    "toolEfficiency",
    "sourceQuality",
    "completeness",
    "factualAccuracy",
    "unsupported",
    "citationAccuracy",
)
NUMERIC = frozenset({*DIMENSIONS, "unknowns", "supported", "uncertain", "unsupported", "files"})


def name_cap(width: int) -> int:
    """The most cells a session name takes in the compact table: two fifths of the width
    (at least 12)."""
    return max(12, width * 2 // 5)


def middle_cut(text: str, cells: int) -> str:
    """`text` in at most `cells` cells: its start, `…`, its end."""
    if cell_len(text) <= cells:
        return text
    if cells <= 1:
        return "…"[:cells]
    head, tail = [], []
    room = cells - 1
    left, right = 0, len(text) - 1
    take_head = True
    while left <= right:
        ch = text[left] if take_head else text[right]
        need = cell_len(ch)
        if need > room:
            break
        room -= need
        if take_head:
            head.append(ch)
            left += 1
        else:
            tail.append(ch)
            right -= 1
        take_head = not take_head
    return "".join(head) + "…" + "".join(reversed(tail))


@dataclass
class Summary:
    """The table to print, and what it left out (said under it)."""

    table: Table
    compact: bool
    columns: list[str]
    dropped: list[str] = field(default_factory=list)  # columns left out
    cut_names: int = 0  # session names cut in the middle

    def notes(self) -> list[str]:
        """The lines under the table: the short headers' meaning, and what was cut."""
        out: list[str] = []
        if self.compact:
            out.append("columns: " + "; ".join(self._legend()))
        cuts = []
        if self.dropped:
            cuts.append(f"{len(self.dropped)} column(s) left out ({', '.join(self.dropped)})")
        if self.cut_names:
            cuts.append(f"{self.cut_names} session name(s) cut in the middle")
        if cuts:
            out.append(
                f"at this width: {'; '.join(cuts)}; --results FILE (.csv or .jsonl) "
                "has every column and whole names"
            )
        return out

    def _legend(self) -> list[str]:
        def heads(names: Sequence[str]) -> str:
            return "/".join(SHORT_HEADERS[c] for c in names if c in self.columns)

        out = []
        if heads(DIMENSIONS):
            out.append(f"{heads(DIMENSIONS)} the scores (? Unknown)")
        if "unknowns" in self.columns:
            out.append("unk Unknown scores")
        claims = [c for c in ("supported", "uncertain", "unsupported") if c in self.columns]
        if claims:
            out.append(f"{heads(claims)} claims {'/'.join(claims)}")
        if "disagrees" in self.columns:
            out.append("dis the judge's citation score disagrees with the audit")
        if "files" in self.columns:
            out.append("fil problems in the session's files (named below)")
        return out


def _measure(table: Table, width: int) -> int:
    console = Console(file=io.StringIO(), width=max(width, 1000), color_system=None)
    return console.measure(table).maximum


def _cell(column: str, value: Any, compact: bool) -> str:
    from harness.text.terminal import one_line

    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if compact and value == "Unknown":
        return "?"
    if compact and column == "outcome":
        return SHORT_OUTCOMES.get(str(value), one_line(value))
    if compact and isinstance(value, float):
        return f"{value:.2f}".rstrip("0").rstrip(".")
    return one_line(value)


def _build(
    title: str,
    columns: Sequence[str],
    body: Sequence[dict[str, Any]],
    foot: Sequence[dict[str, Any]],
    *,
    compact: bool,
    cap: int | None,
) -> tuple[Table, int]:
    headers = SHORT_HEADERS if compact else FULL_HEADERS
    if compact:
        grid = Table(
            title=title,
            box=box.SIMPLE_HEAD,
            padding=(0, 0, 0, 1),
            pad_edge=False,
            show_edge=False,
        )
    else:
        grid = Table(title=title)
    for column in columns:
        grid.add_column(
            headers.get(column, column),
            no_wrap=True,
            justify="right" if compact and column in NUMERIC else "left",
        )
    cut = 0
    for i, r in enumerate([*body, *foot]):
        cells = [_cell(c, r.get(c), compact) for c in columns]
        if cap is not None and cell_len(cells[0]) > cap:
            cells[0] = middle_cut(cells[0], cap)
            cut += i < len(body)
        if foot and i == len(body):
            grid.add_section()
        grid.add_row(*cells)
    return grid, cut


def summary_table(
    title: str,
    columns: Sequence[str],
    body: Sequence[dict[str, Any]],
    foot: Sequence[dict[str, Any]],
    width: int,
) -> Summary:
    """The table of `body` rows (then the `foot` rows: totals, statistics) that fits in
    `width` cells, with what it left out."""
    full, _ = _build(title, columns, body, foot, compact=False, cap=None)
    if _measure(full, width) <= width:
        return Summary(full, compact=False, columns=list(columns))
    cap = name_cap(width)
    kept = list(columns)
    dropped: list[str] = []
    # `files` (problems in the session's files) goes first, and is not said to be left
    # out: the sessions it counts are named below the table whatever the width.
    for column in (None, *(["files"] if "files" in kept else []), *DROP_ORDER):
        if column is not None and column in kept:
            kept.remove(column)
            if column != "files":
                dropped.append(column)
        grid, cut = _build(title, kept, body, foot, compact=True, cap=cap)
        if _measure(grid, width) <= width:
            break
    else:  # even session and outcome alone are too wide: the names give way
        outcomes = [_cell("outcome", r.get("outcome"), True) for r in [*body, *foot]]
        cap = max(4, width - 2 - max(cell_len(o) for o in [*outcomes, "outcome"]))
        grid, cut = _build(title, kept, body, foot, compact=True, cap=cap)
    return Summary(grid, compact=True, columns=kept, dropped=dropped, cut_names=cut)


# -- the progress line ---------------------------------------------------------------


def clock(seconds: float) -> str:
    """1:05, or 1:02:03 past the hour."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


# Steps taken, in order, until the line fits: (piece, "short" or "drop").
PROGRESS_ORDER = (
    ("bar", "short"),
    ("requests", "short"),
    ("detail", "short"),
    ("count", "short"),
    ("label", "drop"),
    ("flight", "drop"),
    ("requests", "drop"),
    ("bar", "drop"),
    ("detail", "drop"),
    ("eta", "drop"),
    ("elapsed", "short"),
)
BAR_LONG, BAR_SHORT = 30, 10


def _pieces(f: Figures, bar: bool) -> list[tuple[str, str, str | None, str]]:
    """(name, long, short or None, separator before it), in the order shown."""
    paid = f"{f.requests:,} requests"
    short = f"{f.requests:,} req"
    if f.replayed:
        paid += f", {f.replayed:,} replayed"
        short += f", {f.replayed:,} replayed"
    out: list[tuple[str, str, str | None, str]] = [
        ("label", "judge batch" if bar else "judge batch:", None, "")
    ]
    if bar:
        out.append(("bar", "━" * BAR_LONG, "━" * BAR_SHORT, " "))
    out.append(("count", f"{f.done}/{f.total} sessions done", f"{f.done}/{f.total} done", " "))
    out.append(
        (
            "detail",
            f"({f.skipped} up to date or skipped, {f.failed} failed)",
            f"({f.failed} failed)",
            " ",
        )
    )
    if f.not_started:
        out.append(("stopped", f"{f.not_started} not started", None, ", "))
    out.append(("flight", f"{f.in_flight} in flight", None, ", "))
    out.append(("requests", f"{paid}, {f.tokens:,} tokens", f"{short}, {f.tokens:,} tok", ", "))
    out.append(("elapsed", f"{clock(f.elapsed)} elapsed", clock(f.elapsed), ", "))
    if not f.not_started:  # stopped: nothing more will be done, there is no ETA
        out.append(("eta", f"ETA {clock(f.eta) if f.eta is not None else '?'}", None, ", "))
    return out


@dataclass(frozen=True)
class ProgressLine:
    """The fitted line: `parts` are (name, text) in order; `bar` is the bar's width (0: no
    bar), drawn where the `bar` part is."""

    parts: tuple[tuple[str, str], ...]
    bar: int

    @property
    def plain(self) -> str:
        return "".join(text for _, text in self.parts)


def _doing(doing: Sequence[str], in_flight: int, room: int) -> str:
    """As many whole `name: what` as fit in `room` cells, then `+N` for the others; the
    first cut in the middle when even it does not fit."""
    shown: list[str] = []
    for i, item in enumerate(doing):
        more = in_flight - i - 1
        text = ", ".join([*shown, item]) + (f", +{more}" if more > 0 else "")
        if cell_len(text) > room:
            break
        shown.append(item)
    if not shown:
        return middle_cut(doing[0], room)
    rest = in_flight - len(shown)
    return ", ".join(shown) + (f", +{rest}" if rest > 0 else "")


def progress_line(f: Figures, width: int | None, *, bar: bool = False) -> ProgressLine:
    """The progress line fitted to `width` cells (None: whole, as a log file reads it)."""
    # Names come from the session: made safe here, where they are drawn.
    f = replace(f, doing=tuple(one_line(item) for item in f.doing))
    pieces = _pieces(f, bar)
    form = {name: "long" for name, *_ in pieces}

    def parts() -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        for name, long, short, sep in pieces:
            if form[name] == "drop":
                continue
            text = short if form[name] == "short" and short is not None else long
            out.append((name, (sep if out else "") + text))
        return out

    def fits() -> bool:
        return width is None or sum(cell_len(t) for _, t in parts()) <= width

    for name, step in PROGRESS_ORDER:
        if fits():
            break
        if name in form:
            form[name] = step
    shown = parts()
    if width is not None and f.doing:  # sessions in flight: in whatever room is left
        room = width - sum(cell_len(t) for _, t in shown) - 3
        if room >= 12:
            shown.append(("doing", f" [{_doing(f.doing, f.in_flight, room)}]"))
    elif width is None and f.doing:
        shown.append(("doing", f" [{', '.join(f.doing)}]"))
    if width is not None and sum(cell_len(t) for _, t in shown) > width:  # below ~15 cells
        text = middle_cut("".join(t for _, t in shown), width)
        return ProgressLine((("line", text),), 0)
    size = next((cell_len(t.strip()) for n, t in shown if n == "bar"), 0)
    return ProgressLine(tuple(shown), size)


def env_columns() -> int | None:
    """`COLUMNS` when it is set to a width, else None (a log file is read wide)."""
    value = os.environ.get("COLUMNS", "")
    return int(value) if value.isdigit() and int(value) > 0 else None


__all__ = [
    "DROP_ORDER",
    "PROGRESS_ORDER",
    "Figures",
    "ProgressLine",
    "Summary",
    "clock",
    "env_columns",
    "middle_cut",
    "name_cap",
    "progress_line",
    "summary_table",
]
