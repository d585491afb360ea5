"""judge: audit a deep-research session and make sure a valid judge.json is in place.

`harness.judge_session(path, **options)` runs the whole audit (see harness.run);
`harness.judge_batch(root, **options)` runs it on every session under a root.
Imported lazily so that `judge validate` and `judge show` start fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.batch.core import BatchInterrupted, BatchResult, SessionResult, judge_batch
    from harness.run import Receipt, RunOptions, RunResult, judge_session

__all__ = [
    "BatchInterrupted",
    "BatchResult",
    "Receipt",
    "RunOptions",
    "RunResult",
    "SessionResult",
    "judge_batch",
    "judge_session",
]
_BATCH = {"BatchInterrupted", "BatchResult", "SessionResult", "judge_batch"}


def __getattr__(name: str) -> Any:
    if name in _BATCH:
        from harness.batch import core

        return getattr(core, name)
    if name in __all__:
        from harness.run import pipeline as run

        return getattr(run, name)
    raise AttributeError(f"module 'harness' has no attribute {name!r}")
