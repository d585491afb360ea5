"""A tool call as the run records it: one type, light to import (run.json's readers, the
page and `show` read it without the tools themselves)."""

from __future__ import annotations

from pydantic import Field

from harness.strict import Strict


class ToolCallRecord(Strict):
    """One tool call as the run records it: the loop appends it, run.json's `toolCalls`
    holds it as it is, and the session page shows it (its one shape)."""

    name: str
    target: str | None = Field(default=None, description="The path or URL the call named.")
    ok: bool
    detail: str = Field(default="", description="Why it was refused, when it was.")


__all__ = ["ToolCallRecord"]
