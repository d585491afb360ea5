"""Pydantic models of the pipeline's session files.

These are pipeline inputs: unknown fields are kept (`extra="allow"`), but the
fields the harness reads are typed strictly, so a number where text belongs is
reported rather than coerced. `schemas/*.schema.json` are exported from here
(`python scripts/export_schemas.py`); a test keeps them in sync.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Input(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class Vote(_Input):
    verifier: str | None = None
    verdict: str


class Verification(_Input):
    votes: list[Vote] = Field(default_factory=list)


class Quote(_Input):
    sourceId: str = Field(min_length=1)
    text: str


class Claim(_Input):
    id: str = Field(min_length=1)
    text: str
    sourceIds: list[str] = Field(default_factory=list)
    quotes: list[Quote] = Field(default_factory=list)
    verification: Verification | None = None


class FindingHeader(_Input):
    """A finding without its claims: claims are validated one by one so one bad
    claim does not discard its neighbours."""

    id: str = Field(min_length=1)
    subQuestion: str
    claims: list[Any] = Field(default_factory=list)


class Finding(_Input):
    id: str = Field(min_length=1)
    subQuestion: str
    claims: list[Claim] = Field(default_factory=list)


class Source(_Input):
    id: str = Field(min_length=1)
    url: str = Field(min_length=1)
    title: str | None = None
    tier: Literal["primary", "secondary", "low"] | None = None


class SourceSet(_Input):
    sources: list[Source]


class TraceLine(_Input):
    tool: str
    input: dict[str, Any] = Field(default_factory=dict)
    ok: bool | None = None
    ms: float | int | None = None
