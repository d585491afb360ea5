"""The guarded live fetch of a session's own sources: WebFetch's `--fetch live` and the
citation audit's `--audit-fetch live` both fetch through :class:`Fetcher`.

:class:`Fetcher` is the one piece of the harness that opens network connections on the
model's behalf, so it is built to be hard to point anywhere else:

* the first URL must be one of the session's sources (:class:`AllowList`);
* every hop's host is resolved once, every address checked (:mod:`urlguard`), and the
  connection is made *to that checked address* (the URL carries the IP, the ``Host``
  header and TLS SNI carry the name, and the certificate is verified for the name), so
  a second DNS answer (rebinding) can never be the one connected to;
* redirects are followed by hand, at most ``max_redirects``. A redirect target need not
  be a listed source (sites move pages and add tracking hops) but gets every other
  check again: http(s) only, no credentials, public addresses only;
* one overall deadline covers DNS, connecting, every hop and reading the body (each
  socket operation may wait for the time left when its hop began and the deadline is
  checked between reads, so a call ends within twice ``timeout`` at worst); the body
  is read in a stream up to ``max_bytes`` (after decompression); only text-like content
  types are accepted (text, HTML, JSON, Markdown, PDF); every body becomes text through
  :mod:`harness.text` (HTML without hidden parts, a PDF's text layer within page and
  time caps), the same pipeline that reads stored snapshots;
* the result is capped at ``result_chars``, wrapped as untrusted content, and each
  instance allows ``max_uses`` network fetches.

The stored and disabled WebFetch backends are harness.agent.fetch's.
"""

from __future__ import annotations

import socket
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from ipaddress import IPv6Address
from urllib.parse import urljoin

import httpx2

from harness.errors import ToolError
from harness.net.urlguard import (
    AllowList,
    IPAddress,
    ParsedURL,
    Resolver,
    check_scheme_and_host,
    resolve_and_check,
)
from harness.text.document import Document, Limits, parse_content_type, to_document
from harness.text.untrusted import wrap_untrusted

__all__ = [
    "ALLOWED_CONTENT_TYPES",
    "Fetcher",
    "format_result",
    "other_cuts",
    "uses_exhausted",
]

ALLOWED_CONTENT_TYPES = (
    "text/html",
    "text/plain",
    "text/markdown",
    "application/json",
    "application/xhtml+xml",
    "application/pdf",
)
_REDIRECTS = (301, 302, 303, 307, 308)
_USER_AGENT = "judge-harness/0.1 (research-session audit; fetches cited sources only)"


def uses_exhausted(max_uses: int) -> ToolError:
    return ToolError(
        f"refused: WebFetch may be used at most {max_uses} times in a run and that limit is "
        "reached; judge from what you have fetched and the session's stored sources",
        max_uses=max_uses,
    )


def format_result(
    names: list[tuple[str, str]], summary: str, text: str, result_chars: int, prompt: str | None
) -> str:
    """The page: our summary outside, its URLs and names (the session's or the web's
    words) and its text inside the untrusted block."""
    total = len(text)
    cut = text[:result_chars]
    parts = [f"WebFetch: {summary}."]
    if prompt:
        parts.append("(The prompt is not applied by this harness: below is the page text itself.)")
    parts.append(wrap_untrusted("web_page", cut if cut.strip() else "(no text content)", names))
    if total > result_chars:
        parts.append(
            f"[... truncated: the page text is {total:,} characters and only the first "
            f"{result_chars:,} are shown]"
        )
    return "\n".join(parts)


# --- bodies ---------------------------------------------------------------------


def _page_document(raw: bytes, url: str, content_type: str | None, cap: int, cut: bool) -> Document:
    """A fetched or stored body as a document, by the one text pipeline (HTML, PDF, text)."""
    return to_document(
        raw, name=url, content_type=content_type, limits=Limits(max_bytes=cap), truncated=cut
    )


