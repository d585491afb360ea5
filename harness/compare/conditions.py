"""`--fail-if`: conditions on a difference's interval, for a CI gate.

A condition is `NAME<NUMBER` or `NAME>NUMBER` (spaces allowed around the operator): NAME a
rubric dimension (`factualAccuracy`), a claim verdict's share (`supported`) or a
deterministic problem's rate (`no_quote`); NUMBER the threshold on the difference B − A
(scores in points, shares as fractions: `supported<-0.05` is five points of share). It
holds only when the WHOLE 95% interval lies beyond the threshold (`<`: its upper end is
below; `>`: its lower end is above); a difference without an interval is not evaluated,
and says so.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

from harness.audit.report import CHECKS, VERDICTS
from harness.contract.rubric import DIMENSIONS
from harness.errors import UsageError

NAMES: tuple[str, ...] = (*DIMENSIONS, *VERDICTS, *CHECKS)
MAX_TEXT = 200
_FORM = re.compile(r"([A-Za-z_]+)[ ]*(<|>)[ ]*([+-]?(?:[0-9]{1,6}(?:\.[0-9]{0,9})?|\.[0-9]{1,9}))")


@dataclass(frozen=True, slots=True)
class Gate:
    text: str
    name: str
    op: Literal["<", ">"]
    threshold: float


def _shown(text: str) -> str:
    """The text as the message quotes it: cut, every non-printable character escaped."""
    cut = text[:60]
    return ascii(cut) + ("…" if len(text) > 60 else "")


def parse_condition(text: str) -> Gate:
    """One `--fail-if` condition, or a usage error naming it and the form."""
    form = (
        "write NAME<NUMBER or NAME>NUMBER, e.g. 'factualAccuracy<-0.3' or 'supported<-0.05'; "
        f"NAME is one of {', '.join(NAMES)}"
    )
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        raise UsageError(f"--fail-if {_shown(str(text))}: too long; {form}")
    match = _FORM.fullmatch(text.strip(" "))
    if match is None:
        raise UsageError(f"--fail-if {_shown(text)}: not a condition; {form}")
    name, op, number = match.groups()
    if name not in NAMES:
        raise UsageError(f"--fail-if {_shown(text)}: {name!r} is not a figure to gate on; {form}")
    threshold = float(number)
    if not math.isfinite(threshold):  # pragma: no cover - the pattern admits none
        raise UsageError(f"--fail-if {_shown(text)}: the number must be finite; {form}")
    return Gate(text, name, "<" if op == "<" else ">", threshold)


def holds(gate: Gate, low: float | None, high: float | None) -> bool | None:
    """Whether the whole interval lies beyond the threshold; None without an interval."""
    if low is None or high is None:
        return None
    return high < gate.threshold if gate.op == "<" else low > gate.threshold


__all__ = ["NAMES", "Gate", "holds", "parse_condition"]
