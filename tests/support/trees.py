"""Planting one entry of a generated session tree: a file, a folder, a link out of or
into the session, a hard link to a file outside it, or a FIFO (the property tests' kinds)."""

from __future__ import annotations

import os
from pathlib import Path

FINDING_TEXT = '{"id": "a", "claims": [{"id": "c", "text": "t"}]}'


def plant(target: Path, kind: str, outside: Path, session: Path, text: str = "own") -> bool:
    """Make `target` an entry of `kind`; False when the name is taken (never written into:
    a FIFO there would block the writer) or is taken by another kind meanwhile."""
    if os.path.lexists(target):
        return False
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if kind == "file":
            target.write_text(text)
        elif kind == "json":
            target.write_text(FINDING_TEXT)
        elif kind == "dir":
            target.mkdir()
        elif kind == "symlink-out":
            target.symlink_to(outside)
        elif kind == "symlink-in":
            target.symlink_to(session)
        elif kind == "hardlink-out":
            os.link(outside, target)
        else:
            os.mkfifo(target)
    except OSError:
        return False  # a name already taken by another kind
    return True
