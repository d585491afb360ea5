"""The one wording of a session's file problems (a finding that is not valid JSON, a
truncated sources.json, an id missing from sources.json, …) for every summary: `judge run`'s,
`judge cite`'s table, the batch row and the index row say "N problems in the session's
files" and name the first (`judge show` and the session page list them all)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def summary(lines: Sequence[str]) -> str | None:
    """`3 problems in the session's files; the first: findings/sq2.json: …`, or None."""
    if not lines:
        return None
    n = len(lines)
    head = f"{n} problem{'s' if n != 1 else ''} in the session's files"
    return f"{head}; the first: {lines[0]}" if n > 1 else f"{head}: {lines[0]}"


def of_folder(folder: Path) -> list[str]:
    """The problem lines of the session in `folder`, as `judge show` lists them (never
    raises on what the session holds)."""
    from harness.session.loader import load_session

    return [p.line() for p in load_session(folder).problems]


__all__ = ["of_folder", "summary"]
