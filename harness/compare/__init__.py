"""`judge compare A B`: did the pipeline get better? Paired differences B − A with
intervals, the sessions that moved, fairness warnings and a CI gate. Reads only what runs
saved and sealed; makes no model request.

`harness.compare.read` reads a side (the one module that reads sealed artifacts),
`harness.compare.pair` pairs the sessions, `harness.compare.stats` holds the arithmetic,
`harness.compare.core` puts them together, `harness.compare.result` is the typed result.
"""

from harness.compare.core import compare, compare_sides
from harness.compare.result import CompareResult

__all__ = ["CompareResult", "compare", "compare_sides"]
