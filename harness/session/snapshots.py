"""What text does source X say: one rule for every reader of ``sources/<id>.*``.

The loader, the audit and WebFetch (stored) all ask :class:`SnapshotStore`, so a source
is selected, decoded and converted the same way everywhere.

Which file counts (:func:`select`, a pure function of the folder's names): the files whose
stem is exactly the source id (``s1.txt`` for ``s1``; not ``s1.v2.txt``, not ``.s1.txt``),
in the order of :data:`PREFERENCE` (the pipeline's own text first: ``.txt``, Markdown,
JSON, then HTML, then PDF, then any other extension), ties broken by name. Exactly one file
counts; if there are others they are reported as ``others`` (the loader lists them as a
problem) and read only when the preferred one cannot become text.

The I/O is one small function (:meth:`SnapshotStore._read_bytes`) so the confined reader
can replace it. Each source's :class:`~harness.text.document.Document` is built once per
store; a total byte budget bounds what one store reads.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from harness import config
from harness.clock import Deadline
from harness.fs.confined import ConfinedError, Refused, SessionReader
from harness.text.document import DEFAULT_LIMITS, Document, Limits, to_document

__all__ = [
    "PREFERENCE",
    "TOTAL_BYTES",
    "Selection",
    "SnapshotStore",
    "rank",
    "select",
    "select_all",
]

PREFERENCE: tuple[str, ...] = (
    ".txt",
    ".text",
    ".md",
    ".markdown",
    ".json",
    ".html",
    ".htm",
    ".xhtml",
    ".pdf",
)
TOTAL_BYTES = config.SNAPSHOTS_TOTAL_BYTES
SNAPSHOT_FILES = 20_000  # names in sources/ considered (the loader says when there are more)


def rank(name: str) -> int:
    """Preference of a snapshot file by its extension (lower is preferred)."""
    ext = os.path.splitext(name)[1].lower()
    return PREFERENCE.index(ext) if ext in PREFERENCE else len(PREFERENCE)


def _stem(name: str) -> str | None:
    if name.startswith(".") or "/" in name or "\x00" in name:
        return None
    stem, ext = os.path.splitext(name)
    return stem if ext and stem else None


@dataclass(frozen=True, slots=True)
class Selection:
    """The snapshot file that counts for one source id, and the others beside it."""

    source_id: str
    chosen: str
    others: tuple[str, ...] = ()

    @property
    def candidates(self) -> tuple[str, ...]:
        return (self.chosen, *self.others)

    def ambiguity(self) -> str | None:
        """A sentence naming the files that do not count, or None when there are none."""
        if not self.others:
            return None
        listed = ", ".join(f"sources/{n}" for n in self.others)
        return (
            f"source {self.source_id} has {len(self.others) + 1} snapshots; "
            f"sources/{self.chosen} is the one read (by extension: "
            f"{' '.join(PREFERENCE)}, then others), {listed} "
            f"{'is' if len(self.others) == 1 else 'are'} read only if it cannot become text"
        )


def select(source_id: str, names: Iterable[str]) -> Selection | None:
    """The file of ``names`` that counts as source ``source_id``'s snapshot (None: none)."""
    matches = sorted((n for n in names if _stem(n) == source_id), key=lambda n: (rank(n), n))
    if not matches:
        return None
    return Selection(source_id, matches[0], tuple(matches[1:]))


def select_all(names: Iterable[str]) -> dict[str, Selection]:
    """Every source id that has a snapshot among ``names``, in id order."""
    groups: dict[str, list[str]] = {}
    for name in names:
        stem = _stem(name)
        if stem is not None:
            groups.setdefault(stem, []).append(name)
    out: dict[str, Selection] = {}
    for stem in sorted(groups):
        chosen = select(stem, groups[stem])
        if chosen is not None:
            out[stem] = chosen
    return out


class SnapshotRefused(Exception):
    """A snapshot file that is not read (a link out of the session, not a regular file)."""


