"""The audit's own options inside a run: `AuditOptions`, a frozen value built from the
run's options by one method (`harness.run.options.RunOptions.audit_options`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.config import Against, FetchMode


@dataclass(frozen=True, slots=True)
class AuditOptions:
    """What of a run's options the audit reads: its model, replay and requests, where
    source texts come from, and the run's replay/record files, API and time limits."""

    cite_model: str
    cite_replay: Path | None
    cite_concurrency: int
    cite_against: Against
    cite_passage_chars: int
    audit_fetch: FetchMode
    audit_max_fetches: int
    replay: Path | None
    replay_any: bool
    record: Path | None
    timeout: float
    max_retries: int
    max_seconds: float
