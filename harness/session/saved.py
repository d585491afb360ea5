"""What `harness.run.pipeline` reads back of the artifacts it just wrote, until it reads them
by their one reader (`harness.artifacts.read.provenance`, which every other reader uses:
the pipeline is being rewritten apart, and switches to it when that lands).

`artifact_set` gives the judge.json in place's digest and the citation report's run id
and digest, the report only under this installation's seal (harness.fs.origin).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.fs.confined import ConfinedError, SessionReader
from harness.fs.names import CITATIONS_REL, JUDGE_FILE
from harness.fs.origin import sealed_by_us

MAX_SAVED_BYTES = 64 * 1024 * 1024  # a citations.json of 2,000 claims is about 2 MB


def _sha(folder: Path, rel: str) -> tuple[bytes | None, str | None]:
    try:
        with SessionReader(folder) as reader:
            read = reader.read_bytes(rel, MAX_SAVED_BYTES)
    except ConfinedError:
        return None, None
    if read.cut is not None:
        return None, None
    return read.data, "sha256:" + hashlib.sha256(read.data).hexdigest()


@dataclass(frozen=True, slots=True)
class _Written:
    citations: dict[str, Any] | None  # citations.json, sealed by this installation
    judge_sha256: str | None
    citations_run: str | None
    citations_sha256: str | None


def artifact_set(folder: Path) -> _Written:
    """judge.json's digest, and citations.json's run id and digest when it is sealed."""
    judge_sha = _sha(folder, JUDGE_FILE)[1]
    data, citations_sha = _sha(folder, CITATIONS_REL)
    citations: dict[str, Any] | None = None
    if data is not None:
        try:
            document = json.loads(data.decode("utf-8"))
        except (ValueError, RecursionError):
            document = None
        if isinstance(document, dict) and sealed_by_us("citations", document):
            citations = document
    run = (citations or {}).get("runId")
    return _Written(
        citations,
        judge_sha,
        run if isinstance(run, str) else None,
        citations_sha if citations is not None else None,
    )


__all__ = ["artifact_set"]
