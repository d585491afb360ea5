"""`judge batch`'s stderr at a width: the summary table's and the progress line's rules."""

from __future__ import annotations

import dataclasses
import io
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.console import Console

from harness.batch.core import BatchResult, SessionResult, judge_batch
from harness.batch.limits import BatchLimits, Budget
from harness.batch.progress import Figures, Tracker
from harness.batch.result import COLUMNS
from harness.cli import cli
from harness.cli.batch_progress import LiveDisplay, PlainDisplay, plain_line
from harness.cli.batch_table import render
from harness.cli.batch_widths import (
    DROP_ORDER,
    middle_cut,
    name_cap,
    progress_line,
    summary_table,
)
from harness.contract.rubric import DIMENSIONS
from tests.support.paths import FIXTURES
from tests.support.tried import count

WIDTHS = [40, 60, 80, 120, 200]
NAMES = ["clean", "dangling-citations", "empty-findings", "large", "wrong-types"]


def _row(name: str, outcome: str = "model-written", score: Any = 4) -> dict[str, Any]:
    out: dict[str, Any] = {"session": name, "outcome": outcome}
    out.update({d: score for d in DIMENSIONS})
    out.update(unknowns=0, supported=205, uncertain=105, unsupported=10, disagrees=False)
    return out


def _printed(renderable: Any, width: int) -> list[str]:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    console.print(renderable)
    return console.file.getvalue().splitlines()  # type: ignore[attr-defined]


def _table(width: int, names: list[str] = NAMES) -> tuple[Any, list[str]]:
    body = [_row(n) for n in names]
    body[2] = _row(names[2], "fallback", "Unknown")
    foot = [{"session": "mean", **{d: 3.571 for d in DIMENSIONS}}]
    fitted = summary_table("judge batch", COLUMNS, body, foot, width)
    return fitted, _printed(fitted.table, width)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_summary_table_fits_and_keeps_one_line_per_session(width: int) -> None:
    fitted, lines = _table(width)
    assert all(cell_len(line) <= width for line in lines), lines
    for name in NAMES:  # a name within its share of the width is whole, on one line
        whole = sum(1 for line in lines if re.search(rf"(^|\W){re.escape(name)}\s", line))
        assert whole == (1 if len(name) <= name_cap(width) or not fitted.compact else 0)
    assert fitted.cut_names == sum(len(n) > name_cap(width) for n in NAMES) * fitted.compact
    # Only the columns of least interest are left out, in their order.
    assert fitted.dropped == list(DROP_ORDER[: len(fitted.dropped)])
    kept = [c for c in COLUMNS if c not in fitted.dropped]
    assert fitted.columns == kept
    if width >= 200:  # room for the whole table: boxed, whole words
        assert not fitted.compact and not fitted.dropped
        assert any("model-written" in line and "Unknown" in line for line in lines) is False
        assert any("model-written" in line for line in lines)
        assert any("┃ factual" in line for line in lines)
    else:
        assert fitted.compact and any("written" in line for line in lines)
        assert not any("model-written" in line for line in lines)
    if width >= 80:  # the scores and the unsupported claims, always
        assert {"citationAccuracy", "factualAccuracy", "unsupported", "toolEfficiency"} <= set(kept)
    if width >= 120:
        assert fitted.dropped == []
    notes = fitted.notes()
    if fitted.dropped:  # every cut is said, with where the whole table is
        assert any("left out" in n and "--results" in n for n in notes)
    assert all("left out" not in n for n in notes) or fitted.dropped


@pytest.mark.parametrize("width", WIDTHS)
def test_a_long_session_name_is_cut_in_the_middle_and_said(width: int) -> None:
    long = "session-2026-12-01-" + "x" * 60 + "-tail-017"
    fitted, lines = _table(width, [long, "b", "c", "d", "e"])
    assert all(cell_len(line) <= width for line in lines)
    if fitted.compact:
        assert fitted.cut_names == 1
        shown = next(line for line in lines if "…" in line)
        assert shown.startswith("session-") and "-017 " in shown  # both ends kept
        assert any("cut in the middle" in n for n in fitted.notes())
    else:
        assert any(long in line for line in lines)


@pytest.mark.parametrize(
    ("text", "cells", "expected"),
    [
        ("abcdef", 10, "abcdef"),
        ("abcdefghij", 5, "ab…ij"),
        ("abcdefghij", 4, "ab…j"),
        ("漢字漢字漢字", 5, "漢…字"),  # wide characters: two cells each
        ("abc", 1, "…"),
    ],
)
def test_middle_cut(text: str, cells: int, expected: str) -> None:
    assert middle_cut(text, cells) == expected
    assert cell_len(middle_cut(text, cells)) <= cells


