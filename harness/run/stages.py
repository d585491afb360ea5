"""The values of a run's stages, as far as it got: what the record is built from, on
every path (a finished run, a signal, a fault of the disk)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.artifacts.record import TimeShare, TimeShares
from harness.run.audit import Audited, AuditShare
from harness.run.budget import RunBudget
from harness.run.judge import Judged, JudgeStart
from harness.run.prepare import Inputs, SetAside

if TYPE_CHECKING:
    from harness.audit import RunAudit


@dataclass(frozen=True, slots=True)
class Stages:
    """Each field is a stage's value once it has returned (None: not reached)."""

    inputs: Inputs | None = None
    aside: SetAside | None = None
    audit_share: AuditShare | None = None
    audited: Audited | None = None
    judge_start: JudgeStart | None = None
    judged: Judged | None = None

    @property
    def wrote(self) -> bool:
        """The model wrote a valid judge.json."""
        return self.judge_start is not None and self.judge_start.wrote

    @property
    def audit(self) -> RunAudit | None:
        """The citation audit, once it has run (not with --no-cite)."""
        return self.audited.audit if self.audited is not None else None

    @property
    def audit_time(self) -> TimeShare | None:
        """The audit's share and what it used, once it has run."""
        if self.audit_share is None or self.audited is None:
            return None
        return self.audit_share.time(self.audited.used)

    def time(self, budget: RunBudget) -> TimeShares:
        """How --max-seconds was shared, as far as the run got."""
        share, start = self.audit_share, self.judge_start
        before = share.before if share is not None else start.before if start is not None else 0.0
        audit = None
        if share is not None:
            audit = share.time(self.audited.used if self.audited is not None else 0.0)
        judge = None
        if start is not None:
            judge = start.time(self.judged.used if self.judged is not None else 0.0)
        return budget.shares(before, audit, judge)


__all__ = ["Stages"]
