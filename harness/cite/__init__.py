"""The citation engine: which passages evidence which concerns, judged by a model.

A port of `Cite.judge/4`. `judge(source, concerns, client, options)` screens every passage
(round 1), gathers matches into findings, judges each finding in one request (round 2) and
returns a `Report`. The pure modules `screen`, `gather` and `verdict` build requests and
decide; only `shell` talks to the client.

The engine knows no SDK: the Anthropic-backed client is `harness.model.cite_client`.
"""

from __future__ import annotations

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
from harness.cite.options import CiteOptions, CiteOptionsError
from harness.cite.replay import RecordingCiteClient, ReplayCiteClient, ReplayEntry
from harness.cite.report import Answer, Citation, CiteError, CiteFinding, Report
from harness.cite.shell import CitePool, Pending, judge, judge_each, judge_many
from harness.cite.source import CitePassage, CiteSource
from harness.usage import Usage

__all__ = [
    "Answer",
    "Check",
    "Choice",
    "Citation",
    "CiteClient",
    "CiteDefinitionError",
    "CiteError",
    "CiteFinding",
    "CiteOptions",
    "CiteOptionsError",
    "CitePassage",
    "CitePool",
    "CiteSource",
    "Concerns",
    "Criterion",
    "Descriptor",
    "Factor",
    "FactoredConcern",
    "Filter",
    "Noul",
    "NoulCriteria",
    "Pending",
    "RecordingCiteClient",
    "ReplayCiteClient",
    "ReplayEntry",
    "Reply",
    "Report",
    "Request",
    "RequestTooLarge",
    "Role",
    "Score",
    "ScreenedConcern",
    "ScriptedClient",
    "Usage",
    "judge",
    "judge_each",
    "judge_many",
]
