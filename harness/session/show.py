"""What `judge show` reports: session summary plus the validated judge.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.contract.judgment import JudgeCheck, check_session_judge
from harness.fs.names import JUDGE_FILE
from harness.session.loader import Session, load_session


def show_session(path: Path, session_id: str | None = None) -> tuple[Session, JudgeCheck]:
    session = load_session(path, session_id)
    # The session's own judge.json only: a link (symbolic or hard) planted there is an
    # issue, and what it leads to is never read or shown.
    return session, check_session_judge(session.dir)


def judge_outcome(session_id: str, check: JudgeCheck) -> dict[str, Any]:
    """The `show --json` document's sessionId, valid and errors: what the Write tool's
    round-trip reports. None of it depends on the session's other files, so the Write
    tool checks judge.json alone (`check_session_judge`) instead of loading the session
    again (findings, sources, snapshots: the run's largest read) for three keys."""
    return {
        "sessionId": session_id,
        "valid": check.valid,
        "errors": [issue.as_dict() for issue in check.issues],
    }


def show_document(session: Session, check: JudgeCheck) -> dict[str, Any]:
    """The `show --json` document; the contract's keys plus summary and judgePath."""
    outcome = judge_outcome(session.session_id, check)
    return {
        "sessionId": outcome["sessionId"],
        "sessionDir": str(session.dir),
        "judgePath": str(session.dir / JUDGE_FILE),
        "valid": outcome["valid"],
        "errors": outcome["errors"],
        # A valid document is exactly the contract's shape: no model round-trip needed.
        "judge": check.data if check.valid else None,
        "summary": session.summary(),
        "problems": [problem.as_dict() for problem in session.problems],
    }


def summary_lines(session: Session, check: JudgeCheck) -> list[str]:
    s = session.summary()
    trace = f"present ({s['traceCalls']} calls)" if s["trace"] else "absent"
    if s["sourcesJson"]:
        sources_note = ""
    elif any(p.file == "sources.json" for p in session.problems):
        sources_note = " (sources.json unusable: ids from the findings)"
    else:
        sources_note = " (no sources.json)"
    lines = [
        f"session {session.session_id}  ({session.dir})",
        f"  findings {s['findings']}, claims {s['claims']}, quotes {s['quotes']}, "
        f"sources {s['sources']}{sources_note}, "
        f"snapshots {s['snapshots']}",
        f"  answer.md {'present' if s['answer'] else 'absent'}, trace.jsonl {trace}",
    ]
    if session.problems:
        lines.append(f"  {len(session.problems)} problem(s) in the session files:")
        lines += [f"    - {p.line()}" for p in session.problems[:50]]
        if len(session.problems) > 50:
            lines.append(f"    … and {len(session.problems) - 50} more (see --json)")
    if check.valid:
        scores = ", ".join(f"{k} {v}" for k, v in check.data["scores"].items())
        lines.append(f"  judge.json valid: {scores}")
    else:
        lines.append("  judge.json INVALID or missing:")
        lines += [f"    - {line}" for line in check.error_lines()]
    return lines
