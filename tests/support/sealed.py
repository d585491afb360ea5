"""Artifacts a test writes as this installation would (harness.fs.origin's seal).

A hand-made citations.json or run.json is, to the harness, a planted one: it is read only
when sealed with this installation's key. Tests that build artifacts by hand to check how
they are shown seal them here (the key is the test run's: conftest's JUDGE_STATE_DIR).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from harness.fs.origin import sealed_artifact

RUN_ID = "20261201T100000Z-test"


def write_sealed(path: Path, kind: str, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(sealed_artifact(kind, document))


def reseal(folder: Path, run_id: str = RUN_ID) -> None:
    """Seal the session's citations.json and run.json (as they are now) as one run's set
    with its judge.json: what a test edited by hand reads as this installation's."""
    artifacts = folder / ".judge"
    judge = folder / "judge.json"
    citations = artifacts / "citations.json"
    run = artifacts / "run.json"
    if citations.exists():
        doc = json.loads(citations.read_text(encoding="utf-8"))
        doc.pop("origin", None)
        doc["runId"] = run_id
        write_sealed(citations, "citations", doc)
    if run.exists():
        doc = json.loads(run.read_text(encoding="utf-8"))
        doc.pop("origin", None)
        doc["runId"] = run_id
        refs: dict[str, Any] = {}
        if judge.exists():
            sha = "sha256:" + hashlib.sha256(judge.read_bytes()).hexdigest()
            refs["judge"] = {"runId": run_id, "sha256": sha, "ended": doc.get("ended")}
        if citations.exists():
            refs["citations"] = {"runId": run_id, "ended": doc.get("ended")}
        doc["artifacts"] = refs
        write_sealed(run, "run", doc)
