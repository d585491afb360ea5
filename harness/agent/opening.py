"""The agent's first message: the session's name, its tools, its files, the problems the
loader found and the citation audit's summary."""

from __future__ import annotations

from pathlib import Path

from harness.fs.confined import ConfinedError, SessionReader
from harness.fs.names import ARTIFACT_DIR
from harness.session.loader import Session
from harness.text.untrusted import escape_controls, wrap_untrusted


def first_message(session: Session, cli: str, citations: str | None) -> str:
    """The first user message of the judge's conversation."""
    files = listing(session.dir)
    sid, where = escape_controls(session.session_id), escape_controls(str(session.dir))
    parts = [
        f"Judge research session `{sid}`; its folder is {where}.",
        "You have three tools: Read (files and folders inside the session), Write (only "
        "judge.json) and WebFetch (only the session's own source URLs).",
        "You have no shell. Instead, every Write of judge.json validates the content first "
        f"and then runs the brief's round-trip `{cli} show {sid} --json` for "
        "you, reporting its exit code and errors in the tool result. Invalid content is not "
        "written. When the result says the round-trip exited 0, you are done: end your turn "
        "with the one-line receipt.",
        wrap_untrusted("directory", files),
    ]
    if session.problems:
        shown = "\n".join(f"- {p.line()}" for p in session.problems[:30])
        more = len(session.problems) - 30
        if more > 0:
            shown += f"\n- … and {more} more"
        parts.append(
            "The harness found these problems while loading the session files "
            "(take them into account):\n" + wrap_untrusted("report", shown)
        )
    if citations:
        parts.append(citations)
    return "\n\n".join(parts)


def listing(folder: Path, limit: int = 300) -> str:
    """The session's files for the first message, read through the confined reader:
    a link or hard link is named as such, never followed or sized."""
    try:
        with SessionReader(folder) as reader:
            walk = reader.walk(skip=(ARTIFACT_DIR,), max_entries=limit)
    except ConfinedError as exc:
        return f"(the session folder cannot be listed: {exc.reason})"
    lines = [f"{entry.shown}  ({entry.describe()})" for entry in walk.entries]
    if any("stopped at" in cut for cut in walk.cut) and len(walk.entries) >= limit:
        lines.append(f"… listing stopped at {limit} entries; Read a folder to see more")
    lines += [f"… {cut}" for cut in walk.cut if "stopped at" not in cut][:20]
    return "\n".join(lines) or "(the session folder is empty)"


__all__ = ["first_message", "listing"]
