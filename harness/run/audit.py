"""The run's citation audit: its share of the run's time, then the audit itself (which
never blocks the run, except a ReplayError)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness import clock, config
from harness.artifacts.record import TimeShare
from harness.audit.record import AuditRecord
from harness.events import emit
from harness.run.start import RunStart
from harness.session.loader import Session

if TYPE_CHECKING:
    from harness.audit import RunAudit


@dataclass(frozen=True, slots=True)
class AuditShare:
    """The audit's start: when, and how many seconds it may use."""

    at: float  # time.monotonic() when it began
    allowed: float
    before: float  # seconds of the run before it (run.json's time.beforeAudit)

    def time(self, used: float = 0.0) -> TimeShare:
        return TimeShare(allowed=round(self.allowed, 3), used=used)


def begin_audit(run: RunStart) -> AuditShare:
    run.callers.hooks.on_prepared()
    emit(run.callers.progress, {"event": "phase", "phase": "audit"})
    now = time.monotonic()
    share = max(0.0, run.budget.left(now) * config.AUDIT_TIME_SHARE)
    return AuditShare(at=now, allowed=share, before=run.budget.since(now))


@dataclass(frozen=True, slots=True)
class Audited:
    audit: RunAudit | None  # None: --no-cite
    record: AuditRecord
    summary: str | None  # for the judge's first message
    used: float = 0.0  # seconds it took

    @property
    def ignored(self) -> str | None:
        """A planted cache entry the audit treated as absent: said once in the receipt."""
        return self.audit.ignored if self.audit is not None else None


def not_audited() -> Audited:
    return Audited(audit=None, record=AuditRecord(skipped="--no-cite"), summary=None)


def run_audit(run: RunStart, session: Session, session_digest: str, share: AuditShare) -> Audited:
    from harness.audit import audit_for_run  # the engine and its models: only when auditing

    callers = run.callers
    # The audit's own limit is its share (its requests end by it, in flight or not).
    audit_opts = run.opts.model_copy(update={"max_seconds": max(share.allowed, 0.001)})
    with clock.scope(clock.Deadline(share.at + share.allowed, clock.AUDIT_SHARE)):
        audit = audit_for_run(
            session,
            run.artifacts,
            audit_opts,
            cite_client=callers.cite_client,
            judge_client_given=callers.client is not None,
            pool=callers.cite_pool,
            progress=callers.progress,
            stop=callers.stop,
            session_digest=session_digest,
            run_id=run.run_id,
        )
    used = round(time.monotonic() - share.at, 3)
    return Audited(audit=audit, record=audit.record, summary=audit.summary, used=used)


__all__ = ["AuditShare", "Audited", "begin_audit", "not_audited", "run_audit"]
