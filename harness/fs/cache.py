"""Where fetched source texts are cached: `<session>/.judge/sources/<name>`.

The citation audit writes there (`harness.audit.fetched`); the judge's stored WebFetch
reads there when a source has no snapshot of its own. One naming rule for both.
"""

from __future__ import annotations

import hashlib
import re

CACHE_DIR = "sources"  # inside the run's artifact folder (.judge/)

_SAFE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,99}")


def cache_name(source_id: str) -> str:
    """The cache file for a source id: `<id>.txt` when the id is a plain name, else hashed."""
    if _SAFE.fullmatch(source_id) and ".." not in source_id:
        return f"{source_id}.txt"
    return f"id-{hashlib.blake2b(source_id.encode(), digest_size=12).hexdigest()}.txt"
