"""The pydantic mirror of judge.json (schemas/judge.schema.json).

Apart from `harness.contract.judgment` so that checking a judge.json never imports pydantic:
its import and model building are most of `judge validate`'s start-up time. Import
`Judgment` and `Scores` from `harness.contract.judgment`; they are loaded from here on first use.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import ConfigDict, field_validator, model_validator

from harness.contract.rubric import DIMENSIONS, UNKNOWN
from harness.strict import Frozen

Score = int | Literal["Unknown"]


class Scores(Frozen):
    model_config = ConfigDict(strict=True)

    factualAccuracy: Score
    citationAccuracy: Score
    completeness: Score
    sourceQuality: Score
    toolEfficiency: Score

    @field_validator("*")
    @classmethod
    def _in_range(cls, value: Score) -> Score:
        if isinstance(value, int) and not 0 <= value <= 5:
            raise ValueError("a score is an integer from 0 to 5")
        return value


class Judgment(Frozen):
    """Mirror of schemas/judge.schema.json."""

    model_config = ConfigDict(strict=True)

    scores: Scores
    unknowns: list[str]
    note: str
    rubricVersion: Literal["deep-judge-v1"]

    @model_validator(mode="after")
    def _unknowns_match_scores(self) -> Judgment:
        if not self.note.strip():
            raise ValueError("note must not be blank")
        expected = {d for d in DIMENSIONS if getattr(self.scores, d) == UNKNOWN}
        if len(set(self.unknowns)) != len(self.unknowns) or set(self.unknowns) != expected:
            raise ValueError("unknowns must be exactly the dimensions scored 'Unknown'")
        return self

    def to_json(self) -> str:
        return json.dumps(self.model_dump(), indent=2, ensure_ascii=False) + "\n"