def other_cuts(document: Document) -> str:
    """The cuts other than the byte cap (which the summary states itself)."""
    cuts = [c for c in document.cuts if not c.startswith("bytes cap")]
    return f" ({'; '.join(cuts)})" if cuts else ""


class _Capped:
    """Collects decoded body bytes up to a cap, decompressing in bounded steps."""

    def __init__(self, encoding: str, cap: int) -> None:
        self.cap = cap
        self.parts: list[bytes] = []
        self.size = 0
        self.truncated = False
        # gzip framing, or zlib framing for "deflate" (32 + MAX_WBITS detects either).
        wbits = 16 + zlib.MAX_WBITS if "gzip" in encoding else 32 + zlib.MAX_WBITS
        self._inflate = zlib.decompressobj(wbits) if encoding not in ("", "identity") else None

    def feed(self, data: bytes) -> bool:
        """Add raw bytes; False once the cap is reached (stop reading)."""
        if self._inflate is None:
            self._keep(data)
            return not self.truncated
        pending = data
        while pending and not self.truncated:
            # max_length bounds each step, so a decompression bomb never expands whole.
            out = self._inflate.decompress(pending, self.cap - self.size + 1)
            self._keep(out)
            pending = self._inflate.unconsumed_tail
        return not self.truncated

    def _keep(self, data: bytes) -> None:
        room = self.cap - self.size
        if len(data) > room:
            data, self.truncated = data[:room], True
        self.parts.append(data)
        self.size += len(data)


# --- the live fetcher -------------------------------------------------------------


@dataclass
class _Page:
    url: str
    status: int
    mime: str
    text: str
    size: int
    truncated: bool
    redirects: int
    cuts: str = ""


