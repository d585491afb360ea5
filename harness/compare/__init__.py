"""`judge compare A B`: did the pipeline get better? Paired differences B − A with
intervals, the sessions that moved, fairness warnings and a CI gate. Reads only what runs
saved and sealed; makes no model request.

`harness.compare.read` reads a side (the one module that reads sealed artifacts),
`harness.compare.pair` pairs the sessions, `harness.compare.stats` holds the arithmetic,
`harness.compare.core` puts them together, `harness.compare.result` is the typed result.
"""

import sys
import types
from collections.abc import Sequence
from pathlib import Path

from harness.compare.core import compare, compare_sides
from harness.compare.pair import PairBy
from harness.compare.result import CompareResult

__all__ = ["CompareResult", "compare", "compare_sides"]


class _CallableModule(types.ModuleType):
    """`harness.compare` is this package and the Python API's function at once: once the
    package is imported, Python binds the name `harness.compare` to it, so calling it must
    call `compare`."""

    def __call__(
        self,
        a: str | Path,
        b: str | Path,
        *,
        pair_by: PairBy = "id",
        fail_if: Sequence[str] = (),
    ) -> CompareResult:
        return compare(a, b, pair_by=pair_by, fail_if=fail_if)


sys.modules[__name__].__class__ = _CallableModule
