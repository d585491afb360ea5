"""The session digest: sha256 over the session's own files, bounded in bytes and time.

What is hashed, per entry of a confined walk (:meth:`SessionReader.walk`, links never
followed): the relative name and its kind; for the session's own regular files, the
first :data:`FILE_HASH_CAP` bytes, then — for a longer file, or once
:data:`TOTAL_HASH_CAP` bytes have been hashed in all, or past the deadline — only its
size and ``mtime_ns``. A sparse 10 GB file or a file that keeps growing therefore costs at
most one cap's worth of reading. Links, hard links and special files contribute their
kind only (their content is not the session's). ``Digest.cut`` says what was not hashed
in full, so a record can state it.

No folder's share of names is capped below the walk's own limit (a folder of 10,000
junk names sorted first cannot push `findings/sq1.json` out of the digest). A file past
the byte caps is summarised by size, mtime_ns, inode and ctime_ns — ctime is set by the
kernel on every change, so a change that keeps size and mtime is still seen. A digest
that did not see every name (the walk's limits, a refused folder, the time limit) is not
``complete``: the up-to-date rule never reuses a judgment on it (a cap exceeded means
"not up to date", never "unchanged").
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from harness.clock import Deadline
from harness.fs.confined import (
    CHUNK,
    ConfinedError,
    SessionReader,
)
from harness.fs.names import ARTIFACT_DIR, CACHE_DIR, JUDGE_FILE

__all__ = [
    "FILE_HASH_CAP",
    "MAX_FILES",
    "TOTAL_HASH_CAP",
    "Digest",
    "digest_cache",
    "digest_session",
]

FILE_HASH_CAP = 16 * 1024 * 1024
TOTAL_HASH_CAP = 256 * 1024 * 1024
MAX_FILES = 100_000


@dataclass(slots=True)
class Digest:
    value: str
    files: int = 0
    hashed_bytes: int = 0
    cut: list[str] = field(default_factory=list)
    # What makes the digest blind to a change: names not listed, the time limit. A file
    # hashed in part is not: its summary holds its ctime_ns, which any write changes.
    incomplete: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Every entry was listed, and every file hashed whole or summarised by metadata
        that any change to it changes (size, mtime_ns, inode, ctime_ns)."""
        return not self.incomplete


def digest_session(
    folder: Path,
    *,
    skip: Iterable[str] = (ARTIFACT_DIR,),
    exclude: Iterable[str] = (JUDGE_FILE,),
    deadline: Deadline | None = None,
    file_cap: int = FILE_HASH_CAP,
    total_cap: int = TOTAL_HASH_CAP,
    max_files: int = MAX_FILES,
    rel: str = ".",
    reader: SessionReader | None = None,
) -> Digest:
    """The digest of ``folder`` (see the module); never raises for the session's content.

    Through ``reader`` when given (the run's own, left open), a file it kept whole
    (`SessionReader.kept`: the loader read it) is hashed from those bytes, not read again.
    """
    deadline = deadline or Deadline()
    digest = hashlib.sha256()
    result = Digest("")
    excluded = set(exclude)
    opened: SessionReader | None = None  # a reader of its own, closed at the end
    if reader is None:
        try:
            reader = opened = SessionReader(folder, deadline=deadline)
        except ConfinedError as exc:
            result.cut.append(exc.message)
            result.incomplete.append(exc.message)
            result.value = "sha256:" + digest.hexdigest()
            return result
    summarised = 0
    late = False
    with opened or nullcontext():
        if rel != ".":
            try:
                os.close(reader.open(rel, want="dir")[0])
            except ConfinedError as exc:
                if exc.why not in ("missing", "notdir"):
                    result.cut.append(exc.message)
                    result.incomplete.append(exc.message)
                result.value = "sha256:" + digest.hexdigest()
                return result  # no such folder: nothing to hash
        walk = reader.walk(
            rel, skip=skip, max_entries=max_files, dir_entries=max_files, deadline=deadline
        )
        result.cut.extend(walk.cut)
        result.incomplete.extend(walk.cut)  # names not listed: their changes unseen
        for entry in walk.entries:
            if entry.rel in excluded:
                continue
            result.files += 1
            digest.update(entry.rel.encode("utf-8", "surrogateescape") + b"\0")
            digest.update(entry.kind.encode() + b"\0")
            if not entry.own:
                digest.update(f"<not read: {entry.describe()}>".encode())
            elif deadline.expired or result.hashed_bytes >= total_cap:
                late = late or deadline.expired
                summarised += 1
                digest.update(_summary(reader, entry.rel, entry.size, entry.mtime_ns))
            else:
                budget = min(file_cap, total_cap - result.hashed_bytes)
                kept = reader.kept(entry.rel)
                if kept is not None and len(kept) <= budget:
                    digest.update(kept)
                    got, whole = len(kept), True
                else:
                    got, whole = _hash_file(reader, entry.rel, budget, digest, deadline)
                result.hashed_bytes += got
                if not whole:
                    summarised += 1
                    digest.update(_summary(reader, entry.rel, entry.size, entry.mtime_ns))
            digest.update(b"\0")
    if summarised:
        why = "the time limit" if late else f"the {file_cap:,}-byte per-file cap"
        result.cut.append(
            f"{summarised:,} file(s) hashed in part (up to {why}, "
            f"{total_cap:,} bytes in all), then by size, mtime_ns, inode and ctime_ns"
        )
        if late:
            result.incomplete.append("the digest reached the time limit")
    result.value = "sha256:" + digest.hexdigest()
    return result


def digest_cache(
    folder: Path, *, deadline: Deadline | None = None, reader: SessionReader | None = None
) -> Digest:
    """The digest of the fetched-text cache (`.judge/sources/`), an input of the audit:
    every entry's name and bytes (its proof of origin included), bounded as the session's."""

    return digest_session(
        folder,
        skip=(),
        exclude=(),
        deadline=deadline,
        rel=f"{ARTIFACT_DIR}/{CACHE_DIR}",
        reader=reader,
    )


def _summary(reader: SessionReader, rel: str, size: int, mtime_ns: int) -> bytes:
    """A file not hashed in full: its size and mtime_ns (which a copy may keep), and its
    inode and ctime_ns, which no program can set: a change that keeps size and mtime
    still changes the digest."""
    try:
        fd, _ = reader.open(rel, want="file")
    except ConfinedError as exc:
        return f"<not read: {exc.reason}>".encode()
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    return f"<size {size} mtime_ns {mtime_ns} ino {st.st_ino} ctime_ns {st.st_ctime_ns}>".encode()


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
            if deadline.expired:
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
