"""The one check of a client's reply against the questions it was asked.

Pure; the shell calls it once per reply. A reply that skips a question or gives a value its
question cannot have is rejected whole, so nothing half-read ever reaches a decision.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple


class Checked(NamedTuple):
    """A possible answer: a noul's probability, a score's level, or a choice's option."""

    value: float | str
    confidence: float | None = None


@dataclass(frozen=True)
class Rejected:
    kind: Literal["missing_answers", "malformed_answers"]
    keys: list[str]


def _number(value: object, top: float) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    # Compared before any float(): an integer beyond float range would raise OverflowError
    # (and end the whole batch) instead of rejecting this one reply.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if not 0 <= value <= top:
        return None
    return float(value)


def _read(question: Mapping[str, Any], raw: object) -> Checked | None:
    confidence: float | None = None
    if isinstance(raw, Mapping):
        if "value" not in raw or not set(raw) <= {"value", "confidence"}:
            return None
        if "confidence" in raw:
            confidence = _number(raw["confidence"], 1)
            if confidence is None:
                return None
        raw = raw["value"]
    kind = question["type"]
    value: float | str | None
    if kind == "noul":
        value = _number(raw, 1)
    elif kind == "score":
        value = _number(raw, len(question["criteria"]) - 1)
    elif kind == "choice":
        value = raw if isinstance(raw, str) and raw in question["criteria"] else None
    else:
        return None
    if value is None:
        return None
    return Checked(value, confidence)


def check(
    questions: Mapping[str, Mapping[str, Any]], answers: Mapping[str, object]
) -> dict[str, Checked] | Rejected:
    """Every asked key answered with a possible value, or the keys that were not.

    Missing answers are reported before malformed ones; answers to keys that were not
    asked are ignored.
    """
    missing = [k for k in questions if k not in answers]
    if missing:
        return Rejected("missing_answers", missing)
    out: dict[str, Checked] = {}
    bad: list[str] = []
    for key, question in questions.items():
        answer = _read(question, answers[key])
        if answer is None:
            bad.append(key)
        else:
            out[key] = answer
    return Rejected("malformed_answers", bad) if bad else out
