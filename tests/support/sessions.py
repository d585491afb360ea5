"""Sessions written for tests that need one without the fixtures, and the byte snapshot that
checks a run left the session's own files as they were."""

from __future__ import annotations

import json
from pathlib import Path


def write_small_session(folder: Path) -> Path:
    """A tiny well-formed session, for tests that need one without the fixtures."""
    (folder / "findings").mkdir(parents=True)
    (folder / "sources").mkdir()
    finding = {
        "id": "sq1",
        "subQuestion": "What does aspirin do?",
        "claims": [
            {
                "id": "sq1-c1",
                "text": "Aspirin reduces fever.",
                "sourceIds": ["s1"],
                "quotes": [{"sourceId": "s1", "text": "Aspirin is used to reduce fever."}],
                "verification": {"votes": [{"verifier": "v1", "verdict": "supported"}]},
            }
        ],
    }
    (folder / "findings" / "sq1.json").write_text(json.dumps(finding, indent=2))
    sources = {"sources": [{"id": "s1", "url": "https://example.org/aspirin", "tier": "primary"}]}
    (folder / "sources.json").write_text(json.dumps(sources, indent=2))
    (folder / "sources" / "s1.txt").write_text("Aspirin is used to reduce fever and pain.\n")
    (folder / "answer.md").write_text("Aspirin reduces fever [s1].\n")
    return folder


def snapshot(folder: Path) -> dict[str, bytes]:
    """The session's own files (everything but judge.json and .judge/), for byte-identity."""
    files: dict[str, bytes] = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if rel == "judge.json" or rel.startswith(".judge") or not path.is_file():
            continue
        files[rel] = path.read_bytes()
    return files
