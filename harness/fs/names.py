"""The name of every file the judge reads or writes under a session, each said once.

A session folder holds the pipeline's files and two of the judge's: `judge.json` (the
contract's judgment, beside the session's own files) and the artifact folder `.judge/`,
where every other artifact lives. Every module names them through this one, so renaming
a file is a change of one line (tests/fs/test_names.py checks each literal is here only).
"""

from __future__ import annotations

__all__ = [
    "ARTIFACT_DIR",
    "CACHE_DIR",
    "CITATIONS_FILE",
    "CITATIONS_REL",
    "JUDGE_FILE",
    "LOCK_FILE",
    "PAGE_FILE",
    "PREVIOUS_CITATIONS_FILE",
    "PREVIOUS_JUDGE_FILE",
    "RUN_FILE",
    "RUN_REL",
    "SAMPLES_DIR",
    "SAMPLES_REL",
    "artifact_rel",
]

# In the session folder itself.
JUDGE_FILE = "judge.json"  # the judgment (the contract's one output)
ARTIFACT_DIR = ".judge"  # the folder of every other artifact

# In the artifact folder.
RUN_FILE = "run.json"  # harness.artifacts.record.RunRecord
CITATIONS_FILE = "citations.json"  # harness.audit.report.CitationReport
PREVIOUS_JUDGE_FILE = "previous-judge.json"  # judge.json before this run replaced it
PREVIOUS_CITATIONS_FILE = "previous-citations.json"  # citations.json before it was replaced
SAMPLES_DIR = "samples"  # `judge run --samples K`: <index>.json each
CACHE_DIR = "sources"  # the audit's fetched-text cache: harness.fs.cache
LOCK_FILE = "lock"  # one run of a session at a time
PAGE_FILE = "report.html"  # `judge report`'s page of the session


def artifact_rel(name: str) -> str:
    """An artifact's path relative to the session folder (`.judge/<name>`)."""
    return f"{ARTIFACT_DIR}/{name}"


RUN_REL = artifact_rel(RUN_FILE)
CITATIONS_REL = artifact_rel(CITATIONS_FILE)
SAMPLES_REL = artifact_rel(SAMPLES_DIR)
