"""What `judge_session` returns: the receipt, the exit code, the outcome and the record."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from harness.artifacts.record import OutcomeKind, Receipt, RunRecord
from harness.contract.judgment import Judgment
from harness.errors import EXIT_OK
from harness.run.uptodate import UpToDate


@dataclass(frozen=True, slots=True)
class RunResult:
    receipt: Receipt
    exit_code: int
    outcome: OutcomeKind
    reason: str
    # Read them as attributes; a repr stays one short line (the record is the whole run).
    judgment: Judgment | None = field(default=None, repr=False)
    record: RunRecord | None = field(default=None, repr=False)
    record_path: Path | None = None
    # The session's file problems as `judge show` lists them (a finding not valid JSON, an
    # id missing from sources.json…), for every summary (harness.session.file_problems).
    session_problems: tuple[str, ...] = field(default=(), repr=False)

    @classmethod
    def said(cls, kind: OutcomeKind, code: int, note: str) -> RunResult:
        """A run that wrote nothing: its note is its reason."""
        return cls(Receipt(wroteJudge=False, note=note), code, kind, note)

    @classmethod
    def up_to_date(cls, fresh: UpToDate) -> RunResult:
        """Nothing is written: judge.json and run.json stay the completed run's."""
        note = fresh.note()
        receipt = Receipt(wroteJudge=False, upToDate=True, note=note)
        return cls(receipt, EXIT_OK, "up-to-date", note, fresh.check.judgment, fresh.record)


__all__ = ["RunResult"]
