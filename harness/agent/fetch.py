"""WebFetch's backends: the session's own sources, live, from stored snapshots, or not at all.

``--fetch live`` is :class:`harness.net.fetch.Fetcher` (the URL-guarded live fetch, shared
with the citation audit); :class:`StoredFetcher` (``--fetch stored``) answers from
``sources/<id>.*`` snapshots in the session, and :class:`DisabledFetcher` (``--fetch off``)
refuses every call. All three satisfy :class:`WebFetcher`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from harness.errors import ToolError
from harness.fs.cache import HEADER_MAX as CACHE_HEADER_MAX
from harness.fs.cache import TEXT_CAP as CACHE_TEXT_CAP
from harness.fs.cache import cache_name, open_cached
from harness.fs.confined import ConfinedError, SessionReader
from harness.fs.names import ARTIFACT_DIR, CACHE_DIR
from harness.net.fetch import Fetcher, format_result, other_cuts, uses_exhausted
from harness.net.urlguard import AllowList, normalize_url
from harness.session.loader import Session
from harness.session.snapshots import SnapshotStore
from harness.text.document import Document, Limits, to_document

__all__ = [
    "DisabledFetcher",
    "Fetcher",
    "StoredFetcher",
    "WebFetcher",
    "make_fetcher",
]


class WebFetcher(Protocol):
    """What the agent loop needs from a WebFetch backend."""

    uses: int

    def fetch(self, url: str, prompt: str | None = None) -> str: ...


_SOURCE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-]{0,200}")


class StoredFetcher:
    """WebFetch from ``<session>/sources/<id>.*`` snapshots (``--fetch stored``).

    ``sources`` maps source ids to URLs (from sources.json). A URL is matched to an id
    by canonical form; which snapshot file counts and how it becomes text is
    :mod:`harness.session.snapshots`' rule (the one the loader and the audit use), and the
    model is shown the document's ``marked`` rendering. ``store`` shares the session's
    documents; without one, a store is made with ``max_bytes`` per file.
    """

    def __init__(
        self,
        session_dir: Path | str,
        sources: Mapping[str, str],
        *,
        max_uses: int = 5,
        max_bytes: int = 2_000_000,
        result_chars: int = 100_000,
        store: SnapshotStore | None = None,
    ) -> None:
        self.session_dir = Path(session_dir)
        self.max_uses = max_uses
        self.max_bytes = max_bytes
        self.result_chars = result_chars
        self.uses = 0
        self._store = store or SnapshotStore(self.session_dir, limits=Limits(max_bytes=max_bytes))
        self._ids: dict[str, str] = {}
        self._urls = dict(sources)  # as sources.json gives them: a cache entry names one
        for source_id, url in sources.items():
            try:
                self._ids.setdefault(normalize_url(url), source_id)
            except ToolError:
                continue

    def fetch(self, url: str, prompt: str | None = None) -> str:
        if self.uses >= self.max_uses:
            raise uses_exhausted(self.max_uses)
        canonical = normalize_url(url)
        source_id = self._ids.get(canonical)
        if source_id is None:
            raise ToolError(
                f"refused: the URL is not one of this session's {len(self._ids)} source "
                "URLs; WebFetch only fetches URLs listed in sources.json",
                names=[("url", canonical)],
                url=canonical,
            )
        self.uses += 1
        document = self._document(source_id, canonical)
        if document.problem is not None:
            raise ToolError(
                "the URL's stored snapshot cannot become text (the problem is shown); "
                "WebFetch (--fetch stored) cannot show it",
                names=[
                    ("url", canonical),
                    ("snapshot", document.name),
                    ("problem", document.problem),
                ],
                url=canonical,
            )
        where = "a stored snapshot"
        if document.name.startswith(f"{ARTIFACT_DIR}/"):
            where = "text the citation audit fetched"
        summary = f"{where} of the source, {document.size:,} bytes"
        if any(c.startswith("bytes cap") for c in document.cuts):
            summary += f" (cut at the {self._store.limits.max_bytes:,}-byte limit)"
        summary += other_cuts(document)
        names = [("url", canonical), ("source", source_id), ("snapshot", document.name)]
        return format_result(names, summary, document.marked, self.result_chars, prompt)

    def _document(self, source_id: str, url: str) -> Document:
        missing = ToolError(
            "WebFetch answers from stored snapshots in this run (--fetch stored) and there is "
            "no sources/<source>.* snapshot for the URL; Read sources/ to see what is stored",
            names=[("url", url), ("source", source_id)],
            url=url,
            source_id=source_id,
        )
        if not _SOURCE_ID.fullmatch(source_id) or ".." in source_id:
            raise missing
        document = self._store.document(source_id)
        if document is not None:
            return document
        # No snapshot of its own (or only refused files): the text the citation audit
        # fetched and cached (--fetch live), read through the same confined reader, and
        # only an entry this installation's audit wrote for this source and URL (a
        # planted `.judge/sources/<id>.txt` is not "text the citation audit fetched").
        rel = f"{ARTIFACT_DIR}/{CACHE_DIR}/{cache_name(source_id)}"
        try:
            with SessionReader(self.session_dir) as reader:
                blob = reader.read_bytes(rel, CACHE_TEXT_CAP + CACHE_HEADER_MAX)
        except ConfinedError:
            raise missing from None
        text = open_cached(blob.data, source_id, self._urls.get(source_id))
        if text is None:
            raise missing
        cap = self._store.limits.max_bytes
        return to_document(
            text[:cap], name=rel, limits=self._store.limits, truncated=len(text) > cap
        )


class DisabledFetcher:
    """WebFetch when the run says ``--fetch off``: every call is refused."""

    def __init__(self) -> None:
        self.uses = 0

    def fetch(self, url: str, prompt: str | None = None) -> str:
        raise ToolError(
            "WebFetch is disabled for this run (--fetch off); judge from the session's files "
            "(stored source text is under sources/, if any)",
            url=str(url)[:200],
        )


def make_fetcher(mode: str, session: Session, max_uses: int) -> WebFetcher:
    """The WebFetch backend for `--fetch live|stored|off`."""
    if mode == "off":
        return DisabledFetcher()
    urls = session.source_urls()
    if mode == "stored":
        return StoredFetcher(session.dir, urls, max_uses=max_uses, store=session.texts)
    return Fetcher(AllowList(urls.values()), max_uses=max_uses)
