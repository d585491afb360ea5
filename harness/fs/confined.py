"""One confined reader of a session folder.

A :class:`SessionReader` opens the session folder once (``O_DIRECTORY|O_NOFOLLOW``) and
every read names a path *relative to it*. The path is walked one component at a time
with ``openat(parent, name, O_NOFOLLOW)``, so:

- a symlink in any component is refused (the top folders ``findings/`` and ``sources/``
  included), and a component swapped for a symlink after the reader was opened cannot
  redirect a read: the kernel refuses it at the open;
- only regular files and folders are opened; FIFOs, sockets and devices are refused after
  an ``lstat`` and never opened;
- a regular file with more than one hard link (``st_nlink > 1``) is refused as "not the
  session's own": its other name may be any file outside the session;
- reads are capped in bytes and honour a :class:`Deadline`; what a cap cut is returned
  (``Blob.cut``, ``Listing.cut``), never silently dropped;
- listings and walks are iterative and bounded: a folder's entries are scanned once,
  only the first ``cap`` *candidates* (in the caller's order) are kept, and at most
  :data:`SCAN_CAP` entries are scanned per folder;
- names that are not valid UTF-8 arrive as ``surrogateescape`` strings (they round-trip
  to the same bytes) and are shown with ``\\xNN`` escapes (:func:`shown_name`).

Nothing but :class:`Refused` or :class:`Unreadable` escapes a read: a race (a file that
vanished, turned into a link or a folder between listing and open) is one of those, with
a reason the caller turns into a session problem or a tool error.
"""

from __future__ import annotations

import errno
import heapq
import io
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal

from harness import clock
from harness.clock import Deadline

__all__ = [
    "CHUNK",
    "DIR_ENTRIES",
    "SCAN_CAP",
    "Blob",
    "ConfinedError",
    "Entry",
    "Listing",
    "Refused",
    "SessionReader",
    "Unreadable",
    "Walk",
    "kind_words",
    "reading",
    "real_path",
    "shown_name",
]

# Entries scanned in one folder at most; beyond, the scan stops and says so. A million
# entries take about a second to scan; what is *kept* is bounded separately by `cap`.
SCAN_CAP = 2_000_000
# Entries of one folder kept by a walk (the first ones by name).
DIR_ENTRIES = 10_000
# Folder depth a walk descends to; deeper folders are listed as cut.
MAX_DEPTH = 64
# Bytes per read(2) call: the deadline is checked between calls.
CHUNK = 1 << 20
# Names of one folder a reader that keeps (``keep``) remembers as first scanned; a
# larger folder is scanned again by the next listing.
LISTED_NAMES = DIR_ENTRIES

Kind = Literal["file", "dir", "symlink", "fifo", "socket", "device", "other"]
Why = Literal[
    "symlink", "hardlink", "special", "dir", "notdir", "name", "missing", "denied", "io", "time"
]


class ConfinedError(Exception):
    """A read that did not happen: ``rel`` (shown escaped) and why, in words."""

    def __init__(self, rel: str, reason: str, why: Why, kind: str = "") -> None:
        super().__init__(f"{shown_name(rel)} {reason}")
        self.kind = kind  # for "special": fifo, socket, device, other
        self.rel = rel
        self.shown = shown_name(rel)
        self.reason = reason
        self.why = why

    @property
    def message(self) -> str:
        return str(self)


class Refused(ConfinedError):
    """The path is not the session's own file or folder: a link, a hard link, a special
    file, a name that leaves the session. Never read."""


class Unreadable(ConfinedError):
    """The path is the session's but cannot be read: missing, permission, I/O, time."""


