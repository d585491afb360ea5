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

import importlib
from typing import TYPE_CHECKING, Any

# Each public name and the module that holds it. They are imported on first use (PEP 562),
# so that a reader of one of the audit's types (run.json's records, `judge show`) does not
# load the engine, the checks and the model's client with them.
_HOMES = {
    "compare": "harness.audit.agreement",
    "expectation": "harness.audit.agreement",
    "DEFAULT_CONCURRENCY": "harness.audit.core",
    "AuditError": "harness.audit.core",
    "audit_folder": "harness.audit.core",
    "audit_session": "harness.audit.core",
    "AuditOptions": "harness.audit.options",
    "CHECKS": "harness.audit.report",
    "CitationReport": "harness.audit.report",
    "ClaimError": "harness.audit.report",
    "ClaimResult": "harness.audit.report",
    "Problem": "harness.audit.report",
    "QuoteResult": "harness.audit.report",
    "Totals": "harness.audit.report",
    "AuditArguments": "harness.audit.runhook",
    "RunAudit": "harness.audit.runhook",
    "audit_arguments": "harness.audit.runhook",
    "audit_for_run": "harness.audit.runhook",
    "judge_summary": "harness.audit.text",
    "CITATIONS_FILE": "harness.fs.names",
    "DEFAULT_CITE_MODEL": "harness.model.resolve",
    "CiteClientHandle": "harness.model.resolve",
    "resolve_cite": "harness.model.resolve",
}

if TYPE_CHECKING:
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


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'harness.audit' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # once: later uses are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])


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
