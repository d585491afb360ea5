"""`judge run` as stages that return values (harness.run.driver reads them in order):
resolve the options, lock, prepare, audit, judge, decide, settle, record."""

from harness.artifacts.record import Receipt
from harness.run.digests import input_digests, session_digest
from harness.run.driver import judge_session
from harness.run.hooks import RunHooks
from harness.run.options import RunOptions
from harness.run.outcome import DOCTOR_HINT
from harness.run.result import RunResult

__all__ = [
    "DOCTOR_HINT",
    "Receipt",
    "RunHooks",
    "RunOptions",
    "RunResult",
    "input_digests",
    "judge_session",
    "session_digest",
]
