"""Where the harness finds its schemas and briefs (the checkout's top-level folders)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "schemas"
BRIEFS = ROOT / "briefs"
DEFAULT_BRIEF = BRIEFS / "judge-deep.md"


def schema_path(name: str) -> Path:
    return SCHEMAS / name