def shown_name(name: str) -> str:
    """A name for people and models: bytes that are not UTF-8 shown as ``\\xNN``."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def kind_of_mode(mode: int) -> Kind:
    """What a file mode is: ``file``, ``dir``, ``symlink``, ``fifo``, ``socket``, ``device``."""
    return _kind(mode)


def _kind(mode: int) -> Kind:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "other"


_KIND_WORDS: dict[str, str] = {
    "file": "a regular file",
    "dir": "a folder",
    "symlink": "a symbolic link",
    "fifo": "a FIFO",
    "socket": "a socket",
    "device": "a device",
    "other": "a special file",
}


def kind_words(kind: str) -> str:
    """``fifo`` -> ``a FIFO``: what an entry is, for a message."""
    return _KIND_WORDS.get(kind, "a special file")


HARDLINK_REASON = (
    "has {n} hard links, so it is not the session's own file (its other name may be "
    "outside the session); not read"
)


@dataclass(frozen=True, slots=True)
class Entry:
    """One entry, from ``lstat`` (links never followed). ``rel`` is session-relative."""

    rel: str
    kind: Kind
    size: int
    mtime_ns: int
    nlink: int

    @property
    def name(self) -> str:
        return self.rel.rsplit("/", 1)[-1]

    @property
    def shown(self) -> str:
        return shown_name(self.rel)

    @property
    def own(self) -> bool:
        """A folder, or a regular file with one link: what the reader will open."""
        return self.kind == "dir" or (self.kind == "file" and self.nlink == 1)

    def describe(self) -> str:
        """``12 bytes``, ``folder``, or why it is not read; never a linked file's size."""
        if self.kind == "dir":
            return "folder"
        if self.kind == "file":
            if self.nlink > 1:
                return f"hard link ({self.nlink} links), not read"
            return f"{self.size:,} bytes"
        if self.kind == "symlink":
            return "symbolic link, not followed"
        return f"{kind_words(self.kind).removeprefix('a ')}, not read"


@dataclass(frozen=True, slots=True)
class Blob:
    """Bytes read from a file: at most the cap; ``cut`` says why there is more."""

    data: bytes
    size: int  # the file's size when opened (st_size)
    cut: str | None = None  # None: the whole file was read


@dataclass(slots=True)
class Listing:
    """A folder's kept entries, in the caller's order, and what was not kept."""

    entries: list[Entry] = field(default_factory=list)
    scanned: int = 0  # entries seen
    candidates: int = 0  # entries the filter accepted (the cap counts these)
    cut: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Walk:
    """A walk's entries (files and other non-folders, in walk order) and its cuts."""

    entries: list[Entry] = field(default_factory=list)
    folders: int = 0
    cut: list[str] = field(default_factory=list)


_BASE = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW
_ERRNO: dict[int, tuple[str, Why, bool]] = {
    # errno -> (reason, why, refused?)
    errno.ELOOP: (
        "is a symbolic link (or became one while being opened); not followed",
        "symlink",
        True,
    ),
    errno.ENOENT: ("does not exist", "missing", False),
    errno.ENOTDIR: ("does not exist (a component of the path is not a directory)", "notdir", False),
    errno.EACCES: ("cannot be read: permission denied", "denied", False),
    errno.EPERM: ("cannot be read: permission denied", "denied", False),
    errno.ENXIO: ("is a special file; not read", "special", True),
    errno.ENAMETOOLONG: ("has a name that is too long", "name", True),
}


def _error(rel: str, exc: OSError) -> ConfinedError:
    reason, why, refused = _ERRNO.get(
        exc.errno or 0, (f"cannot be read ({exc.strerror or exc})", "io", False)
    )
    return Refused(rel, reason, why) if refused else Unreadable(rel, reason, why)


_REAL_PATH_TRIES = 5


_O_PATH = getattr(os, "O_PATH", 0)
_PROC_FD = "/proc/self/fd/"


