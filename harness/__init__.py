"""judge: audit a deep-research session and make sure a valid judge.json is in place.

`harness.judge_session(path, **options)` runs the whole audit (see harness.run.pipeline).
Imported lazily so that `judge validate` and `judge show` start fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.run.pipeline import Receipt, RunOptions, RunResult, judge_session

__all__ = ["Receipt", "RunOptions", "RunResult", "judge_session"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from harness.run import pipeline as run

        return getattr(run, name)
    raise AttributeError(f"module 'harness' has no attribute {name!r}")