@pytest.mark.parametrize(("width", "cap"), [(40, 16), (60, 24), (80, 32), (120, 48), (20, 12)])
def test_name_cap(width: int, cap: int) -> None:
    assert name_cap(width) == cap


RUNNING = Figures(
    done=3,
    total=24,
    skipped=1,
    failed=1,
    in_flight=2,
    requests=1234,
    replayed=0,
    tokens=5_678_901,
    elapsed=754,
    eta=3900,
    doing=("clean: turn 3", "large: audit 2/7"),
)


@pytest.mark.parametrize("bar", [False, True])
@pytest.mark.parametrize("width", WIDTHS)
def test_the_progress_line_keeps_done_total_and_elapsed(width: int, bar: bool) -> None:
    line = progress_line(RUNNING, width, bar=bar)
    assert cell_len(line.plain) <= width
    assert "3/24" in line.plain and "12:34" in line.plain
    if width >= 60:
        assert "ETA 1:05:00" in line.plain and "1 failed)" in line.plain
    if width >= 200:
        assert "sessions done (1 up to date or skipped, 1 failed)" in line.plain
        assert "1,234 requests, 5,678,901 tokens" in line.plain
        assert not bar or "[clean: turn" in line.plain  # in flight: in the room left
    if bar and width >= 60:
        assert line.bar > 0


def test_the_plain_line_without_a_width_is_whole() -> None:
    line = progress_line(dataclasses.replace(RUNNING, doing=()), None).plain
    assert line == (
        "judge batch: 3/24 sessions done (1 up to date or skipped, 1 failed), 2 in flight, "
        "1,234 requests, 5,678,901 tokens, 12:34 elapsed, ETA 1:05:00"
    )


def _ended(name: str, outcome: str = "model-written") -> SessionResult:
    ok = outcome != "not-started"
    note = (
        "not judged: the batch was interrupted before this session started; run the batch again"
        if not ok
        else "written"
    )
    halted = None if ok else "interrupted"
    return SessionResult(
        name, Path("/x") / name, outcome, ok, note, not ok, 0 if ok else 1, halted=halted
    )


def test_after_an_interrupt_the_bar_shows_what_was_done() -> None:
    tracker = Tracker()
    tracker.begin(24)
    for i in range(4):
        tracker.finished(f"s{i}", _ended(f"s{i}"))
    for i in range(4, 24):
        tracker.finished(f"s{i}", _ended(f"s{i}", "not-started"))
    assert tracker.eta() is None  # nothing more will be done
    line = plain_line(tracker)
    assert "4/24 sessions done" in line and "20 not started" in line
    assert "ETA" not in line and "24/24" not in line
    buffer = io.StringIO()
    display = LiveDisplay(tracker, Console(file=buffer, force_terminal=True, width=60))
    display.start()
    display.stop()
    drawn = buffer.getvalue()
    assert "4/24 done" in drawn and "20 not started" in drawn and "24/24" not in drawn


def test_sessions_never_started_are_one_row_and_one_line() -> None:
    sessions = [_ended(f"s{i}") for i in range(4)]
    sessions += [_ended(f"later-{i}", "not-started") for i in range(20)]
    batch = BatchResult(Path("/x"), sessions, 1.0, 0, 0)
    buffer = io.StringIO()
    render(batch, Console(file=buffer, width=80, force_terminal=True, color_system=None))
    text = buffer.getvalue()
    assert text.count("not judged") == 0 and text.count("before this session started") == 1
    said = "20 session(s) not started (later-0, later-1, later-2, later-3, later-4, and 15 more)"
    assert said in " ".join(text.split())
    assert "20 not started" in text and "later-7" not in text
    assert all(cell_len(line) <= 80 for line in text.splitlines())


def test_a_replayed_request_is_not_counted_as_paid() -> None:
    tracker = Tracker()
    budget = Budget(BatchLimits(max_tokens=150), tracker.paid, tracker.replayed)
    budget.add(100, replayed=True)
    budget.add(30)
    assert (tracker.requests, tracker.tokens) == (1, 30)
    assert (tracker.replayed_requests, tracker.replayed_tokens) == (1, 100)
    assert budget.tokens == 130  # the budget counts both, as the recorded run did
    budget.add(20, replayed=True)
    assert budget.reason() is not None
    line = plain_line(tracker)
    assert "1 requests, 2 replayed, 150 tokens" in line


