"""What a harness artifact saved in the session (`.judge/…`) says, read as JSON.

One reader for the pages and `judge show`: through the session's confined reader (a link
in any component, `.judge` itself included, a hard link or a special file planted as the
artifact is refused with its reason), bounded in bytes, and any text that is not JSON —
not UTF-8, a 5,000-digit number, nesting past the parser — is a problem, never a crash.

Everything under the session comes from the pipeline, `.judge/` included: `read_sealed`
gives an artifact only when it carries this installation's proof of origin
(harness.fs.origin), and `artifact_set` says which run each of judge.json, run.json and
citations.json came from, so that no reader pairs artifacts of different runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.fs.confined import ConfinedError, SessionReader
from harness.fs.origin import sealed_by_us

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


def not_ours(rel: str, what: str) -> str:
    """The one wording of an artifact without this installation's proof of origin."""
    return (
        f"ignored {what} this installation did not write ({rel} has no valid proof of "
        "origin; it may have come with the session)"
    )


def read_sealed(
    folder: Path, rel: str, kind: str, fix: str, what: str, *, absent: str | None = None
) -> tuple[dict[str, Any] | None, str | None]:
    """`read_saved_json`, and only a document sealed by this installation for `kind`:
    anything else is treated as absent, with the problem saying so."""
    data, problem = read_saved_json(folder, rel, fix, absent=absent)
    if problem is not None:
        return None, problem
    if not sealed_by_us(kind, data):
        return None, f"{not_ours(rel, what)}; {fix}"
    assert isinstance(data, dict)
    return data, None


RUN_REL = ".judge/run.json"
CITATIONS_REL = ".judge/citations.json"


@dataclass(slots=True)
class ArtifactSet:
    """Which run each artifact in place came from, as far as this installation can say."""

    run: dict[str, Any] | None  # run.json, verified
    run_problem: str | None
    citations: dict[str, Any] | None  # citations.json, verified
    citations_problem: str | None
    judge_sha256: str | None  # of the judge.json in place
    judge_run: str | None  # the run that wrote that judge.json (None: unknown)
    citations_run: str | None
    citations_sha256: str | None = None

    @property
    def paired(self) -> bool:
        """judge.json and citations.json are known to come from one run."""
        return self.judge_run is not None and self.judge_run == self.citations_run

    @property
    def run_id(self) -> str | None:
        value = (self.run or {}).get("runId")
        return value if isinstance(value, str) else None

    def ended(self, run_id: str | None) -> str | None:
        """When run `run_id` ended, if run.json says."""
        refs = (self.run or {}).get("artifacts") or {}
        for ref in (refs.get("judge"), refs.get("citations")):
            if isinstance(ref, dict) and ref.get("runId") == run_id and run_id is not None:
                ended = ref.get("ended")
                return ended if isinstance(ended, str) else None
        return None

    def document(self) -> dict[str, Any]:
        """For `judge show --json`: the run of each artifact, and whether they pair."""
        return {
            "run": self.run_id,
            "judge": self.judge_run,
            "citations": self.citations_run,
            "paired": self.paired,
        }


def _judge_sha(folder: Path) -> str | None:
    try:
        with SessionReader(folder) as reader:
            read = reader.read_bytes("judge.json", MAX_SAVED_BYTES)
    except ConfinedError:
        return None
    return None if read.cut is not None else "sha256:" + hashlib.sha256(read.data).hexdigest()


def artifact_set(folder: Path) -> ArtifactSet:
    """Read run.json and citations.json (sealed only) and judge.json's digest, and say
    which run each came from: judge.json's is the run run.json names for a file of that
    digest; citations.json's is the run id it carries under its seal."""
    run, run_problem = read_sealed(
        folder,
        RUN_REL,
        "run",
        "run `judge run` on it",
        "a run record",
        absent=f"{RUN_REL} is absent; run `judge run` on it",
    )
    citations, citations_problem = read_sealed(
        folder,
        CITATIONS_REL,
        "citations",
        "judge run rewrites it",
        "a citation report",
        absent=f"no audit saved (judge run writes {CITATIONS_REL})",
    )
    judge_sha = _judge_sha(folder)
    refs = (run or {}).get("artifacts") or {}
    judge_ref = refs.get("judge") if isinstance(refs, dict) else None
    judge_run = None
    if (
        isinstance(judge_ref, dict)
        and judge_sha is not None
        and judge_ref.get("sha256") == judge_sha
    ):
        value = judge_ref.get("runId")
        judge_run = value if isinstance(value, str) else None
    value = (citations or {}).get("runId")
    citations_run = value if isinstance(value, str) else None
    citations_sha = None
    if citations is not None:
        with contextlib.suppress(ConfinedError):
            with SessionReader(folder) as reader:
                data = reader.read_bytes(CITATIONS_REL, MAX_SAVED_BYTES).data
            citations_sha = "sha256:" + hashlib.sha256(data).hexdigest()
    return ArtifactSet(
        run,
        run_problem,
        citations,
        citations_problem,
        judge_sha,
        judge_run,
        citations_run,
        citations_sha,
    )


__all__ = [
    "CITATIONS_REL",
    "MAX_SAVED_BYTES",
    "RUN_REL",
    "ArtifactSet",
    "artifact_set",
    "not_ours",
    "read_saved_json",
    "read_sealed",
]