class Fetcher:
    """Live WebFetch of the session's sources (see the module docstring for the rules).

    ``allow_address`` exists only so tests can let a named loopback test server
    through; it exempts the *resolved* addresses it returns True for, never IP literals
    in URLs. ``ssl_context`` (tests) replaces the system trust store; certificates are
    always verified for the host name.
    """

    def __init__(
        self,
        allow: AllowList,
        *,
        resolver: Resolver = socket.getaddrinfo,
        timeout: float = 15.0,
        max_bytes: int = 2_000_000,
        max_redirects: int = 5,
        max_uses: int = 5,
        result_chars: int = 100_000,
        allow_address: Callable[[IPAddress], bool] | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.allow = allow
        self.resolver = resolver
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects
        self.max_uses = max_uses
        self.result_chars = result_chars
        self.allow_address = allow_address
        self.ssl_context = ssl_context
        self.uses = 0

    def fetch(self, url: str, prompt: str | None = None) -> str:
        """Fetch a listed source; returns its text wrapped as untrusted content.

        A use is counted once the URL passes the allow list, whatever happens next.
        """
        if self.uses >= self.max_uses:
            raise uses_exhausted(self.max_uses)
        start = self.allow.check(url)
        self.uses += 1
        page = self._within_deadline(start, time.monotonic() + self.timeout)
        summary = f"HTTP {page.status}, {page.mime}, {page.size:,} bytes"
        if page.truncated:
            summary += f" (cut at the {self.max_bytes:,}-byte limit)"
        summary += page.cuts
        names = [("url", start)]
        if page.redirects:
            plural = "s" if page.redirects > 1 else ""
            summary += f", reached after {page.redirects} redirect{plural} (at the reached URL)"
            names.append(("reached", page.url))
        return format_result(names, summary, page.text, self.result_chars, prompt)

    def _within_deadline(self, start: str, deadline: float) -> _Page:
        """`_follow` on a daemon thread, waited for until the deadline and no longer.

        The socket timeouts bound each read, not the total: a server that drips its
        headers one byte at a time kept a 3 s fetch going for 54 s inside the HTTP stack,
        where no check between reads runs. The caller gets its answer at the deadline;
        the worker ends at its next read."""
        outcome: list[_Page] = []
        failed: list[BaseException] = []

        def run() -> None:
            try:
                outcome.append(self._follow(start, deadline))
            except BaseException as exc:  # handed to the caller's thread
                failed.append(exc)

        worker = threading.Thread(target=run, name="webfetch", daemon=True)
        worker.start()
        # A little grace so that a worker reaching its own deadline check reports first.
        worker.join(max(0.0, deadline - time.monotonic()) + 0.1)
        if failed:
            raise failed[0]
        if not outcome:
            raise self._timed_out(start)
        return outcome[0]

    def text(self, url: str) -> str:
        """A listed source's text, not wrapped (the citation audit caches it). Same guard,
        caps, time limit and use count as `fetch`; raises `ToolError` the same way."""
        if self.uses >= self.max_uses:
            raise uses_exhausted(self.max_uses)
        start = self.allow.check(url)
        self.uses += 1
        return self._within_deadline(start, time.monotonic() + self.timeout).text

    def _timed_out(self, url: str) -> ToolError:
        return ToolError(
            f"WebFetch timed out after {self.timeout:g} s fetching the URL",
            names=[("url", url)],
            url=url,
            timeout=self.timeout,
        )

    def _follow(self, start: str, deadline: float) -> _Page:
        url = start
        if self.ssl_context is None:
            # Built once: loading the system trust store is the slow part of a fetch.
            self.ssl_context = httpx2.create_ssl_context(verify=True, trust_env=False)
        with httpx2.Client(
            verify=self.ssl_context,
            trust_env=False,  # no proxies or CA overrides from the environment
            follow_redirects=False,
            limits=httpx2.Limits(max_keepalive_connections=0),
        ) as client:
            for hop in range(self.max_redirects + 1):
                parsed = check_scheme_and_host(url)
                addresses = self._resolve(parsed, deadline)
                with self._request(client, parsed, addresses, deadline) as response:
                    if response.status_code in _REDIRECTS:
                        location = response.headers.get("location")
                        if not location:
                            raise ToolError(
                                f"the URL answered HTTP {response.status_code} without "
                                "a Location to follow",
                                names=[("url", parsed.url)],
                                url=parsed.url,
                            )
                        if hop == self.max_redirects:
                            raise ToolError(
                                f"refused: the URL redirects more than {self.max_redirects} "
                                "times (the last redirect's target is shown)",
                                names=[("url", start), ("redirect", location[:200])],
                                url=start,
                            )
                        url = urljoin(parsed.url, location.strip())
                        continue
                    return self._page(response, parsed, hop, deadline)
        raise AssertionError("unreachable")  # pragma: no cover

    def _resolve(self, parsed: ParsedURL, deadline: float) -> list[IPAddress]:
        if parsed.ip is not None:
            return [parsed.ip]
        found: list[list[IPAddress]] = []
        failed: list[BaseException] = []

        def run() -> None:
            try:
                found.append(
                    resolve_and_check(
                        parsed.host, parsed.port, self.resolver, allow_address=self.allow_address
                    )
                )
            except BaseException as exc:
                failed.append(exc)

        # getaddrinfo has no timeout of its own; a daemon thread lets the deadline win.
        worker = threading.Thread(target=run, name="webfetch-resolve", daemon=True)
        worker.start()
        worker.join(max(0.0, deadline - time.monotonic()))
        if failed:
            raise failed[0]
        if not found:
            raise self._timed_out(parsed.url)
        return found[0]

    @contextmanager
    def _request(
        self,
        client: httpx2.Client,
        parsed: ParsedURL,
        addresses: list[IPAddress],
        deadline: float,
    ) -> Iterator[httpx2.Response]:
        headers = {
            "Host": parsed.netloc,
            "User-Agent": _USER_AGENT,
            "Accept": ", ".join(ALLOWED_CONTENT_TYPES) + ";q=0.9, */*;q=0.1",
            "Accept-Encoding": "gzip, deflate, identity",
        }
        extensions = {"sni_hostname": parsed.host} if parsed.ip is None else {}
        last: Exception | None = None
        for addr in addresses:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._timed_out(parsed.url)
            literal = f"[{addr}]" if isinstance(addr, IPv6Address) else str(addr)
            pinned = f"{parsed.scheme}://{literal}:{parsed.port}{parsed.target}"
            request = client.build_request(
                "GET",
                pinned,
                headers=headers,
                extensions=extensions,
                timeout=httpx2.Timeout(remaining),
            )
            try:
                response = client.send(request, stream=True)
            except (httpx2.ConnectError, httpx2.ConnectTimeout) as exc:
                last = exc  # try the next checked address
                continue
            except httpx2.TimeoutException:
                raise self._timed_out(parsed.url) from None
            except httpx2.HTTPError as exc:
                raise ToolError(
                    f"WebFetch failed for the URL ({type(exc).__name__})",
                    names=[("url", parsed.url), ("error", str(exc))],
                    url=parsed.url,
                ) from None
            try:
                yield response
            finally:
                response.close()
            return
        if time.monotonic() >= deadline:
            raise self._timed_out(parsed.url)
        reason = str(last)
        if "CERTIFICATE_VERIFY_FAILED" in reason or "certificate" in reason.lower():
            raise ToolError(
                "WebFetch refused the URL: its TLS certificate could not be verified for its host",
                names=[("url", parsed.url), ("error", reason)],
                url=parsed.url,
            )
        raise ToolError(
            f"WebFetch could not connect to the URL's host ({len(addresses)} address"
            f"{'es' if len(addresses) != 1 else ''} tried)",
            names=[("url", parsed.url), ("error", reason)],
            url=parsed.url,
        )

    def _page(
        self, response: httpx2.Response, parsed: ParsedURL, hops: int, deadline: float
    ) -> _Page:
        status = response.status_code
        if not 200 <= status < 300:
            raise ToolError(
                f"WebFetch got HTTP {status} from the URL",
                names=[("url", parsed.url), ("reason", response.reason_phrase)],
                url=parsed.url,
                status=status,
            )
        content_type = response.headers.get("content-type")
        mime, _ = parse_content_type(content_type)
        if mime not in ALLOWED_CONTENT_TYPES:
            raise ToolError(
                "refused: the URL's content type (shown) is not one WebFetch reads: "
                f"{', '.join(ALLOWED_CONTENT_TYPES)}",
                names=[("url", parsed.url), ("content_type", mime or "(none stated)")],
                url=parsed.url,
                content_type=mime,
            )
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("identity", "gzip", "x-gzip", "deflate", ""):
            raise ToolError(
                "refused: the URL is sent with a content encoding (shown) that WebFetch "
                "cannot decode",
                names=[("url", parsed.url), ("content_encoding", encoding)],
                url=parsed.url,
            )
        body = _Capped(encoding, self.max_bytes)
        try:
            for chunk in response.iter_raw():
                if time.monotonic() > deadline:
                    raise self._timed_out(parsed.url)
                if not body.feed(chunk):
                    break
        except httpx2.TimeoutException:
            raise self._timed_out(parsed.url) from None
        except zlib.error as exc:
            raise ToolError(
                "WebFetch could not decompress the URL's body",
                names=[("url", parsed.url), ("error", str(exc))],
            ) from None
        except httpx2.HTTPError as exc:
            raise ToolError(
                f"WebFetch failed reading the URL ({type(exc).__name__})",
                names=[("url", parsed.url), ("error", str(exc))],
            ) from None
        raw = b"".join(body.parts)
        document = _page_document(raw, parsed.url, content_type, self.max_bytes, body.truncated)
        if document.problem is not None:
            raise ToolError(
                f"WebFetch read the URL ({mime}, {body.size:,} bytes) but it cannot "
                "become text (the problem is shown)",
                names=[("url", parsed.url), ("problem", document.problem)],
                url=parsed.url,
            )
        return _Page(
            parsed.url,
            status,
            mime,
            document.marked,
            body.size,
            body.truncated,
            hops,
            other_cuts(document),
        )


# --- stored snapshots and "off" --------------------------------------------------
