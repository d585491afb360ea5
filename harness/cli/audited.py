"""What the citation audit judged support against, for `judge run`'s summary and `judge show`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.artifacts.read import provenance
from harness.fs.names import CITATIONS_REL

SAVED = CITATIONS_REL
# An audit whose model requests all failed ran its deterministic checks only: that is not
# "offline", which an audit is only when asked to be (a replayed judge, no client).
FAILED_HOW = "no support judged: the audit's model requests failed"
_VERDICTS = ("supported", "uncertain", "unsupported", "unchecked", "error")  # as shown


def against_lines(
    against: str | None, split: Mapping[str, int] | None, offline: bool, why: str = "offline"
) -> list[str]:
    """The mode asked, and how many claims were judged against sources, quotes, neither;
    `why` no support was judged when `offline` ("offline", "the audit failed")."""
    if against is None:  # a run.json written before the mode was recorded
        return []
    if offline:
        return [f"  citations: --against {against} not applied: {why}, no support judged"]
    if split is None:
        return [f"  citations: against {against}"]
    parts = []
    if split.get("sources"):
        parts.append(f"{split['sources']} against their sources' text")
    if split.get("quotes"):
        parts.append(f"{split['quotes']} against their quotes")
    if split.get("neither"):
        parts.append(f"{split['neither']} against neither (no cited source has text)")
    return [f"  citations: against {against}: {', '.join(parts) or 'no claims'}"]


def audit_document(folder: Path) -> dict[str, Any]:
    """`judge show`'s account of the saved audit (`.judge/citations.json`): the claims,
    verdicts, models, mode and how many claims were judged against what; or `problem`
    (read by its one reader, `harness.artifacts.read`: through the confined reader, a
    regular file only, bounded, sealed by this installation for this session)."""
    artifacts = provenance(folder)
    saved = artifacts.citations
    if saved.value is None:
        problem = (
            f"no audit saved (judge run writes {SAVED})"
            if saved.absent
            else saved.said("judge run rewrites it")
        )
        return {"path": SAVED, "problem": problem}
    report = saved.value.report
    claims = report.claims
    split = {w: sum(1 for c in claims if c.against == w) for w in ("sources", "quotes")}
    split["neither"] = len(claims) - split["sources"] - split["quotes"]
    record = artifacts.run.value
    failed = bool(
        report.offline
        and record is not None
        and record.runId == artifacts.citations_run
        and record.citations is not None
        and record.citations.failure
    )
    return {
        "path": SAVED,
        "claims": len(claims),
        "verdicts": {v: sum(1 for c in claims if c.verdict == v) for v in _VERDICTS},
        "offline": report.offline,
        "failed": failed,  # offline because every model request failed, not as asked
        "models": list(report.models) or ([report.model] if report.model else []),
        "against": report.against,
        "judgedAgainst": split,
        # Which run wrote it and whether that run also wrote the judge.json in place: a
        # report of another run is shown as such, never as this judgment's audit.
        "runId": artifacts.citations_run,
        "judgeRunId": artifacts.judge_run,
        "pairedWithJudge": artifacts.paired,
    }


def audit_lines(folder: Path) -> list[str]:
    """`judge show`'s lines for the saved audit (`audit_document`)."""
    audit = audit_document(folder)
    if "problem" in audit:
        return [f"  citations: {audit['problem']}"]
    verdicts = ", ".join(f"{n} {v}" for v, n in audit["verdicts"].items() if n)
    offline = audit["offline"]
    how = "offline" if offline else ", ".join(audit["models"]) or "no model"
    if audit["failed"]:
        how = FAILED_HOW
    lines = [f"  citations: {audit['claims']} claims ({how}): {verdicts or 'none'}; {SAVED}"]
    if not audit["pairedWithJudge"]:
        lines.append(
            f"  citations: from run {audit['runId']}; not the run that wrote judge.json "
            f"({audit['judgeRunId'] or 'no run record of this installation says which'})"
        )
    why = "the audit failed" if audit["failed"] else "offline"
    return lines + against_lines(audit["against"], audit["judgedAgainst"], offline, why)
