"""The run as it starts, once it holds the session's lock: what every stage reads."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.events import OnEvent, ShouldStop
from harness.fs.artifacts import ArtifactDir
from harness.fs.names import JUDGE_FILE
from harness.run.budget import RunBudget
from harness.run.hooks import RunHooks
from harness.run.options import RunOptions


@dataclass(frozen=True, slots=True)
class Callers:
    """What the caller gave besides the options (harness.run.judge_session's keywords)."""

    client: Any = None  # replaces the judge's Anthropic client
    cite_client: Any = None  # answers the citation audit
    progress: OnEvent | None = None  # told what the run does (display only)
    stop: ShouldStop | None = None  # may end the run early
    cite_pool: Any = None  # a limit on audit requests in flight shared with other runs
    hooks: RunHooks = field(default_factory=RunHooks)  # what the caller steers by
    force: bool = False  # judge again a session that is up to date


@dataclass(frozen=True, slots=True)
class RunStart:
    folder: Path
    artifacts: ArtifactDir  # `.judge/`, opened once by descriptor
    opts: RunOptions
    budget: RunBudget
    callers: Callers
    started: datetime
    # In every artifact of this run: a reader never pairs artifacts of two runs.
    run_id: str

    @classmethod
    def begin(
        cls,
        folder: Path,
        artifacts: ArtifactDir,
        opts: RunOptions,
        callers: Callers,
        clock: float,
    ) -> RunStart:
        started = datetime.now(UTC)
        return cls(
            folder=folder,
            artifacts=artifacts,
            opts=opts,
            budget=RunBudget.start(opts.max_seconds, clock),
            callers=callers,
            started=started,
            run_id=f"{started:%Y%m%dT%H%M%SZ}-{secrets.token_hex(4)}",
        )

    @property
    def judge_path(self) -> Path:
        return self.folder / JUDGE_FILE


__all__ = ["Callers", "RunStart"]
