"""Text of cited sources the session did not store: `.judge/sources/<id>.txt`.

`FetchedTexts(artifacts, urls, mode, fetch=..., max_fetches=N)` is the audit's
`source_text`: for a source with no snapshot it answers from the cache under the run's
artifact folder (`.judge/sources/`, never among the session's own files), and with mode
`live` fetches a source the cache lacks (at most `max_fetches` a run) and caches its text
for the judge's later runs. `stored` reads the cache only; `off` answers nothing.

The fetcher is handed in (`fetch(url) -> text`): the audit builds it (harness.audit.live)
from `harness.net.fetch.Fetcher`, the same guard as WebFetch (only the session's own
source URLs, address checks on every hop, byte and time caps).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from harness import config
from harness.config import FetchMode
from harness.fs.cache import (
    HEADER_MAX,
    TEXT_CAP,
    cache_name,
    open_cached,
    seal_cached,
)
from harness.fs.confined import ConfinedError, SessionReader
from harness.fs.files import replace_atomically
from harness.fs.names import CACHE_DIR
from harness.fs.origin import OriginKeyError

__all__ = [
    "CACHE_DIR",
    "DEFAULT_MAX_FETCHES",
    "FetchMode",
    "FetchedTexts",
    "cache_name",
    "ignored_note",
]

CACHE_CAP = TEXT_CAP  # bytes of cached text read back
DEFAULT_MAX_FETCHES = int(config.AUDIT_MAX_FETCHES.default)


def ignored_note(refused: Mapping[str, str]) -> str | None:
    """The one note for cached entries the audit did not take as its own (`refused`: a
    planted, edited or linked entry …), said once by `judge run`'s receipt and by `judge
    cite`. No source id is named (they come from the session): the report's
    `sourceTexts.refused` has them, with the reasons."""
    if not refused:
        return None
    n = len(refused)
    return (
        f"ignored {n} cached source text(s) this installation did not write (in .judge/"
        f"{CACHE_DIR}/); treated as absent"
    )


class FetchedTexts:
    """A source's cached or fetched text (None: none), for `audit_session(source_text=)`."""

    def __init__(
        self,
        artifacts: Path,
        urls: Mapping[str, str],
        mode: FetchMode,
        *,
        fetch: Callable[[str], str] | None = None,
        max_fetches: int = DEFAULT_MAX_FETCHES,
    ) -> None:
        if mode == "live" and fetch is None:
            raise ValueError("live fetching needs a fetcher")
        self.folder = artifacts / CACHE_DIR
        self.session = artifacts.parent
        self.rel = f"{artifacts.name}/{CACHE_DIR}"  # the cache, relative to the session
        self.urls = dict(urls)
        self.mode = mode
        self._fetch = fetch
        self.max_fetches = max_fetches
        self.fetched: list[str] = []  # source ids fetched this run
        self.reused: list[str] = []  # source ids read from the cache
        self.failed: dict[str, str] = {}  # source id -> why its fetch failed
        # source id -> why its cached text was refused (a link, a hard link, a FIFO …)
        self.refused: dict[str, str] = {}

    def __call__(self, source_id: str) -> str | None:
        if self.mode == "off":
            return None
        cached = self._cached(source_id)
        if cached is not None:
            self.reused.append(source_id)
            return cached
        if self.mode != "live" or source_id in self.failed:
            return None
        url = self.urls.get(source_id)
        if url is None:
            return None
        if len(self.fetched) >= self.max_fetches:
            self.failed[source_id] = f"the audit's fetch limit ({self.max_fetches}) was reached"
            return None
        assert self._fetch is not None
        self.fetched.append(source_id)
        try:
            text = self._fetch(url)
        except Exception as exc:  # a refused or failed fetch leaves the source unread
            self.failed[source_id] = f"{type(exc).__name__}: {str(exc)[:200]}"
            return None
        if not text.strip():
            self.failed[source_id] = "the page had no text"
            return None
        if not self._safe():
            self.failed[source_id] = f"fetched, but not cached: {self.folder} is behind a link"
            return text
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            # Sealed with this installation's key: only such an entry is read back.
            data = seal_cached(source_id, url, text.encode("utf-8", "replace")[:CACHE_CAP])
            replace_atomically(self.folder / cache_name(source_id), data)
        except OriginKeyError as exc:
            self.failed[source_id] = f"fetched, but not cached: {exc}"
        except OSError as exc:
            self.failed[source_id] = f"fetched, but not cached: {exc.strerror or exc}"
        return text

    def _safe(self) -> bool:
        # A session may plant `.judge` or `.judge/sources` as a link out of it: never
        # followed, neither to read a "cached" text nor to write one.
        return not (self.folder.parent.is_symlink() or self.folder.is_symlink())

    def _cached(self, source_id: str) -> str | None:
        """The cached text, read through the session's confined reader (the one reader of
        the session and its artifacts: no link in any component, no hard link, only a
        regular file, at most CACHE_CAP bytes), and only an entry this installation wrote
        for this source and URL (harness.fs.cache.open_cached): anything else, a planted
        `.judge/sources/s1.txt` included, is treated as absent. A refusal is kept in
        `refused`."""
        rel = f"{self.rel}/{cache_name(source_id)}"
        try:
            with SessionReader(self.session) as reader:
                blob = reader.read_bytes(rel, CACHE_CAP + HEADER_MAX).data
        except ConfinedError as exc:
            if exc.why not in ("missing", "notdir"):
                self.refused[source_id] = exc.message
            return None
        own = open_cached(blob, source_id, self.urls.get(source_id))
        if own is None:
            self.refused[source_id] = f"{rel} was not written by this installation's audit; ignored"
            return None
        text = own.decode("utf-8", errors="replace")
        return text if text.strip() else None

    def summary(self) -> dict[str, object]:
        """What the cache did this run, for the report: fetched, reused, failed, refused."""
        return {
            "mode": self.mode,
            "fetched": list(self.fetched),
            "reused": list(self.reused),
            "failed": dict(self.failed),
            "refused": dict(self.refused),
        }
