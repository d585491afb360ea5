"""What a harness artifact saved in the session (`.judge/…`) says, read as JSON.

One reader for the pages and `judge show`: through the session's confined reader (a link
in any component, `.judge` itself included, a hard link or a special file planted as the
artifact is refused with its reason), bounded in bytes, and any text that is not JSON —
not UTF-8, a 5,000-digit number, nesting past the parser — is a problem, never a crash.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.fs.confined import ConfinedError, SessionReader

MAX_SAVED_BYTES = 64 * 1024 * 1024  # a citations.json of 2,000 claims is about 2 MB


def read_saved_json(
    folder: Path, rel: str, fix: str, *, absent: str | None = None
) -> tuple[Any, str | None]:
    """(document, None) or (None, a problem naming the file and the fix). `absent` is the
    problem for a missing file (default: "<rel> is absent; <fix>")."""
    try:
        with SessionReader(folder) as reader:
            read = reader.read_bytes(rel, MAX_SAVED_BYTES)
    except ConfinedError as exc:
        if exc.why in ("missing", "notdir"):
            return None, absent or f"{rel} is absent; {fix}"
        return None, f"{exc.message}. {fix}"
    if read.cut is not None:
        return None, f"{rel} is larger than {MAX_SAVED_BYTES:,} bytes; not read. {fix}"
    try:
        return json.loads(read.data.decode("utf-8")), None
    except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, a 5,000-digit number
        return None, f"{rel} is not valid JSON ({exc}); {fix}"


__all__ = ["MAX_SAVED_BYTES", "read_saved_json"]
