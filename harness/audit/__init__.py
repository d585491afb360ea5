"""The claim–quote citation audit: deterministic checks plus support judged by a model.

`audit_session(session, offline=..., client=..., concurrency=...)` returns a
`CitationReport` (`.judge/citations.json`, `judge cite --json`); `audit_for_run` is the
hook `judge run` calls before the agent loop. See `checks` (the deterministic checks),
`support` (engine sources, the `supports` concern, reading reports), `grounded` and
`passages` (support judged against the cited sources' own text, `--against sources`),
`fetched` (texts of sources the session did not store), `report` (the document),
`agreement` (the judge-vs-audit rule).
"""

from __future__ import annotations

from harness.audit.agreement import compare, expectation
from harness.audit.core import DEFAULT_CONCURRENCY, AuditError, audit_folder, audit_session
from harness.audit.options import AuditOptions
from harness.audit.report import (
    CHECKS,
    CitationReport,
    ClaimError,
    ClaimResult,
    Problem,
    QuoteResult,
    Totals,
)
from harness.audit.runhook import (
    AuditArguments,
    RunAudit,
    audit_arguments,
    audit_for_run,
)
from harness.audit.text import judge_summary
from harness.fs.names import CITATIONS_FILE
from harness.model.resolve import DEFAULT_CITE_MODEL, CiteClientHandle, resolve_cite

__all__ = [
    "CHECKS",
    "CITATIONS_FILE",
    "DEFAULT_CITE_MODEL",
    "DEFAULT_CONCURRENCY",
    "AuditArguments",
    "AuditError",
    "AuditOptions",
    "CitationReport",
    "CiteClientHandle",
    "ClaimError",
    "ClaimResult",
    "Problem",
    "QuoteResult",
    "RunAudit",
    "Totals",
    "audit_arguments",
    "audit_folder",
    "audit_for_run",
    "audit_session",
    "compare",
    "expectation",
    "judge_summary",
    "resolve_cite",
]
