"""`judge run` as stages: load, audit, agent loop, final check, the run record."""

from harness.run.options import RunOptions
from harness.run.pipeline import Receipt, RunResult, judge_session

__all__ = ["Receipt", "RunOptions", "RunResult", "judge_session"]
