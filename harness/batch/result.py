"""What a batch returns: one `SessionResult` per session, a `BatchResult` for the whole,
and each session's row of the summary table (`row`): data only, drawn by harness.cli.

The scheduler (harness.batch.core), the merge, the progress tracker and the results file
all read these types; none of them is imported here, so the batch's modules import one way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.artifacts.record import RunRecord
from harness.contract.judgment import Judgment
from harness.contract.rubric import DIMENSIONS
from harness.errors import EXIT_FAILED, EXIT_OK
from harness.events import Halt

VERDICTS = ("supported", "uncertain", "unsupported")
COLUMNS = [
    "session",
    "outcome",
    *DIMENSIONS,
    "unknowns",
    *VERDICTS,
    "disagrees",
]
FAILED_OUTCOMES = ("not-written", "not-started", "error")


@dataclass(slots=True)
class SessionResult:
    """What became of one session; `line()` is its stdout line."""

    session: str
    dir: Path
    outcome: str  # a run's outcome kind, or "not-started" / "error"; merged: "not-judged" / "stale"
    wrote_judge: bool
    note: str
    skipped: bool  # up to date, or not started because a batch limit was reached
    exit_code: int
    # Read them as attributes; a repr stays one short line (the record is the whole run).
    judgment: Judgment | None = field(default=None, repr=False)
    record: RunRecord | None = field(default=None, repr=False)
    seconds: float = 0.0
    # the summary-table row, once slimmed (`slim`)
    row: dict[str, Any] | None = field(default=None, repr=False)
    # Kept through `slim` for the summary: which parts the API refused as invalid
    # (run.json's `outcome`/`citations` apiFault) and the audit's failure in words.
    refused: tuple[str, ...] | None = field(default=None, repr=False)
    audit_failure: str | None = field(default=None, repr=False)
    # "N problems in the session's files; the first: …" (harness.session.file_problems),
    # and N
    files: str | None = None
    files_count: int = 0
    # Set where the batch stops the session (harness.batch.core), or read back from its
    # run.json (`outcome.halted`) by the merge: its interrupt or a limit wound it down or
    # kept it from starting; None when it ran its course. Not in its line.
    halted: Halt | None = None

    def slim(self) -> SessionResult:
        """This result with its table row in place of its judgment and run record: what
        the batch keeps of each session once `on_result` has seen it whole (10,000
        sessions in about the memory of 1,000)."""
        kept = row(self)
        record = self.record
        refused = tuple(
            part
            for part in ("outcome", "citations")
            if record is not None
            and getattr(getattr(record, part, None), "apiFault", None) == "invalid-request"
        )
        return SessionResult(
            self.session,
            self.dir,
            self.outcome,
            self.wrote_judge,
            self.note,
            self.skipped,
            self.exit_code,
            seconds=self.seconds,
            row=kept,
            refused=refused,
            audit_failure=(
                record.citations.failure
                if record is not None and record.citations is not None
                else None
            ),
            files=self.files,
            files_count=self.files_count,
            halted=self.halted,
        )

    @property
    def ok(self) -> bool:
        """The session ends with a valid judge.json (written now, kept, or up to date)."""
        return self.exit_code == EXIT_OK and self.outcome not in FAILED_OUTCOMES

    def as_dict(self) -> dict[str, Any]:
        # The line's keys are the contract's; the session's file problems are said in its
        # note, after the run's own (the receipt and run.json keep the run's note).
        note = self.note if self.files is None else f"{self.note} [{self.files}]"
        return {
            "session": self.session,
            "dir": str(self.dir),
            "wroteJudge": self.wrote_judge,
            "upToDate": self.outcome == "up-to-date",  # as the run's receipt says
            "note": note,
            "outcome": self.outcome,
            "skipped": self.skipped,
        }

    def line(self) -> str:
        # ensure_ascii: one line whatever the note holds (U+2028, U+0085, escapes).
        return json.dumps(self.as_dict(), ensure_ascii=True)


@dataclass(slots=True)
class BatchResult:
    root: Path
    sessions: list[SessionResult]
    seconds: float
    requests: int
    tokens: int
    batch_api: dict[str, Any] | None = None  # --batch-api: submissions, results, fallbacks
    rate_limit: dict[str, Any] | None = None  # the shared pacer's waits (harness.model.pacing)
    replayed: int = 0  # requests answered from --replay-dir's recordings: none was sent

    def __repr__(self) -> str:  # one line, however many sessions (`sessions` lists them)
        t = self.totals
        return (
            f"BatchResult(root={str(self.root)!r}, sessions={t['sessions']}, ok={t['ok']}, "
            f"failed={t['failed']}, skipped={t['skipped']}, requests={self.requests}, "
            f"tokens={self.tokens}, seconds={t['seconds']}, exit_code={self.exit_code})"
        )

    @property
    def exit_code(self) -> int:
        """0 when every session ends with a valid judge.json, else 1."""
        return EXIT_OK if all(s.ok for s in self.sessions) else EXIT_FAILED

    @property
    def totals(self) -> dict[str, Any]:
        outcomes: dict[str, int] = {}
        for s in self.sessions:
            outcomes[s.outcome] = outcomes.get(s.outcome, 0) + 1
        return {
            "sessions": len(self.sessions),
            "ok": sum(s.ok for s in self.sessions),
            "failed": sum(not s.ok for s in self.sessions),
            "skipped": sum(s.skipped for s in self.sessions),
            "outcomes": outcomes,
            "requests": self.requests,
            "replayed": self.replayed,
            "tokens": self.tokens,
            "seconds": round(self.seconds, 3),
            "batchApi": self.batch_api,
            "rateLimit": self.rate_limit,
        }


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


__all__ = [
    "COLUMNS",
    "FAILED_OUTCOMES",
    "VERDICTS",
    "BatchResult",
    "SessionResult",
    "row",
    "rows",
]
