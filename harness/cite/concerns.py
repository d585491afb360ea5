"""What the engine looks for: questions, filters, factors and concerns as plain typed data.

Everything here loads from JSON (`Concerns.load`) and validates on construction, so a bad
definition fails before any request is sent.

Question texts may name what they read with placeholders, replaced when a request is built:
`{passage}` in a detect or confirm (the passage under inspection), `{passages}` in a screened
concern's descriptor (every passage), and `{<role>}` in a factored concern's checks and
descriptors. Unknown braces are left alone, so literal braces need no escaping.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

from harness.cite.once import once
from harness.errors import UsageError
from harness.strict import Frozen

# Names end up inside question keys (`<passage id>:<detect>`) and state paths
# (`role.text`), so they may not carry the separators those use.
Name = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]+$")]


class CiteDefinitionError(UsageError):
    """A concern definition or source that cannot be used as given."""

    code = "cite_definition"


class _Data(Frozen):
    model_config = ConfigDict(ignored_types=(once,))


class Criterion(_Data):
    what: str
    not_for: str | None = None

    def as_json(self) -> dict[str, str]:
        # By hand: model_dump is several times slower, and this runs for every question.
        if self.not_for is None:
            return {"what": self.what}
        return {"what": self.what, "not_for": self.not_for}


class NoulCriteria(_Data):
    true: Criterion
    false: Criterion


class _Question(_Data):
    question: str

    def criteria_json(self) -> Any:
        """The criteria exactly as a request carries them."""
        raise NotImplementedError


class Noul(_Question):
    """A yes/no question answered as the probability of yes."""

    type: Literal["noul"] = "noul"
    criteria: NoulCriteria

    @once
    def _criteria(self) -> dict[str, Any]:
        return {"true": self.criteria.true.as_json(), "false": self.criteria.false.as_json()}

    def criteria_json(self) -> Any:
        return self._criteria


class Score(_Question):
    """A graded question: the answer is a level index, between levels allowed."""

    type: Literal["score"] = "score"
    criteria: Annotated[list[str], Field(min_length=2)]

    @property
    def top(self) -> int:
        return len(self.criteria) - 1

    def criteria_json(self) -> Any:
        return list(self.criteria)


class Choice(_Question):
    """One of a fixed set of options, the keys of its criteria."""

    type: Literal["choice"] = "choice"
    criteria: Annotated[dict[str, Criterion], Field(min_length=2)]

    @once
    def _criteria(self) -> dict[str, Any]:
        return {k: c.as_json() for k, c in self.criteria.items()}

    def criteria_json(self) -> Any:
        return self._criteria


# Detects, confirms and checks are read as probabilities; a descriptor may be any type.
Graded = Annotated[Noul | Score, Field(discriminator="type")]
Question = Annotated[Noul | Score | Choice, Field(discriminator="type")]


class Filter(_Data):
    """A condition every passage must meet: a passage whose detect is no match is set aside."""

    name: Name
    detect: Graded


class Factor(_Data):
    """A detect that roles of factored concerns draw their passages from."""

    name: Name
    detect: Graded


class Role(_Data):
    name: Name
    factor: Name
    required: bool = True
    distinct: bool = False


class Check(_Data):
    """A round-2 question of a factored concern; asked only when all its roles are filled.

    `roles=None` compares every filled role and always applies.
    """

    name: Name
    ask: Graded
    roles: list[Name] | None = None


class Descriptor(_Data):
    name: Name
    ask: Question


class ScreenedConcern(_Data):
    """Asked of every passage directly; every match is evidence for one finding."""

    kind: Literal["screened"] = "screened"
    name: Name
    detect: Graded
    confirm: Graded
    descriptors: list[Descriptor] = Field(default_factory=list)


class FactoredConcern(_Data):
    """Built from roles, each filled with its factor's strongest match."""

    kind: Literal["factored"] = "factored"
    name: Name
    roles: Annotated[list[Role], Field(min_length=1)]
    checks: list[Check] = Field(default_factory=list)
    descriptors: list[Descriptor] = Field(default_factory=list)


Concern = Annotated[ScreenedConcern | FactoredConcern, Field(discriminator="kind")]


def _unique(names: list[str], what: str) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValueError(f"duplicate {what} name {name!r}")
        seen.add(name)


class Concerns(_Data):
    """The full definition handed to `judge`: filters, shared factors and concerns."""

    filters: list[Filter] = Field(default_factory=list)
    factors: list[Factor] = Field(default_factory=list)
    concerns: Annotated[list[Concern], Field(min_length=1)]

    @model_validator(mode="after")
    def _consistent(self) -> Concerns:
        # Filters, screened concerns and factors share one key space: `<passage id>:<detect>`.
        _unique([d for d, _ in self.detects], "detect")
        _unique([c.name for c in self.concerns], "concern")
        factors = {f.name for f in self.factors}
        for c in self.concerns:
            if isinstance(c, FactoredConcern):
                _check_factored(c, factors)
            else:
                _unique(["confirm", *(d.name for d in c.descriptors)], f"{c.name} question")
        return self

    @once
    def detects(self) -> list[tuple[str, Noul | Score]]:
        """Every round-1 detect in asking order: filters, screened concerns, factors."""
        out: list[tuple[str, Noul | Score]] = [(f.name, f.detect) for f in self.filters]
        out += [(c.name, c.detect) for c in self.concerns if isinstance(c, ScreenedConcern)]
        out += [(f.name, f.detect) for f in self.factors]
        return out

    @classmethod
    def load(cls, path: str | Path) -> Concerns:
        """Read a definition from a JSON file; any problem is a `CiteDefinitionError`."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            return cls.model_validate(data)
        except (OSError, ValueError) as exc:
            raise CiteDefinitionError(f"cannot load concerns from {path}: {exc}") from exc


def _check_factored(c: FactoredConcern, factors: set[str]) -> None:
    roles = [r.name for r in c.roles]
    _unique(roles, f"{c.name} role")
    _unique([q.name for q in c.checks] + [q.name for q in c.descriptors], f"{c.name} question")
    for role in c.roles:
        if role.factor not in factors:
            raise ValueError(f"{c.name}.{role.name}: unknown factor {role.factor!r}")
    for check in c.checks:
        for name in check.roles or []:
            if name not in roles:
                raise ValueError(f"{c.name}.{check.name}: unknown role {name!r}")


def as_concerns(value: Concerns | Any) -> Concerns:
    """Accept a `Concerns` or its JSON-shaped mapping; refuse anything else clearly."""
    if isinstance(value, Concerns):
        return value
    try:
        return Concerns.model_validate(value)
    except ValidationError as exc:
        raise CiteDefinitionError(f"invalid concerns: {exc}") from exc
