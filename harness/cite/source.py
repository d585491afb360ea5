"""The passages a judgment reads, in order, and the state key their window goes under."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

from harness.cite.concerns import CiteDefinitionError, Name
from harness.cite.once import once
from harness.strict import Frozen

# A passage id is quoted inside state paths (`quotes.q1.text`) and question keys
# (`q1:supports`), so dots, colons, backticks and spaces would make them ambiguous.
PassageId = Annotated[str, StringConstraints(pattern=r"^[^.:`\s]+$")]


class CitePassage(BaseModel):
    """One passage: an `id` plus any fields (`text`, `speaker`, ...), kept in order."""

    model_config = ConfigDict(extra="allow", frozen=True)

    id: PassageId


class CiteSource(Frozen):
    """Passages in source order; `as` names the state key a window is put under."""

    model_config = ConfigDict(populate_by_name=True, ignored_types=(once,))

    as_: Name = Field(alias="as")
    passages: list[CitePassage]
    field: Name = "text"

    @model_validator(mode="after")
    def _consistent(self) -> CiteSource:
        seen: set[str] = set()
        for p in self.passages:
            if p.id in seen:
                raise ValueError(f"duplicate passage id {p.id!r}")
            seen.add(p.id)
            if not isinstance(getattr(p, self.field, None), str):
                raise ValueError(f"passage {p.id!r} has no string field {self.field!r}")
        return self

    @once
    def ids(self) -> list[str]:
        return [p.id for p in self.passages]

    @once
    def state(self) -> dict[str, dict[str, Any]]:
        """Each passage as state carries it, keyed by id (built once: requests share it)."""
        # By hand: model_dump costs several times more, once per passage of every claim.
        return {p.id: {"id": p.id, **(p.__pydantic_extra__ or {})} for p in self.passages}

    def ref(self, passage_id: str) -> str:
        """How a question names a passage's text inside a window: `` `quotes.q1.text` ``."""
        return f"`{self.as_}.{passage_id}.{self.field}`"


def as_source(value: CiteSource | Any) -> CiteSource:
    """Accept a `CiteSource` or its JSON-shaped mapping; refuse anything else clearly."""
    if isinstance(value, CiteSource):
        return value
    try:
        return CiteSource.model_validate(value)
    except ValidationError as exc:
        raise CiteDefinitionError(f"invalid source: {exc}") from exc
