"""`judge run` as stages: load, audit, agent loop, final check, the run record."""

from harness.run.digests import input_digests, session_digest
from harness.run.options import RunOptions
from harness.run.pipeline import Receipt, RunResult, judge_session

__all__ = [
    "Receipt",
    "RunOptions",
    "RunResult",
    "input_digests",
    "judge_session",
    "session_digest",
]
