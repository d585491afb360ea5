"""Small builders for cite tests: definitions, sources and scripted answers."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from harness.cite import (
    Check,
    CiteSource,
    Concerns,
    Criterion,
    Descriptor,
    Factor,
    FactoredConcern,
    Filter,
    Noul,
    NoulCriteria,
    Role,
    Score,
    ScreenedConcern,
)

CRIT = NoulCriteria(true=Criterion(what="..."), false=Criterion(what="...", not_for="..."))


def noul(question: str = "Does {passage} say it?") -> Noul:
    return Noul(question=question, criteria=CRIT)


def score(question: str = "How much?", levels: int = 3) -> Score:
    return Score(question=question, criteria=["..."] * levels)


def screened(
    name: str = "supports", descriptors: list[Descriptor] | None = None
) -> ScreenedConcern:
    return ScreenedConcern(
        name=name,
        detect=noul(f"Does {{passage}} show {name}?"),
        confirm=noul(f"Does {{passage}} evidence {name}?"),
        descriptors=descriptors or [],
    )


def concerns(
    *items: ScreenedConcern | FactoredConcern,
    filters: tuple[str, ...] = (),
    factors: tuple[str, ...] = (),
) -> Concerns:
    return Concerns(
        filters=[Filter(name=f, detect=noul(f"Is {{passage}} {f}?")) for f in filters],
        factors=[Factor(name=f, detect=noul(f"Is {{passage}} {f}?")) for f in factors],
        concerns=list(items),
    )


def factored(
    name: str,
    roles: list[tuple[str, str, bool, bool]],
    checks: list[Check] | None = None,
    descriptors: list[Descriptor] | None = None,
) -> FactoredConcern:
    """roles: (name, factor, required, distinct)."""
    return FactoredConcern(
        name=name,
        roles=[Role(name=n, factor=f, required=r, distinct=d) for n, f, r, d in roles],
        checks=checks or [],
        descriptors=descriptors or [],
    )


def source(*ids: str, as_: str = "quotes") -> CiteSource:
    return CiteSource.model_validate(
        {"as": as_, "passages": [{"id": i, "text": f"text of {i}"} for i in ids]}
    )


class _Omit:
    def __repr__(self) -> str:
        return "OMIT"


OMIT: Any = _Omit()
"""Put in a table to leave that question unanswered."""


def answering(
    table: Mapping[str, object] | None = None,
    default: object = 0.9,
    by_key: Callable[[str], object] | None = None,
) -> Callable[[dict[str, Any]], dict[str, object]]:
    """A scripted answer function: `table[key]`, else `by_key(key)`, else `default`.

    Choice questions without an entry get their first option.
    """
    table = table or {}

    def answer(request: dict[str, Any]) -> dict[str, object]:
        out: dict[str, object] = {}
        for key, question in request["questions"].items():
            if key in table:
                value = table[key]
            elif by_key is not None:
                value = by_key(key)
            elif question["type"] == "choice":
                value = next(iter(question["criteria"]))
            else:
                value = default
            if value is not OMIT:
                out[key] = value
        return out

    return answer
