"""`judge run` as stages: load, audit, agent loop, final check, the run record."""

from harness.run.pipeline import Receipt, RunOptions, RunResult, judge_session

__all__ = ["Receipt", "RunOptions", "RunResult", "judge_session"]
