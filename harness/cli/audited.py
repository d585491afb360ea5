"""What the citation audit judged support against, for `judge run`'s summary and `judge show`.

Light on purpose: `judge show` reads the saved report as plain JSON (the few fields it
prints) rather than importing the audit, which would double its start-up time.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.session.loader import ARTIFACT_DIR
from harness.session.saved import artifact_set

SAVED = f"{ARTIFACT_DIR}/citations.json"
_MODES = ("auto", "sources", "quotes")
_VERDICTS = ("supported", "uncertain", "unsupported", "unchecked", "error")


def against_lines(against: str | None, split: Mapping[str, int] | None, offline: bool) -> list[str]:
    """The mode asked, and how many claims were judged against sources, quotes, neither."""
    if against is None:  # a run.json written before the mode was recorded
        return []
    if offline:
        return [f"  citations: --against {against} not applied: offline, no support judged"]
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
    verdicts, models, mode and how many claims were judged against what; or `problem`."""
    artifacts = artifact_set(folder)
    report, problem = _saved(artifacts.citations, artifacts.citations_problem)
    if report is None:
        return {"path": SAVED, "problem": problem}
    claims: list[dict[str, Any]] = report["claims"]
    split = {w: sum(1 for c in claims if c.get("against") == w) for w in ("sources", "quotes")}
    split["neither"] = len(claims) - split["sources"] - split["quotes"]
    model = report.get("model")
    return {
        "path": SAVED,
        "claims": len(claims),
        "verdicts": {v: sum(1 for c in claims if c.get("verdict") == v) for v in _VERDICTS},
        "offline": report["offline"],
        "models": [str(m) for m in report.get("models") or ([model] if model else [])],
        "against": report["against"],
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
    lines = [f"  citations: {audit['claims']} claims ({how}): {verdicts or 'none'}; {SAVED}"]
    if not audit["pairedWithJudge"]:
        lines.append(
            f"  citations: from run {audit['runId']}; not the run that wrote judge.json "
            f"({audit['judgeRunId'] or 'no run record of this installation says which'})"
        )
    return lines + against_lines(audit["against"], audit["judgedAgainst"], offline)


def _saved(data: dict[str, Any] | None, problem: str | None) -> tuple[dict[str, Any] | None, str]:
    """The saved report's JSON, or why there is none to show (read as `judge report` reads
    it: through the confined reader, a regular file only, bounded, sealed by this
    installation: `harness.session.saved.artifact_set`)."""
    fix = "judge run rewrites it"
    if data is None:
        return None, problem or f"no audit saved (judge run writes {SAVED})"
    wrong = _wrong(data)
    if wrong:
        return None, f"{SAVED} is not a citation report ({wrong}); {fix}"
    return data, ""


def _wrong(data: Any) -> str:
    """What in the fields `judge show` reads does not match the report format, if anything."""
    if not isinstance(data, dict):
        return "not a JSON object"
    if data.get("against") not in _MODES:
        return f"against: expected one of {', '.join(_MODES)}"
    if not isinstance(data.get("offline"), bool):
        return "offline: expected true or false"
    claims = data.get("claims")
    if not isinstance(claims, list) or not all(isinstance(c, dict) for c in claims):
        return "claims: expected a list of claims"
    if not isinstance(data.get("models", []), list):
        return "models: expected a list"
    return ""
