"""The digests a run's inputs are named by: the session's own files and the audit's
fetched-text cache (harness.fs.digest), both bounded by the run's deadline."""

from __future__ import annotations

from pathlib import Path

from harness.clock import Deadline
from harness.fs.confined import SessionReader
from harness.fs.digest import Digest, digest_cache, digest_session
from harness.fs.names import ARTIFACT_DIR


def read_digests(
    folder: Path, deadline: Deadline | None = None, reader: SessionReader | None = None
) -> tuple[Digest, Digest]:
    """The session's digest (not judge.json, not the artifact folder) and the cache's;
    through `reader`, the run's own, if given (the files it kept whole are not read again)."""
    digest = digest_session(folder, skip=(ARTIFACT_DIR,), deadline=deadline, reader=reader)
    return digest, digest_cache(folder, deadline=deadline, reader=reader)


def session_digest(folder: Path, deadline: Deadline | None = None) -> str:
    """sha256 over the session's own files (not judge.json, not the artifact folder);
    bounded (see :func:`harness.fs.digest.digest_session`)."""
    return digest_session(folder, skip=(ARTIFACT_DIR,), deadline=deadline).value


def input_digests(folder: Path, deadline: Deadline | None = None) -> tuple[str, str] | None:
    """The session's digest and the fetched-text cache's, as a run computes them; None
    when either could not see every name (a cap, the time limit): never "unchanged"."""
    digest, cache = read_digests(folder, deadline)
    if not (digest.complete and cache.complete):
        return None
    return digest.value, cache.value


__all__ = ["input_digests", "read_digests", "session_digest"]