def test_the_plain_display_fits_columns_when_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    tracker = Tracker()
    out = io.StringIO()
    display = PlainDisplay(tracker, out, interval=60).start()
    tracker.begin(24)
    display.stop()
    last = out.getvalue().splitlines()[-1]
    assert cell_len(last) <= 40 and "0/24" in last and "elapsed" in last


def test_a_replayed_batch_pays_for_nothing(tmp_path: Path) -> None:
    for name in ("clean", "no-answer"):
        shutil.copytree(FIXTURES / name, tmp_path / "root" / name)
    batch = judge_batch(tmp_path / "root", replay_dir=FIXTURES / "replays", fetch="stored")
    assert batch.exit_code == 0
    assert batch.requests == 0 and batch.replayed > 2 and batch.tokens > 0
    assert batch.totals["replayed"] == batch.replayed
    buffer = io.StringIO()
    render(batch, Console(file=buffer, width=80, force_terminal=True, color_system=None))
    said = " ".join(buffer.getvalue().split())
    assert f"0 requests paid, {batch.replayed:,} replayed (not sent)" in said


@pytest.mark.parametrize("width", WIDTHS)
def test_sessions_in_flight_are_named_whole_or_counted(width: int) -> None:
    figures = dataclasses.replace(RUNNING, in_flight=5)
    line = progress_line(figures, width, bar=True).plain
    assert cell_len(line) <= width
    named = re.search(r"\[(.*)\]$", line)
    if named is None:
        return  # no room left for them
    items = named.group(1).split(", ")
    assert items[-1] in ("+3", "+4") or items[-1] == "large: audit 2/7"
    for item in items[:-1]:
        assert item in figures.doing


@pytest.mark.parametrize("columns", [None, "60", "80"])
def test_batch_into_a_log_file_is_wide_unless_columns_is_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, columns: str | None
) -> None:
    for name in ("clean", "dangling-citations", "empty-findings"):
        shutil.copytree(FIXTURES / name, tmp_path / "root" / name)
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    replays = str(FIXTURES / "replays")
    result = CliRunner().invoke(cli, ["batch", str(tmp_path / "root"), "--replay-dir", replays])
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    if columns is None:  # read wide: the whole table, boxed, and each line whole
        assert any("│ dangling-citations │ model-written │" in x for x in lines)
        assert any(len(x) > 120 for x in lines)
    else:
        assert max(cell_len(x) for x in lines) <= int(columns)
        assert sum(x.startswith("dangling-citations ") for x in lines) == 1
    assert any(re.search(r"3/3 (sessions )?done", x) for x in lines)
    said = " ".join(result.stderr.split())  # folded or whole, nothing is cut
    assert re.search(
        r"3/3 sessions with a valid judge\.json \(1 fallback, 2 model-written\); "
        r"0 requests paid, [\d,]+ replayed \(not sent\), [\d,]+ tokens, [\d.]+ s",
        said,
    )
    if columns is not None:
        assert "--results FILE (.csv or .jsonl) has every column and whole names" in said


_NAME = st.text(
    st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=80
)  # controls, wide and combining characters, bidi marks: whatever a folder may be named


@given(names=st.lists(_NAME, min_size=1, max_size=6), width=st.integers(40, 200))
def test_any_names_fit_any_width(names: list[str], width: int) -> None:
    count("batch widths: hostile names")
    _, lines = _table(width, [*names, *(["pad"] * max(0, 3 - len(names)))])
    assert all(cell_len(line) <= width for line in lines), (width, lines)
    assert "\x1b" not in "".join(lines)  # names are shown escaped, never sent raw
    figures = dataclasses.replace(RUNNING, doing=tuple(f"{n}: turn 1" for n in names))
    line = progress_line(figures, width, bar=True).plain
    assert cell_len(line) <= width and "3/24" in line


def _scored(
    name: str,
    score: Any,
    outcome: str = "model-written",
    note: str = "written",
    halted: Any = None,
) -> Any:
    """A slimmed result: its table row taken, every dimension at `score`."""
    result = SessionResult(name, Path("/x") / name, outcome, True, note, False, 0, halted=halted)
    result.row = _row(name, outcome, score)
    return result


def _rendered(batch: BatchResult, width: int) -> list[str]:
    buffer = io.StringIO()
    render(batch, Console(file=buffer, width=width, force_terminal=True, color_system=None))
    return buffer.getvalue().splitlines()


