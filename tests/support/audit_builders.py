"""Small sessions for audit tests, written to a folder and loaded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.session.loader import Session, load_session

SNAPSHOT = "Aspirin is used to reduce fever and pain. It was first made in 1897."


def quoted(claim_id: str, *quotes: str, text: str = "Aspirin reduces fever.") -> dict[str, Any]:
    return {
        "id": claim_id,
        "text": text,
        "sourceIds": ["s1"],
        "quotes": [{"sourceId": "s1", "text": q} for q in quotes],
    }


def write_session(folder: Path, claims: list[dict[str, Any]], per_finding: int = 50) -> Path:
    (folder / "findings").mkdir(parents=True)
    (folder / "sources").mkdir()
    for n, start in enumerate(range(0, max(len(claims), 1), per_finding), 1):
        finding = {
            "id": f"sq{n}",
            "subQuestion": "q",
            "claims": claims[start : start + per_finding],
        }
        (folder / "findings" / f"sq{n}.json").write_text(json.dumps(finding), encoding="utf-8")
    sources = {"sources": [{"id": "s1", "url": "https://example.org/aspirin"}]}
    (folder / "sources.json").write_text(json.dumps(sources), encoding="utf-8")
    (folder / "sources" / "s1.txt").write_text(SNAPSHOT, encoding="utf-8")
    return folder


def session(folder: Path, claims: list[dict[str, Any]]) -> Session:
    return load_session(write_session(folder, claims))
