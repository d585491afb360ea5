"""judge: audit a deep-research session and make sure a valid judge.json is in place.

    import harness

    try:
        result = harness.judge_session("sessions/abc", model="claude-sonnet-5-5")
    except harness.JudgeError as exc:     # usage or configuration: no key, no session
        print(exc, exc.exit_code)
    else:
        print(result.outcome, result.receipt.note, result.exit_code)

`judge_session` runs the whole audit on one session (`judge run`); `judge_batch` on every
session under a root (`judge batch`). Both take typed keyword parameters: `RunOptions`'
fields with their defaults, the same as the command line's (harness.api; tests/run/test_api.py
checks them). Model behaviour never raises: an API that stays
down, a refusal or a model that never writes ends in the advisory judge.json, which the
result says. Everything heavy is imported lazily, so `judge validate` and `judge show`
start fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.errors import ConfigError, JudgeError, UsageError

if TYPE_CHECKING:
    from harness.api import BatchKeywords, RunKeywords, judge_batch, judge_session
    from harness.batch.core import BatchInterrupted, BatchResult, SessionResult
    from harness.batch.limits import BatchLimits
    from harness.run import Receipt, RunOptions, RunResult

__all__ = [
    "BatchInterrupted",
    "BatchKeywords",
    "BatchLimits",
    "BatchResult",
    "ConfigError",
    "JudgeError",
    "Receipt",
    "RunKeywords",
    "RunOptions",
    "RunResult",
    "SessionResult",
    "UsageError",
    "compare",
    "judge_batch",
    "judge_session",
]
_BATCH = {"BatchInterrupted", "BatchResult", "SessionResult"}
_API = {"BatchKeywords", "RunKeywords", "judge_batch", "judge_session"}


def __getattr__(name: str) -> Any:
    if name in _BATCH:
        from harness.batch import core

        return getattr(core, name)
    if name == "compare":  # the package, callable: harness.compare(A, B) -> CompareResult
        import importlib

        return importlib.import_module("harness.compare")
    if name in _API:
        from harness import api

        return getattr(api, name)
    if name == "BatchLimits":
        from harness.batch.limits import BatchLimits

        return BatchLimits
    if name in __all__:
        from harness import run

        return getattr(run, name)
    raise AttributeError(f"module 'harness' has no attribute {name!r}")