@pytest.mark.parametrize("width", [60, 80, 200])
def test_the_mean_and_median_rows_have_one_format(width: int) -> None:
    # Means 4.0 and 3.667, medians 4 and 3.5 (statistics gives int or float as it comes).
    sessions = [_scored("a", 4), _scored("b", 4), _scored("c", 4), _scored("d", 3)]
    sessions[3].row["factualAccuracy"] = 4  # type: ignore[index]
    batch = BatchResult(Path("/x"), sessions, 1.0, 0, 0)
    lines = _rendered(batch, width)
    for label, expected in (("mean", {"4.00", "3.75"}), ("median", {"4.00"})):
        row = next(line for line in lines if re.match(rf"\W*{label}\b", line))
        cells = re.findall(r"\d+(?:\.\d+)?", row)
        assert cells and all(re.fullmatch(r"\d\.\d\d", c) for c in cells), row
        assert set(cells) <= expected, row


@pytest.mark.parametrize("width", [60, 80, 200])
def test_a_session_the_interrupt_wound_down_says_so_in_its_row(width: int) -> None:
    why = (
        "advisory all-Unknown judge.json written: the judge did not finish: "
        "the batch was interrupted"
    )
    empty = "advisory all-Unknown judge.json written: no findings to score"
    sessions = [
        _scored("done", 4),
        _scored("wound", "Unknown", "fallback", why, "interrupted"),
        _scored("empty", "Unknown", "fallback", empty),
        _ended("later", "not-started"),
    ]
    lines = _rendered(BatchResult(Path("/x"), sessions, 1.0, 0, 0), width)
    said = " ".join(" ".join(lines).split())
    wound = next(line for line in lines if re.match(r"\W*wound\b", line))
    assert "interrupted" in wound  # the row itself, not only the JSON line
    stopped = next(line for line in lines if re.match(r"\W*1 not started\b", line))
    assert "interrupted" in stopped and "not-started" not in stopped
    # Each fallback's reason is said under the table, in words.
    assert f"wound: {why}" in said and f"empty: {empty}" in said
    assert all(cell_len(line) <= width for line in lines)


def test_the_rows_say_why_the_batch_stopped_a_session_from_its_result_not_its_note() -> None:
    """An interrupt that landed while a Message Batch ran words the note its own way, and
    is still said in the row; a limit that stopped a session or kept one from starting is
    no interrupt."""
    polled = (
        "advisory all-Unknown judge.json written: the judge did not finish: the batch was "
        "interrupted while message batch m1 was in progress"
    )
    limited = (
        "advisory all-Unknown judge.json written: the judge did not finish: the batch's "
        "token budget (100 tokens) was used up"
    )
    later = SessionResult(
        "later",
        Path("/x/later"),
        "not-started",
        False,
        "not judged: the batch's time limit (60 s) was reached before this session started",
        True,
        1,
        halted="limit",
    )
    sessions = [
        _scored("polled", "Unknown", "fallback", polled, "interrupted"),
        _scored("limited", "Unknown", "fallback", limited, "limit"),
        _scored("done", 4),
        later,
    ]
    lines = _rendered(BatchResult(Path("/x"), sessions, 1.0, 0, 0), 200)
    row = {
        name: next(line for line in lines if re.match(rf"\W*{name}\b", line))
        for name in ("polled", "limited")
    }
    assert "fallback: interrupted" in row["polled"]
    assert "fallback" in row["limited"] and "interrupted" not in row["limited"]
    stopped = next(line for line in lines if re.match(r"\W*1 not started\b", line))
    assert "batch limit" in stopped and "interrupted" not in stopped


@pytest.mark.parametrize("width", [60, 80])
def test_a_sessions_line_under_the_table_folds_under_itself(width: int) -> None:
    long = "advisory all-Unknown judge.json written: " + "a reason of many words " * 8
    sessions = [_scored("done", 4), _scored("empty", "Unknown", "fallback", long.strip())]
    lines = _rendered(BatchResult(Path("/x"), sessions, 1.0, 0, 0), width)
    first = next(i for i, line in enumerate(lines) if line.startswith("  empty: advisory"))
    folded = lines[first + 1 : first + 4]
    # Its continuation lines are indented past the name's, so one session reads as one item.
    assert len(folded) == 3 and all(re.match(r"    \S", line) for line in folded), lines
    assert all(cell_len(line) <= width for line in lines)
    said = " ".join(" ".join(lines[first:]).split())
    assert f"empty: {' '.join(long.split())}" in said
