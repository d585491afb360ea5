"""The citation audit's live fetch (`--audit-fetch live`): WebFetch's guard over the
session's own source URLs (harness.net.fetch.Fetcher), built by the audit itself.

Each fetch waits at most for what is left of the deadline in force when the fetcher is
made (the audit's share of the run's time, harness.clock); none starts after it.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from harness import clock
from harness.errors import ToolError
from harness.net.fetch import Fetcher
from harness.net.urlguard import AllowList


def live_fetch(urls: dict[str, str], max_uses: int) -> Callable[[str], str]:
    """A fetch of a source's text (`fetch(url) -> text`) over `urls`, at most `max_uses`
    fetches, each bounded by the deadline in force now."""
    fetcher = Fetcher(AllowList(urls.values()), max_uses=max_uses)
    now = clock.current()
    at, what, longest = now.at, now.what, fetcher.timeout

    def text(url: str) -> str:
        if at is not None:
            left = at - time.monotonic()
            if left <= 0:
                raise ToolError(f"not fetched: {what} was used up")
            fetcher.timeout = min(longest, left)
        return fetcher.text(url)

    return text


__all__ = ["live_fetch"]