def _opened_path(path: Path | str) -> str | None:
    """The real path of an existing ``path`` from the kernel, in three system calls: the
    path opened as a reference (``O_PATH``, links followed, nothing read), then its name
    under /proc. ``os.path.realpath`` walks the path in Python with an ``lstat`` per
    component, and a batch resolves session folders thousands of times. None where this
    cannot answer (no ``O_PATH`` or /proc, a path that does not exist, a loop, a
    deleted folder): ``os.path.realpath`` answers then, as before."""
    if not _O_PATH:
        return None
    try:
        fd = os.open(path, _O_PATH | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        return _fd_name(fd)
    finally:
        os.close(fd)


def _fd_name(fd: int) -> str | None:
    """The real path of what ``fd`` holds, from /proc; None where /proc cannot say."""
    try:
        found = os.readlink(f"{_PROC_FD}{fd}")
    except OSError:
        return None
    # An unlinked folder reads "/x (deleted)", an object outside this root "anon_inode:..."
    if not found.startswith("/") or found.endswith(" (deleted)"):
        return None
    return found


def _opened_folder(root: Path | str) -> tuple[int, str] | None:
    """``root`` opened as a folder (links followed, as its real path then opened would
    be) and its real path, named by the kernel after the open, so the name is that of
    the folder held; None where that cannot be done (then the path is resolved and
    opened as before, which also words any error)."""
    if not _O_PATH:
        return None
    try:
        fd = os.open(root, os.O_RDONLY | os.O_CLOEXEC | os.O_DIRECTORY)
    except (OSError, ValueError):
        return None
    name = _fd_name(fd)
    if name is None:
        os.close(fd)
        return None
    return fd, name


def real_path(path: Path | str) -> str:
    """``os.path.realpath``, but a race is a :class:`Refused`, never an ``OSError``.

    A folder swapped for a symbolic link while the path is resolved (``renameat2``
    RENAME_EXCHANGE: ``lstat`` saw a link, ``readlink`` then finds a folder) makes
    realpath raise ``EINVAL``; a link removed between the two, ``ENOENT``. The path is
    resolved again a few times; if it keeps changing it is refused.
    """
    found = _opened_path(path)
    if found is not None:
        return found
    last: OSError | None = None
    for _ in range(_REAL_PATH_TRIES):
        try:
            return os.path.realpath(path)
        except OSError as exc:  # EINVAL, ENOENT, ELOOP ... from a component that changed
            last = exc
    raise Refused(
        str(path),
        "kept changing while its path was resolved (a folder or link swapped while it was "
        f"read: {last.strerror if last is not None else 'unknown'}); not read",
        "symlink",
    )


def split_rel(rel: str) -> list[str]:
    """``findings//a.json`` -> ``["findings", "a.json"]``; ``.``/empty -> ``[]``.

    Refuses ``..``, absolute paths and NUL: relative paths name things *in* the session.
    """
    if "\x00" in rel:
        raise Refused(rel.replace("\x00", "\\x00"), "holds a NUL byte", "name")
    if rel.startswith("/"):
        raise Refused(rel, "is an absolute path; name files relative to the session", "name")
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise Refused(rel, "goes up with '..'; only paths inside the session are read", "name")
    return parts


def _done_with(fd: int, root: int) -> None:
    """Close an fd `SessionReader._parent` gave, unless it is the root's own (compared
    with the root the walk began from: a reader closed meanwhile is never closed twice)."""
    if fd != root:
        os.close(fd)


class SessionReader:
    """The session folder, opened once; every read is relative to it (see the module)."""

    def __init__(
        self, root: Path | str, *, deadline: Deadline | None = None, keep: int = 0
    ) -> None:
        self._fd: int | None = None  # first: close() runs even if the open fails
        # Whole files `read_bytes` read, up to `keep` bytes in all, for `kept`: a run reads
        # the session once, and its digest names the bytes the loader read (not a second
        # read of files that may have changed in between).
        self._keep = keep
        self._kept: dict[str, bytes] = {}
        # With `keep`, what this reader saw of each name (None: absent) and each folder's
        # names as first scanned: a walk (the digest's) then lists the session as it was
        # read, so names added or removed in between are the next run's to see.
        self._seen: dict[str, Entry | None] | None = {} if keep > 0 else None
        self._listed: dict[str, list[str]] = {}
        # A bounded read (the session's inputs, their digests) ends at the sooner of the
        # deadline given and the thread's (harness.clock): in a batch, at the batch's limit
        # too, and so do its snapshots' conversions. Without one, reads are not timed.
        self.deadline = Deadline() if deadline is None else deadline.sooner(clock.current())
        opened = _opened_folder(root)
        if opened is not None:
            self._fd, name = opened
            self.root = Path(name)
            return
        self.root = Path(real_path(root))
        try:
            self._fd = os.open(self.root, _BASE | os.O_DIRECTORY)
        except OSError as exc:
            raise Unreadable(
                str(self.root), f"cannot be opened as the session folder ({exc.strerror})", "io"
            ) from None

    # -- lifetime ---------------------------------------------------------------

    @property
    def fd(self) -> int:
        if self._fd is None:
            raise ValueError("the session reader is closed")
        return self._fd

    @property
    def closed(self) -> bool:
        return self._fd is None

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        # What it kept goes with it (a snapshot store may hold on to a closed reader).
        self._kept, self._listed = {}, {}
        if self._seen is not None:
            self._seen = {}

    def __enter__(self) -> SessionReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    # -- opening ----------------------------------------------------------------

    def _parent(self, parts: list[str], rel: str, root: int) -> int:
        """An fd on the folder holding ``parts[-1]``: ``root`` (the reader's own, no copy
        made) for one part, a new one otherwise; give it back with `_done_with`."""
        fd = root
        depth, part = 0, ""
        try:
            for depth in range(len(parts) - 1):
                part = parts[depth]
                nxt = os.open(part, _BASE | os.O_DIRECTORY, dir_fd=fd)
                _done_with(fd, root)
                fd = nxt
        except OSError as exc:
            # O_DIRECTORY|O_NOFOLLOW on a link fails with ENOTDIR: say what it really is.
            try:
                mode = os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode
            except OSError:
                mode = 0
            _done_with(fd, root)
            if stat.S_ISLNK(mode):
                where = "/".join(parts[: depth + 1])
                reason = (
                    f"goes through {shown_name(where)}, a symbolic link; links are not followed"
                )
                raise Refused(rel, reason, "symlink") from None
            raise _error(rel, exc) from None
        return fd

    def _lstat(self, parent: int, name: str, rel: str) -> os.stat_result:
        try:
            return os.stat(name, dir_fd=parent, follow_symlinks=False)
        except OSError as exc:
            raise _error(rel, exc) from None

    def open(self, rel: str, *, want: Literal["file", "dir", "any"] = "any") -> tuple[int, Entry]:
        """A new fd on the session's own file or folder ``rel``, and its entry.

        The caller closes the fd. Symlinks (any component), special files and hard
        links are :class:`Refused`; a vanished or unreadable path is :class:`Unreadable`.
        """
        parts = split_rel(rel)
        rel = "/".join(parts) or "."
        if not parts:
            fd = os.dup(self.fd)
            return fd, self._entry(rel, os.fstat(fd))
        root = self.fd
        parent = self._parent(parts, rel, root)
        try:
            before = self._lstat(parent, parts[-1], rel)
            self._admit(rel, _kind(before.st_mode), before.st_nlink, want)
            flags = _BASE | os.O_NONBLOCK | (os.O_DIRECTORY if stat.S_ISDIR(before.st_mode) else 0)
            try:
                fd = os.open(parts[-1], flags, dir_fd=parent)
            except OSError as exc:
                raise _error(rel, exc) from None
        finally:
            _done_with(parent, root)
        try:
            st = os.fstat(fd)
            # Swapped between the lstat and the open: judge what was opened.
            self._admit(rel, _kind(st.st_mode), st.st_nlink, want)
        except BaseException:
            os.close(fd)
            raise
        entry = self._entry(rel, st)
        if self._seen is not None:
            self._seen[rel] = entry
        return fd, entry

    @staticmethod
    def _admit(rel: str, kind: Kind, nlink: int, want: str) -> None:
        if kind == "symlink":
            raise Refused(rel, "is a symbolic link; links are not followed", "symlink")
        if kind not in ("file", "dir"):
            reason = f"is {kind_words(kind)}, not a regular file; not read"
            raise Refused(rel, reason, "special", kind)
        if kind == "file" and nlink > 1:
            raise Refused(rel, HARDLINK_REASON.format(n=nlink), "hardlink")
        if want == "file" and kind == "dir":
            raise Unreadable(rel, "is a directory, expected a file", "dir")
        if want == "dir" and kind == "file":
            raise Unreadable(rel, "is a file, expected a folder", "notdir")

    @staticmethod
    def _entry(rel: str, st: os.stat_result) -> Entry:
        return Entry(rel, _kind(st.st_mode), st.st_size, st.st_mtime_ns, st.st_nlink)

    def stat(self, rel: str) -> Entry | None:
        """``rel``'s entry without following any link; None if it does not exist.

        The folders on the way must be the session's own (no links); the last
        component is reported as what it is, a symlink or a FIFO included.
        """
        parts = split_rel(rel)
        rel = "/".join(parts) or "."
        if not parts:
            return self._entry(rel, os.fstat(self.fd))
        found = self._stat(parts, rel)
        if self._seen is not None:
            self._seen[rel] = found
        return found

    def _stat(self, parts: list[str], rel: str) -> Entry | None:
        root = self.fd
        try:
            parent = self._parent(parts, rel, root)
        except Unreadable as exc:
            if exc.why in ("missing", "notdir"):
                return None
            raise
        try:
            return self._entry(rel, self._lstat(parent, parts[-1], rel))
        except Unreadable as exc:
            if exc.why in ("missing", "notdir"):
                return None
            raise
        finally:
            _done_with(parent, root)

    # -- reading ----------------------------------------------------------------

    def read_bytes(self, rel: str, cap: int, *, deadline: Deadline | None = None) -> Blob:
        """At most ``cap`` bytes of the session's own regular file ``rel``."""
        fd, entry = self.open(rel, want="file")
        try:
            blob = _read_fd(fd, entry, cap, deadline or self.deadline)
        finally:
            os.close(fd)
        # Kept only when read whole: not cut, and no more than the file held when opened.
        if blob.cut is None and len(blob.data) <= min(blob.size, self._keep):
            self._keep -= len(blob.data)
            self._kept[entry.rel] = blob.data
        return blob

    def kept(self, rel: str) -> bytes | None:
        """The whole of the session's file ``rel`` as `read_bytes` last read it through this
        reader, if it was kept (see ``keep``); None otherwise."""
        return self._kept.get(rel)

    def open_file(self, rel: str) -> BinaryIO:
        """A binary stream on the session's own regular file ``rel`` (caller closes it)."""
        fd, _ = self.open(rel, want="file")
        return os.fdopen(fd, "rb")

    # -- listing ----------------------------------------------------------------

    def list_dir(
        self,
        rel: str = ".",
        *,
        accept: Callable[[str], bool] | None = None,
        suffix: str | None = None,
        key: Callable[[str], Any] | None = None,
        cap: int = DIR_ENTRIES,
        scan_cap: int = SCAN_CAP,
        deadline: Deadline | None = None,
    ) -> Listing:
        """The first ``cap`` entries of folder ``rel`` that ``accept`` takes (and that end
        in ``suffix``, if given: the cheap filter for a flood of names), by ``key``.

        One pass over the folder, holding at most ``cap`` entries (a heap), so a folder of
        a million names costs a scan, not a million entries in memory. Entries come from
        ``lstat``: a link is listed as a link. ``Listing.cut`` says what was not kept.
        """
        fd, _ = self.open(rel, want="dir")
        try:
            prefix = "/".join(split_rel(rel))
            return self._scan(fd, prefix, accept, suffix, key, cap, scan_cap, deadline, False)
        finally:
            os.close(fd)

    def _scan(
        self,
        fd: int,
        prefix: str,
        accept: Callable[[str], bool] | None,
        suffix: str | None,
        key: Callable[[str], Any] | None,
        cap: int,
        scan_cap: int,
        deadline: Deadline | None,
        as_seen: bool,
    ) -> Listing:
        """The listing of folder ``fd``; ``as_seen``: the names and entries as this reader
        first saw them, where it kept them (see ``keep``)."""
        deadline = deadline or self.deadline
        listing = Listing()
        shown = f"{shown_name(prefix)}/" if prefix else "the session folder"
        seen = self._seen if as_seen else None
        listed = self._listed.get(prefix) if as_seen else None
        record: list[str] | None = [] if self._seen is not None and listed is None else None

        def names() -> Iterator[str]:
            # The hot loop of a million-entry folder: locals only, one check per 4,096.
            scanned = 0
            try:
                with _names(fd, listed) as it:
                    for name in it:
                        if scanned >= scan_cap:
                            listing.cut.append(
                                f"{shown}: scanning stopped after {scan_cap:,} entries; "
                                "entries beyond were not seen"
                            )
                            return
                        if not scanned & 4095 and deadline.expired:
                            listing.cut.append(
                                f"{shown}: scanning stopped at the time limit after "
                                f"{scanned:,} entries"
                            )
                            return
                        scanned += 1
                        if record is not None and scanned <= LISTED_NAMES:
                            record.append(name)
                        if suffix is not None and not name.endswith(suffix):
                            continue
                        if accept is None or accept(name):
                            listing.candidates += 1
                            yield name
            except OSError as exc:
                listing.cut.append(f"{shown}: cannot be listed ({exc.strerror})")
                return
            finally:
                listing.scanned = scanned
            if record is not None and scanned <= LISTED_NAMES:  # scanned whole: kept
                self._listed[prefix] = record

        # key=None keeps heapq on its C comparisons: 1,000,000 names in about a second.
        kept = heapq.nsmallest(cap, names(), key=key) if cap > 0 else []
        if listing.candidates > len(kept):
            what = "matching entries" if accept or suffix else "entries"
            listing.cut.append(
                f"{shown}: holds {listing.candidates:,} {what}; only the first {len(kept):,} "
                "were kept"
            )
        for name in kept:
            rel = f"{prefix}/{name}" if prefix else name
            if seen is not None and rel in seen:
                known = seen[rel]  # as first seen; None: it was absent then
                if known is not None:
                    listing.entries.append(known)
                continue
            try:
                entry = self._entry(rel, os.stat(name, dir_fd=fd, follow_symlinks=False))
            except OSError:
                continue  # vanished between scan and stat: nothing to list
            listing.entries.append(entry)
            if self._seen is not None:
                self._seen.setdefault(rel, entry)
        return listing

    def walk(
        self,
        rel: str = ".",
        *,
        skip: Iterable[str] = (),
        max_entries: int = 100_000,
        dir_entries: int = DIR_ENTRIES,
        max_depth: int = MAX_DEPTH,
        deadline: Deadline | None = None,
    ) -> Walk:
        """Every non-folder entry under ``rel``, each folder's files (sorted) before its
        subfolders, iteratively; at most ``max_entries`` in all, ``dir_entries`` per folder,
        ``max_depth`` levels. Links and special files are listed, never entered or opened.
        ``skip`` names session-relative folders not entered (the artifact folder).
        """
        deadline = deadline or self.deadline
        skipped = {"/".join(split_rel(s)) for s in skip}
        walk = Walk()
        stack: list[tuple[str, int]] = [("/".join(split_rel(rel)), 0)]
        while stack:
            prefix, depth = stack.pop()
            if deadline.expired:
                walk.cut.append(
                    f"the walk stopped at the time limit; {len(stack) + 1:,} folder(s) not listed"
                )
                break
            try:
                fd, _ = self.open(prefix or ".", want="dir")
            except ConfinedError as exc:
                walk.cut.append(f"{exc.message}; not listed")
                continue
            # Never keep more of one folder than the walk can still return (plus its
            # subfolders' share): a 300-line listing does not sort 10,000 names.
            keep = max(1, min(dir_entries, max_entries - len(walk.entries) + 64))
            try:
                listing = self._scan(fd, prefix, None, None, None, keep, SCAN_CAP, deadline, True)
            finally:
                os.close(fd)
            walk.folders += 1
            walk.cut.extend(listing.cut)
            subfolders: list[str] = []
            for entry in listing.entries:
                if entry.kind == "dir":
                    if entry.rel not in skipped:
                        subfolders.append(entry.rel)
                    continue
                if len(walk.entries) >= max_entries:
                    walk.cut.append(f"the walk stopped at {max_entries:,} entries")
                    return walk
                walk.entries.append(entry)
            if subfolders and depth + 1 > max_depth:
                walk.cut.append(
                    f"{shown_name(prefix)}/: {len(subfolders):,} folder(s) deeper than "
                    f"{max_depth} levels were not listed"
                )
                continue
            stack.extend((sub, depth + 1) for sub in reversed(subfolders))
        return walk


@contextmanager
def reading(folder: Path | str, reader: SessionReader | None = None) -> Iterator[SessionReader]:
    """``reader``, the caller's, left open for its next reads; else a reader of ``folder``
    of its own, closed at the end (its open's error raised as any read's would be)."""
    if reader is not None:
        yield reader
        return
    with SessionReader(folder) as own:
        yield own


@contextmanager
def _names(fd: int, listed: list[str] | None) -> Iterator[Iterator[str]]:
    """The names in folder ``fd``: ``listed`` (as first scanned) if given, else scanned."""
    if listed is not None:
        yield iter(listed)
        return
    with os.scandir(fd) as it:  # scandir dups the fd itself
        yield (entry.name for entry in it)


def _read_fd(fd: int, entry: Entry, cap: int, deadline: Deadline) -> Blob:
    """Read at most ``cap`` bytes (never more than the file held when opened, plus one to
    notice growth), checking the deadline between chunks."""
    want = min(cap, entry.size) + 1
    chunks: list[bytes] = []
    got = 0
    try:
        while got < want:
            if deadline.expired:
                return Blob(
                    b"".join(chunks), entry.size, f"cut at the time limit after {got:,} bytes"
                )
            chunk = os.read(fd, min(CHUNK, want - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
    except OSError as exc:
        raise Unreadable(entry.rel, f"cannot be read ({exc.strerror or exc})", "io") from None
    data = b"".join(chunks)
    if len(data) > cap:
        return Blob(data[:cap], entry.size, f"cut at the {cap:,}-byte cap")
    return Blob(data, entry.size)


class BoundedStream(io.RawIOBase):
    """A read-only stream over an fd (which it owns) that ends at ``cap`` bytes from the
    start of the file or at the deadline: wrapped in ``io.BufferedReader`` it bounds any
    line-by-line reader. ``stopped`` says why it ended early (None while within bounds).
    """

    def __init__(self, fd: int, cap: int, deadline: Deadline) -> None:
        super().__init__()
        self._fd = fd
        self._left = cap
        self._cap = cap
        self._deadline = deadline
        self.stopped: str | None = None

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, pos: int, whence: int = os.SEEK_SET) -> int:
        at = os.lseek(self._fd, pos, whence)
        self._left = self._cap - at
        return at

    def tell(self) -> int:
        return os.lseek(self._fd, 0, os.SEEK_CUR)

    def close(self) -> None:
        if not self.closed:
            os.close(self._fd)
        super().close()

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        if self._left <= 0:
            if self.stopped is None and os.read(self._fd, 1):
                self.stopped = f"stopped at the {self._cap:,}-byte cap"
            return 0
        if self._deadline.expired:
            self.stopped = "stopped at the time limit"
            return 0
        try:
            data = os.read(self._fd, min(len(view), self._left, CHUNK))
        except OSError as exc:
            self.stopped = f"stopped: the file cannot be read ({exc.strerror})"
            return 0
        view[: len(data)] = data
        self._left -= len(data)
        return len(data)
