"""The citation engine: which passages evidence which concerns, judged by a model.

A port of `Cite.judge/4`. `judge(source, concerns, client, options)` screens every passage
(round 1), gathers matches into findings, judges each finding in one request (round 2) and
returns a `Report`. The pure modules `screen`, `gather` and `verdict` build requests and
decide; only `shell` talks to the client.

`AnthropicCiteClient` is loaded on first use so importing this package stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.cite.client import CiteClient, Reply, Request, RequestTooLarge, ScriptedClient
from harness.cite.concerns import (
    Check,
    Choice,
    CiteDefinitionError,
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
from harness.cite.options import CiteOptionsError, Run
from harness.cite.replay import RecordingCiteClient, ReplayCiteClient, ReplayEntry
from harness.cite.report import Answer, Citation, CiteError, Finding, Report, Usage
from harness.cite.shell import CitePool, Pending, judge, judge_each, judge_many
from harness.cite.source import Passage, Source

if TYPE_CHECKING:
    from harness.model.cite_client import AnthropicCiteClient


def __getattr__(name: str) -> Any:
    # The anthropic SDK is slow to import; only a caller that talks to the API pays for it.
    if name == "AnthropicCiteClient":
        from harness.model.cite_client import AnthropicCiteClient

        return AnthropicCiteClient
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Answer",
    "AnthropicCiteClient",
    "Check",
    "Choice",
    "Citation",
    "CiteClient",
    "CiteDefinitionError",
    "CiteError",
    "CiteOptionsError",
    "CitePool",
    "Concerns",
    "Criterion",
    "Descriptor",
    "Factor",
    "FactoredConcern",
    "Filter",
    "Finding",
    "Noul",
    "NoulCriteria",
    "Passage",
    "Pending",
    "RecordingCiteClient",
    "ReplayCiteClient",
    "ReplayEntry",
    "Reply",
    "Report",
    "Request",
    "RequestTooLarge",
    "Role",
    "Run",
    "Score",
    "ScreenedConcern",
    "ScriptedClient",
    "Source",
    "Usage",
    "judge",
    "judge_each",
    "judge_many",
]
