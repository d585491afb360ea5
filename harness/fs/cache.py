"""Where fetched source texts are cached: `<session>/.judge/sources/<name>`.

The citation audit writes there (`harness.audit.fetched`); the judge's stored WebFetch
reads there when a source has no snapshot of its own. One naming rule for both.
"""

from __future__ import annotations

import hashlib
import re

_SAFE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,99}")


def cache_name(source_id: str) -> str:
    """The cache file for a source id: `<id>.txt` when the id is a plain name, else hashed."""
    if _SAFE.fullmatch(source_id) and ".." not in source_id:
        return f"{source_id}.txt"
    return f"id-{hashlib.blake2b(source_id.encode(), digest_size=12).hexdigest()}.txt"


# -- proof of origin ------------------------------------------------------------
#
# A cached text is web content the audit fetched; the session could plant one of its own
# (`.judge/sources/s1.txt`) to have a claim "supported" by text nobody fetched. Each entry
# therefore starts with one line, `judge-cache-v1 hmac-sha256:<hex>\n`, this
# installation's MAC (harness.fs.origin) over the source id, its URL and the text's
# sha256; an entry without a valid line is not ours and is treated as absent.

HEADER = b"judge-cache-v1 "
TEXT_CAP = 8 * 1024 * 1024  # bytes of text kept in one entry (and read back)
HEADER_MAX = 128  # bytes of the first line; a reader reads the text's cap plus this


def _cache_body(source_id: str, url: str, text: bytes) -> bytes:
    from harness.fs.origin import canonical

    return canonical(
        {"sourceId": source_id, "url": url, "sha256": hashlib.sha256(text).hexdigest()}
    )


def seal_cached(source_id: str, url: str, text: bytes) -> bytes:
    """The bytes of a cache entry for ``text`` fetched from ``url`` for ``source_id``."""
    from harness.fs.origin import mac

    return HEADER + mac("cache", _cache_body(source_id, url, text)).encode("ascii") + b"\n" + text


def open_cached(blob: bytes, source_id: str, url: str | None) -> bytes | None:
    """The text of a cache entry this installation wrote for ``source_id`` at ``url``;
    None for anything else (no header, another key, another source or URL, a changed
    text)."""
    from harness.fs.origin import verify

    if url is None or not blob.startswith(HEADER):
        return None
    end = blob.find(b"\n", 0, HEADER_MAX)
    if end < 0:
        return None
    tag = blob[len(HEADER) : end].decode("ascii", errors="replace")
    text = blob[end + 1 :]
    return text if verify("cache", _cache_body(source_id, url, text), tag) else None
