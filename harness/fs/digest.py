"""The session digest: sha256 over the session's own files, bounded in bytes and time.

What is hashed, per entry of a confined walk (:meth:`SessionReader.walk`, links never
followed): the relative name and its kind; for the session's own regular files, the
first :data:`FILE_HASH_CAP` bytes, then — for a longer file, or once
:data:`TOTAL_HASH_CAP` bytes have been hashed in all, or past the deadline — only its
size and ``mtime_ns``. A sparse 10 GB file or a file that keeps growing therefore costs at
most one cap's worth of reading. Links, hard links and special files contribute their
kind only (their content is not the session's). ``Digest.cut`` says what was not hashed
in full, so a record can state it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from harness.fs.confined import (
    CHUNK,
    ConfinedError,
    Deadline,
    SessionReader,
)

__all__ = ["FILE_HASH_CAP", "MAX_FILES", "TOTAL_HASH_CAP", "Digest", "digest_session"]

FILE_HASH_CAP = 16 * 1024 * 1024
TOTAL_HASH_CAP = 256 * 1024 * 1024
MAX_FILES = 100_000


@dataclass(slots=True)
class Digest:
    value: str
    files: int = 0
    hashed_bytes: int = 0
    cut: list[str] = field(default_factory=list)


def digest_session(
    folder: Path,
    *,
    skip: Iterable[str] = (".judge",),
    exclude: Iterable[str] = ("judge.json",),
    deadline: Deadline | None = None,
    file_cap: int = FILE_HASH_CAP,
    total_cap: int = TOTAL_HASH_CAP,
    max_files: int = MAX_FILES,
) -> Digest:
    """The digest of ``folder`` (see the module); never raises for the session's content."""
    deadline = deadline or Deadline()
    digest = hashlib.sha256()
    result = Digest("")
    excluded = set(exclude)
    try:
        reader = SessionReader(folder, deadline=deadline)
    except ConfinedError as exc:
        result.cut.append(exc.message)
        result.value = "sha256:" + digest.hexdigest()
        return result
    summarised = 0
    late = False
    with reader:
        walk = reader.walk(skip=skip, max_entries=max_files, deadline=deadline)
        result.cut.extend(walk.cut)
        for entry in walk.entries:
            if entry.rel in excluded:
                continue
            result.files += 1
            digest.update(entry.rel.encode("utf-8", "surrogateescape") + b"\0")
            digest.update(entry.kind.encode() + b"\0")
            if not entry.own:
                digest.update(f"<not read: {entry.describe()}>".encode())
            elif deadline.expired() or result.hashed_bytes >= total_cap:
                late = late or deadline.expired()
                summarised += 1
                digest.update(f"<size {entry.size} mtime_ns {entry.mtime_ns}>".encode())
            else:
                budget = min(file_cap, total_cap - result.hashed_bytes)
                got, whole = _hash_file(reader, entry.rel, budget, digest, deadline)
                result.hashed_bytes += got
                if not whole:
                    summarised += 1
                    digest.update(f"<size {entry.size} mtime_ns {entry.mtime_ns}>".encode())
            digest.update(b"\0")
    if summarised:
        why = "the time limit" if late else f"the {file_cap:,}-byte per-file cap"
        result.cut.append(
            f"{summarised:,} file(s) hashed in part (up to {why}, "
            f"{total_cap:,} bytes in all), then by size and mtime_ns"
        )
    result.value = "sha256:" + digest.hexdigest()
    return result


def _hash_file(
    reader: SessionReader, rel: str, budget: int, digest: hashlib._Hash, deadline: Deadline
) -> tuple[int, bool]:
    """Hash at most ``budget`` bytes of ``rel``; (bytes hashed, whether that was all)."""
    try:
        fd, _ = reader.open(rel, want="file")
    except ConfinedError as exc:  # vanished or swapped since the walk
        digest.update(f"<not read: {exc.reason}>".encode())
        return 0, True
    got = 0
    try:
        while got < budget:
            if deadline.expired():
                return got, False
            chunk = os.read(fd, min(CHUNK, budget - got))
            if not chunk:
                return got, True
            digest.update(chunk)
            got += len(chunk)
        return got, not os.read(fd, 1)
    except OSError:
        digest.update(b"<unreadable>")
        return got, True
    finally:
        os.close(fd)
