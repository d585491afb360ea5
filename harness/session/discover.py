"""Which folders under ROOT are sessions: a folder holding `findings/`, `sources.json`,
`answer.md` or `trace.jsonl`, directly under ROOT (not nested, not hidden, not a link)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from harness.errors import UsageError

MARKERS = ("findings", "sources.json", "answer.md", "trace.jsonl")


def holds_session_files(folder: Path) -> bool:
    """Whether `folder` (as given: a link to a session is that session) holds at least one
    of the session's own files. What `judge run SESSION` and `judge report SESSION` ask."""
    return any(os.path.lexists(folder / marker) for marker in MARKERS)


def is_session(folder: Path) -> bool:
    """A session under ROOT: a real folder (not a link) holding at least one of the
    session's own files."""
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return False
    except OSError:
        return False
    return holds_session_files(folder)


def discover(root: Path, names: list[str] | None = None) -> list[Path]:
    """The sessions under `root`, sorted by name; or exactly `names`, in the order given.

    A name must be a session folder directly under `root`; anything else is a usage error
    naming it, raised before any session is judged."""
    root = Path(root).expanduser()
    if not root.is_dir():
        raise UsageError(f"batch root {root} does not exist or is not a folder")
    root = root.resolve()
    if names:
        found: list[Path] = []
        for name in dict.fromkeys(names):  # a name given twice is judged once
            if not name or name in (".", "..") or "/" in name or os.sep in name:
                raise UsageError(
                    f"session {name!r}: give the name of a folder directly under {root}"
                )
            folder = root / name
            if not is_session(folder):
                raise UsageError(
                    f"{folder} is not a session folder (it needs one of "
                    f"{', '.join(MARKERS)}); check the name, or leave it out"
                )
            found.append(folder)
        return found
    try:
        entries = sorted(os.listdir(root))
    except OSError as exc:
        raise UsageError(f"cannot list the batch root {root}: {exc.strerror or exc}") from exc
    return [root / n for n in entries if not n.startswith(".") and is_session(root / n)]


def not_a_session(folder: Path) -> str | None:
    """Why `folder` is not a research session (it holds none of the pipeline's files), or
    None. A folder that is not one is never written into: no judge.json, no .judge/."""
    if holds_session_files(folder):
        return None
    return (
        f"{folder} is not a research session: it holds none of findings/, sources.json, "
        "answer.md or trace.jsonl; pass the session folder the pipeline wrote (nothing was "
        "written into this one)"
    )


__all__ = ["MARKERS", "discover", "holds_session_files", "is_session", "not_a_session"]
