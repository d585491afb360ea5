"""The project's one strict pydantic base: a record refuses keys it does not know.

Every record that is written or read (run.json, citations.json, judge.json, the batch's
state, agreement reports) derives from `Strict`; one that is never changed once made
derives from `Frozen`. A subclass adds to the config (pydantic merges it), never restates it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["Frozen", "Strict"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Frozen(Strict):
    model_config = ConfigDict(frozen=True)
