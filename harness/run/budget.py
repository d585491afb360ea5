"""The run's time: --max-seconds from before the lock wait to the end, shared by the
audit (a share of what is left when it starts), the judge (the rest) and a reserve kept
for writing judge.json and run.json."""

from __future__ import annotations

import time
from dataclasses import dataclass

from harness import config
from harness.artifacts.record import TimeShare, TimeShares
from harness.clock import Deadline

RULE = (
    f"the audit gets at most {config.AUDIT_TIME_SHARE:.0%} of the time left when "
    "it starts, the judge the rest, and writing keeps the reserve"
)


@dataclass(frozen=True, slots=True)
class RunBudget:
    max_seconds: float
    clock: float  # when the run's time began (before the wait for the lock)
    lock_wait: float  # seconds the wait for the lock took
    reserve: float  # seconds kept for writing
    # Every phase before the model (loading, listing, hashing) sits under the run's time.
    deadline: Deadline

    @classmethod
    def start(cls, max_seconds: float, clock: float) -> RunBudget:
        """The run's budget once it holds the lock (its time began at `clock`)."""
        reserve = min(config.WRITE_RESERVE_SECONDS, config.WRITE_RESERVE_SHARE * max_seconds)
        return cls(
            max_seconds=max_seconds,
            clock=clock,
            lock_wait=round(time.monotonic() - clock, 3),
            reserve=reserve,
            deadline=Deadline(at=clock + max_seconds),
        )

    def left(self, now: float) -> float:
        """Seconds the audit and the judge may still use: the run's, less the reserve."""
        return self.clock + self.max_seconds - self.reserve - now

    def since(self, now: float) -> float:
        """Seconds from the run's start to `now`, as the record says them."""
        return round(now - self.clock, 3)

    def time_text(self, audit: TimeShare | None, judge_seconds: float) -> str:
        """The judge's time limit in words: how the run's time was shared."""
        parts = [f"{self.max_seconds:g} s for the whole run"]
        if audit is not None:
            parts.append(f"the audit used {audit.used:.1f} s of its {audit.allowed:.1f} s share")
        parts.append(f"the judge had {max(judge_seconds, 0.0):.1f} s")
        parts.append(f"{self.reserve:.1f} s kept for writing")
        return ", ".join(parts)

    def shares(
        self, before_audit: float, audit: TimeShare | None, judge: TimeShare | None
    ) -> TimeShares:
        """run.json's `time`: how --max-seconds was shared."""
        return TimeShares(
            maxSeconds=self.max_seconds,
            rule=RULE,
            beforeAudit=before_audit,
            lockWait=self.lock_wait,
            reserve=round(self.reserve, 3),
            audit=audit,
            judge=judge,
        )


__all__ = ["RULE", "RunBudget"]
