"""`judge batch`'s summary on stderr: the table fitted to the console's width
(harness.cli.batch_widths), the totals, and what went wrong, in words.

The rows are the library's (harness.batch.result.row); this module only draws them.
"""

from __future__ import annotations

from typing import Any

from harness.batch.result import COLUMNS, BatchResult, rows
from harness.batch.table import dimension_stats, totals_row
from harness.contract.rubric import DIMENSIONS
from harness.events import Halt
from harness.text.terminal import one_line


def render(batch: BatchResult, console: Any) -> None:
    """The summary table, totals and statistics, and the outcomes, on `console` (rich),
    fitted to its width (harness.cli.batch_widths)."""
    from harness.cli.batch_widths import summary_table

    table = rows(batch)
    # How many problems each session's files have, in a column of the table (shown when
    # any has one; the first is named below the table).
    files = {s.session: s.files_count for s in batch.sessions if s.files_count}
    columns = [*COLUMNS, *(["files"] if files else [])]
    halted = {s.session: s.halted for s in batch.sessions}
    shown = [
        {**r, "files": files.get(r["session"]), "outcome": _outcome_words(r, halted)}
        for r in table
        if r["outcome"] != "not-started"
    ]
    never = len(table) - len(shown)
    foot: list[dict[str, Any]] = []
    if never:  # one row for all the sessions never started (the notes name them)
        first = next(s for s in batch.sessions if s.outcome == "not-started")
        why = "interrupted" if first.halted == "interrupted" else "batch limit"
        foot.append({"session": f"{never} not started", "outcome": why})
    if table:
        foot.append(totals_row(table))
        stats = dimension_stats(table)
        for label in ("mean", "median"):  # one format: two decimals, as the index's mean
            foot.append({"session": label, **{d: _stat(stats[d][label]) for d in DIMENSIONS}})
        foot.append({"session": "unknown", **{d: stats[d]["unknown"] for d in DIMENSIONS}})
    fitted = summary_table(
        f"judge batch: {len(table)} session(s)", columns, shown, foot, console.width
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
        if s.ok and s.outcome == "fallback":  # its row's ? ? ? ? ?, said in words
            lines.append(s.note)
        if _refused_as_invalid(s, "citations"):
            failure = s.audit_failure
            if failure is None and s.record is not None and s.record.citations is not None:
                failure = s.record.citations.failure
            lines.append(f"citation audit: {failure}")
        for line in lines:
            _say(console, f"  {one_line(s.session)}: {one_line(line)}", hang=4)
        if s.files is not None:  # the table's `files` column, said
            _say(console, f"  {one_line(s.session)}: {one_line(s.files)}", hang=4)
    if never_started:  # one line, not one per session: they all say the same
        names = ", ".join(one_line(s.session) for s in never_started[:5])
        more = len(never_started) - 5
        _say(
            console,
            f"  {len(never_started)} session(s) not started ({names}"
            f"{f', and {more} more' if more > 0 else ''}): "
            f"{one_line(never_started[0].note).removeprefix('not judged: ')}",
            hang=4,
        )


def _stat(value: float | None) -> str | None:
    """A mean or a median in the table: always two decimals (3.00, 3.17, 4.00), so that a
    column never mixes 4.0, 4 and 3.167."""
    return None if value is None else f"{value:.2f}"


def _outcome_words(r: dict[str, Any], halted: dict[str, Halt | None]) -> str:
    """The outcome cell: an advisory fallback the batch's interrupt caused says so, so that
    its row of ? reads as what happened (the whole reason is said under the table)."""
    outcome = str(r["outcome"])
    if outcome == "fallback" and halted.get(r["session"]) == "interrupted":
        return "fallback: interrupted"
    return outcome


def _say(console: Any, text: str, *, hang: int = 0) -> None:
    """A line of prose: folded at word ends to a terminal's width (or to COLUMNS when it
    is set), its continuation lines indented by `hang` cells so that a session's lines
    under the table read as one item each; whole in a log file, which is read wide."""
    from rich.text import Text

    from harness.cli.batch_widths import env_columns

    if (console.is_terminal or env_columns() is not None) and hang and console.width > 2 * hang:
        body = text.lstrip(" ")
        lead = text[: len(text) - len(body)]
        lines = Text(body).wrap(console, console.width - hang, overflow="fold")
        for i, line in enumerate(lines):
            shown = (lead if i == 0 else " " * hang) + line.plain.rstrip()
            console.print(shown, markup=False, highlight=False, overflow="fold")
    elif console.is_terminal or env_columns() is not None:
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


__all__ = ["render"]
