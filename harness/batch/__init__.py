"""`judge batch`: many sessions in one process, with shared limits, progress and resume.

`judge_batch(root, sessions=None, **options)` (harness.batch.core) judges every session
folder directly under `root` (see `discover`) with `judge_session`, several at once, on
one HTTP client and one pool of audit requests; a session's failure stays its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.batch.core import BatchInterrupted, BatchResult, SessionResult, judge_batch

__all__ = ["BatchInterrupted", "BatchResult", "SessionResult", "judge_batch"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from harness.batch import core

        return getattr(core, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