class SnapshotStore:
    """The session's ``sources/`` snapshots as documents, each built at most once.

    ``limits`` bound each document (``max_bytes`` per file, PDF pages and time);
    ``total_bytes`` bounds what the store reads overall (beyond it a snapshot is not
    read, and says so as its problem). PDF and HTML are converted out of process
    (:mod:`harness.text.isolate`), never past ``deadline``.
    """

    def __init__(
        self,
        session_dir: Path | str,
        *,
        limits: Limits = DEFAULT_LIMITS,
        total_bytes: int = TOTAL_BYTES,
        deadline: Deadline | None = None,
        reader: SessionReader | None = None,
    ) -> None:
        self.dir = Path(session_dir)
        # The caller's reader of the session (the run's, as it loads the session): read
        # through while it is open, so the files it keeps are read once; then a reader of
        # the store's own.
        self._shared = reader
        self.deadline = deadline  # the run's: no conversion waits past it
        self.limits = limits
        self.total_bytes = total_bytes
        self._budget = total_bytes
        self._names: list[str] | None = None
        self._selections: dict[str, Selection] | None = None
        self._docs: dict[str, Document | None] = {}
        self.refusals: dict[str, str] = {}  # "sources/<name>" -> why it was not read
        self._confined: SessionReader | None = None
        self._lock = threading.Lock()  # the audit and the agent's tools may share a store

    # -- listing --------------------------------------------------------------------

    def names(self) -> list[str]:
        """The file names in ``sources/`` (empty when there is no such folder)."""
        if self._names is None:
            try:
                self._names = sorted(self._listing())
            except SnapshotRefused:
                self._names = []
        return self._names

    def selections(self) -> dict[str, Selection]:
        if self._selections is None:
            self._selections = select_all(self.names())
        return self._selections

    def selection(self, source_id: str) -> Selection | None:
        return self.selections().get(source_id)

    # -- documents ------------------------------------------------------------------

    def document(self, source_id: str) -> Document | None:
        """Source ``source_id``'s snapshot as text; None when it has no readable file.

        A file that exists but cannot become text is a Document with a ``problem``; a
        file refused before reading (a link out of the session) is in :attr:`refusals`.
        """
        with self._lock:
            if source_id not in self._docs:
                self._docs[source_id] = self._load(source_id)
            return self._docs[source_id]

    def _load(self, source_id: str) -> Document | None:
        chosen = self.selection(source_id)
        if chosen is None:
            return None
        first: Document | None = None
        for name in chosen.candidates:
            doc = self._document_of(name)
            if doc is None:
                continue
            if doc.problem is None:
                if first is not None:  # the preferred file failed: say which one was used
                    note = f"{first.name} cannot become text ({first.problem}); read {doc.name}"
                    return replace(doc, cuts=(*doc.cuts, note))
                return doc
            first = first or doc
        return first

    def _document_of(self, name: str) -> Document | None:
        rel = f"sources/{name}"
        if self._budget <= 0:
            return Document(
                name=rel,
                kind="text",
                problem=(
                    f"not read: this session's snapshots exceed the {self.total_bytes:,}-byte "
                    "total the audit reads"
                ),
            )
        cap = min(self.limits.max_bytes, self._budget)
        try:
            data, truncated = self._read_bytes(name, cap)
        except SnapshotRefused as exc:
            self.refusals[rel] = str(exc)
            return None
        except OSError as exc:
            return Document(
                name=rel, kind="text", problem=f"cannot be read ({exc.strerror or exc})"
            )
        self._budget -= len(data)
        limits = Limits(cap, self.limits.max_pages, self.limits.max_seconds)
        doc = to_document(
            data, name=rel, limits=limits, truncated=truncated, deadline=self.deadline
        )
        if not data and doc.kind == "pdf":
            return replace(doc, problem="is empty (0 bytes)")
        return doc

    # -- the I/O: through the confined reader, and nowhere else ------------------------

    def _reader(self) -> SessionReader:
        if self._shared is not None and not self._shared.closed:
            return self._shared
        if self._confined is None:
            self._confined = SessionReader(self.dir)
        return self._confined

    def _listing(self) -> list[str]:
        try:
            listing = self._reader().list_dir("sources", cap=SNAPSHOT_FILES)
        except ConfinedError as exc:  # sources/ is a link, or not a folder: nothing is read
            raise SnapshotRefused(exc.reason) from None
        return [entry.name for entry in listing.entries if entry.kind != "dir"]

    def _read_bytes(self, name: str, cap: int) -> tuple[bytes, bool]:
        """Up to ``cap`` bytes of ``sources/<name>`` and whether the file goes on."""
        try:
            blob = self._reader().read_bytes(f"sources/{name}", cap)
        except Refused as exc:  # a link of either kind, a special file: not the session's
            raise SnapshotRefused(
                f"{exc.reason}, so it may lead outside the session; not read"
            ) from None
        except ConfinedError as exc:  # vanished or unreadable since it was listed
            raise OSError(exc.reason) from None
        return blob.data, blob.cut is not None

    def close(self) -> None:
        if self._confined is not None:
            self._confined.close()
            self._confined = None
