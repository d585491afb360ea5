"""WebFetch: the session's own sources, live, from stored snapshots, or not at all.

:class:`Fetcher` (``--fetch live``) is the one piece of the harness that opens network
connections on the model's behalf, so it is built to be hard to point anywhere else:

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
  types are accepted; HTML is reduced to readable text;
* the result is capped at ``result_chars``, wrapped as untrusted content, and each
  instance allows ``max_uses`` network fetches.

:class:`StoredFetcher` (``--fetch stored``) answers from ``sources/<id>.*`` snapshots in
the session, and :class:`DisabledFetcher` (``--fetch off``) refuses every call. All
three satisfy :class:`WebFetcher`.
"""

from __future__ import annotations

import codecs
import re
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from html.parser import HTMLParser
from ipaddress import IPv6Address
from pathlib import Path
from typing import Protocol
from urllib.parse import urljoin

import httpx2

from harness.errors import ToolError
from harness.fs.cache import CACHE_DIR, cache_name
from harness.fs.scope import open_in_session, resolve_in_session
from harness.net.urlguard import (
    AllowList,
    IPAddress,
    ParsedURL,
    Resolver,
    check_scheme_and_host,
    normalize_url,
    resolve_and_check,
)
from harness.session.loader import ARTIFACT_DIR
from harness.text.untrusted import wrap_untrusted

__all__ = [
    "ALLOWED_CONTENT_TYPES",
    "DisabledFetcher",
    "Fetcher",
    "StoredFetcher",
    "WebFetcher",
    "html_to_text",
]

ALLOWED_CONTENT_TYPES = ("text/html", "text/plain", "application/json", "application/xhtml+xml")
_HTML_TYPES = ("text/html", "application/xhtml+xml")
_REDIRECTS = (301, 302, 303, 307, 308)
_USER_AGENT = "judge-harness/0.1 (research-session audit; fetches cited sources only)"


class WebFetcher(Protocol):
    """What the agent loop needs from a WebFetch backend."""

    uses: int

    def fetch(self, url: str, prompt: str | None = None) -> str: ...


def _uses_exhausted(max_uses: int) -> ToolError:
    return ToolError(
        f"refused: WebFetch may be used at most {max_uses} times in a run and that limit is "
        "reached; judge from what you have fetched and the session's stored sources",
        max_uses=max_uses,
    )


def _format_result(url: str, summary: str, text: str, result_chars: int, prompt: str | None) -> str:
    total = len(text)
    cut = text[:result_chars]
    parts = [f"WebFetch {url}: {summary}."]
    if prompt:
        parts.append("(The prompt is not applied by this harness: below is the page text itself.)")
    parts.append(wrap_untrusted("web_page", url, cut if cut.strip() else "(no text content)"))
    if total > result_chars:
        parts.append(
            f"[... truncated: the page text is {total:,} characters and only the first "
            f"{result_chars:,} are shown]"
        )
    return "\n".join(parts)


# --- HTML to text ---------------------------------------------------------------


def _tags(names: str) -> frozenset[str]:
    return frozenset(names.split())


_VOID = _tags("area base br col embed hr img input link meta param source track wbr")
_ALWAYS_SKIP = _tags(
    "script style noscript template svg math canvas iframe object embed select button"
)
_NOISE = _tags("nav footer aside dialog")
_BLOCK = _tags(
    "address article blockquote dd details div dl dt fieldset figcaption figure form "
    "header hr main ol p pre section summary table tbody thead tfoot tr ul"
)
_HEADINGS = {f"h{n}": n for n in range(1, 7)}


class _TextExtractor(HTMLParser):
    def __init__(self, drop_noise: bool) -> None:
        super().__init__(convert_charrefs=True)
        self._drop_noise = drop_noise
        self._skip_tag: str | None = None
        self._skip_depth = 0
        self._pre = 0
        self._cells = 0
        self._in_title = False
        self.title: list[str] = []
        self.out: list[str] = []

    def _skips(self, tag: str, attrs: list[tuple[str, str | None]]) -> bool:
        if tag in _ALWAYS_SKIP:
            return True
        if not self._drop_noise:
            return False
        if tag in _NOISE:
            return True
        values = {k: (v or "").lower() for k, v in attrs}
        style = values.get("style", "").replace(" ", "")
        return (
            "hidden" in values
            or values.get("aria-hidden") == "true"
            or values.get("role") == "navigation"
            or "display:none" in style
        )

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._skip_tag is not None:
            if tag == self._skip_tag:
                self._skip_depth += 1
            return
        if tag == "title":
            self._in_title = True
            return
        if tag not in _VOID and self._skips(tag, attrs):
            self._skip_tag, self._skip_depth = tag, 1
            return
        if tag in _HEADINGS:
            self.out.append("\n\n" + "#" * _HEADINGS[tag] + " ")
        elif tag == "li":
            self.out.append("\n- ")
        elif tag == "br":
            self.out.append("\n")
        elif tag in ("td", "th"):
            self.out.append(" | " if self._cells else "")
            self._cells += 1
        elif tag in _BLOCK:
            self.out.append("\n\n")
        if tag == "pre":
            self._pre += 1
        elif tag == "tr":
            self._cells = 0

    def handle_endtag(self, tag: str) -> None:
        if self._skip_tag is not None:
            if tag == self._skip_tag:
                self._skip_depth -= 1
                if self._skip_depth == 0:
                    self._skip_tag = None
            return
        if tag == "title":
            self._in_title = False
        elif tag in _HEADINGS or tag in _BLOCK:
            self.out.append("\n\n")
        if tag == "pre" and self._pre:
            self._pre -= 1

    def handle_data(self, data: str) -> None:
        if self._skip_tag is not None:
            return
        if self._in_title:
            self.title.append(data)
        elif self._pre:
            self.out.append(data.replace("\n", "\x00"))  # protected from whitespace folding
        else:
            self.out.append(re.sub(r"\s+", " ", data))


def _tidy(text: str) -> str:
    lines = [line.strip(" ") for line in text.split("\n")]
    text = "\n".join(lines).replace("\x00", "\n")
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _extract(markup: str, drop_noise: bool) -> tuple[str, str]:
    parser = _TextExtractor(drop_noise)
    parser.feed(markup)
    parser.close()
    title = re.sub(r"\s+", " ", "".join(parser.title)).strip()
    return title, _tidy("".join(parser.out))


def html_to_text(markup: str) -> str:
    """Readable text of an HTML page: title, headings as ``#``, paragraphs, list items.

    Scripts, styles, hidden elements and navigation/footer/aside chrome are dropped.
    If dropping chrome leaves almost nothing (an unclosed ``<nav>`` can swallow a
    page), the text is taken again with only scripts and styles dropped.
    """
    title, body = _extract(markup, drop_noise=True)
    if len(body) < 500:
        _, loose = _extract(markup, drop_noise=False)
        if len(loose) > 4 * max(len(body), 1):
            body = loose
    return f"Title: {title}\n\n{body}" if title else body


# --- bodies ---------------------------------------------------------------------


def _content_type(header: str | None) -> tuple[str, str | None]:
    if not header:
        return "", None
    mime, *params = header.split(";")
    charset = None
    for param in params:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            charset = value.strip().strip("\"'") or None
    return mime.strip().lower(), charset


_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_\-:.]+)""", re.I)


def _body_text(body: bytes, charset: str | None, html: bool) -> str:
    """A fetched or stored page as the text the model reads (HTML reduced to its text)."""
    text = _decode_body(body, charset, html)
    return html_to_text(text) if html else text


def _decode_body(body: bytes, charset: str | None, html: bool) -> str:
    for bom, name in ((codecs.BOM_UTF8, "utf-8"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16")):
        if body.startswith(bom):
            return body.decode(name, errors="replace").lstrip("\ufeff")
    if charset is None and html:
        match = _META_CHARSET.search(body[:4096])
        charset = match.group(1).decode("ascii") if match else None
    try:
        codec = codecs.lookup(charset or "utf-8").name
    except LookupError:
        codec = "utf-8"
    return body.decode(codec, errors="replace")


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
            raise _uses_exhausted(self.max_uses)
        start = self.allow.check(url)
        self.uses += 1
        page = self._follow(start, time.monotonic() + self.timeout)
        summary = f"HTTP {page.status}, {page.mime}, {page.size:,} bytes"
        if page.truncated:
            summary += f" (cut at the {self.max_bytes:,}-byte limit)"
        if page.redirects:
            plural = "s" if page.redirects > 1 else ""
            summary += f", reached at {page.url} after {page.redirects} redirect{plural}"
        return _format_result(start, summary, page.text, self.result_chars, prompt)

    def text(self, url: str) -> str:
        """A listed source's text, not wrapped (the citation audit caches it). Same guard,
        caps and use count as `fetch`; raises `ToolError` the same way."""
        if self.uses >= self.max_uses:
            raise _uses_exhausted(self.max_uses)
        start = self.allow.check(url)
        self.uses += 1
        return self._follow(start, time.monotonic() + self.timeout).text

    def _timed_out(self, url: str) -> ToolError:
        return ToolError(
            f"WebFetch timed out after {self.timeout:g} s fetching {url}",
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
                                f"{parsed.url} answered HTTP {response.status_code} without "
                                "a Location to follow",
                                url=parsed.url,
                            )
                        if hop == self.max_redirects:
                            raise ToolError(
                                f"refused: {start} redirects more than {self.max_redirects} "
                                f"times (last to {location[:200]})",
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
                    f"WebFetch failed for {parsed.url}: {type(exc).__name__}: {exc}",
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
                f"WebFetch refused {parsed.url}: its TLS certificate could not be verified for "
                f"{parsed.host} ({reason})",
                url=parsed.url,
            )
        raise ToolError(
            f"WebFetch could not connect to {parsed.host} ({len(addresses)} address"
            f"{'es' if len(addresses) != 1 else ''} tried): {reason}",
            url=parsed.url,
        )

    def _page(
        self, response: httpx2.Response, parsed: ParsedURL, hops: int, deadline: float
    ) -> _Page:
        status = response.status_code
        if not 200 <= status < 300:
            raise ToolError(
                f"WebFetch got HTTP {status} {response.reason_phrase} from {parsed.url}",
                url=parsed.url,
                status=status,
            )
        mime, charset = _content_type(response.headers.get("content-type"))
        if mime not in ALLOWED_CONTENT_TYPES:
            raise ToolError(
                f"refused: {parsed.url} is {mime or 'of no stated content type'}; WebFetch "
                f"only reads {', '.join(ALLOWED_CONTENT_TYPES)}",
                url=parsed.url,
                content_type=mime,
            )
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("identity", "gzip", "x-gzip", "deflate", ""):
            raise ToolError(
                f"refused: {parsed.url} is sent with content encoding {encoding!r}, which "
                "WebFetch cannot decode",
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
            raise ToolError(f"WebFetch could not decompress {parsed.url}: {exc}") from None
        except httpx2.HTTPError as exc:
            raise ToolError(
                f"WebFetch failed reading {parsed.url}: {type(exc).__name__}: {exc}"
            ) from None
        raw = b"".join(body.parts)
        text = _body_text(raw, charset, mime in _HTML_TYPES)
        return _Page(parsed.url, status, mime, text, body.size, body.truncated, hops)


# --- stored snapshots and "off" --------------------------------------------------

_SNAPSHOT_PREFERENCE = {".txt": 0, ".md": 1, ".json": 2, ".html": 3, ".htm": 3, ".xhtml": 3}
_SOURCE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-]{0,200}")


class StoredFetcher:
    """WebFetch from ``<session>/sources/<id>.*`` snapshots (``--fetch stored``).

    ``sources`` maps source ids to URLs (from sources.json). A URL is matched to an id
    by canonical form, then the snapshot is read like Read reads files: confined to the
    session, bounded in bytes, HTML reduced to text. Text snapshots are preferred over
    HTML (``.txt``, ``.md``, ``.json``, then ``.html``).
    """

    def __init__(
        self,
        session_dir: Path | str,
        sources: Mapping[str, str],
        *,
        max_uses: int = 5,
        max_bytes: int = 2_000_000,
        result_chars: int = 100_000,
    ) -> None:
        self.session_dir = Path(session_dir)
        self.max_uses = max_uses
        self.max_bytes = max_bytes
        self.result_chars = result_chars
        self.uses = 0
        self._ids: dict[str, str] = {}
        for source_id, url in sources.items():
            try:
                self._ids.setdefault(normalize_url(url), source_id)
            except ToolError:
                continue

    def fetch(self, url: str, prompt: str | None = None) -> str:
        if self.uses >= self.max_uses:
            raise _uses_exhausted(self.max_uses)
        canonical = normalize_url(url)
        source_id = self._ids.get(canonical)
        if source_id is None:
            raise ToolError(
                f"refused: {canonical} is not one of this session's {len(self._ids)} source "
                "URLs; WebFetch only fetches URLs listed in sources.json",
                url=canonical,
            )
        self.uses += 1
        snapshot = self._snapshot(source_id, canonical)
        raw, truncated = self._read(snapshot)
        if b"\x00" in raw[:8192]:
            raise ToolError(
                f"the stored snapshot sources/{snapshot.name} of {canonical} is binary, not "
                "text; WebFetch (--fetch stored) cannot show it",
                url=canonical,
            )
        text = _body_text(raw, None, snapshot.suffix.lower() in (".html", ".htm", ".xhtml"))
        fetched = snapshot.parent.parent.name == ARTIFACT_DIR
        what = (
            f"text the citation audit fetched, {ARTIFACT_DIR}/{CACHE_DIR}/{snapshot.name}"
            if fetched
            else f"stored snapshot sources/{snapshot.name}"
        )
        summary = f"{what} of source {source_id}, {len(raw):,} bytes"
        if truncated:
            summary += f" (cut at the {self.max_bytes:,}-byte limit)"
        return _format_result(canonical, summary, text, self.result_chars, prompt)

    def _snapshot(self, source_id: str, url: str) -> Path:
        missing = ToolError(
            f"WebFetch answers from stored snapshots in this run (--fetch stored) and there is "
            f"no sources/{source_id}.* snapshot for {url}; Read sources/ to see what is stored",
            url=url,
            source_id=source_id,
        )
        if not _SOURCE_ID.fullmatch(source_id) or ".." in source_id:
            raise missing
        try:
            folder = resolve_in_session(self.session_dir, "sources")
            names = [p.name for p in folder.iterdir()] if folder.is_dir() else []
        except (ToolError, OSError):
            raise missing from None
        matches = [
            name
            for name in names
            if name.startswith(source_id + ".") and "." not in name[len(source_id) + 1 :]
        ]
        matches.sort(key=lambda n: (_SNAPSHOT_PREFERENCE.get(Path(n).suffix.lower(), 9), n))
        for name in matches:
            try:
                path = resolve_in_session(self.session_dir, f"sources/{name}")
            except ToolError:
                continue  # a snapshot that links outside the session is not served
            if path.is_file():
                return path
        # No snapshot: the text the citation audit fetched and cached (--fetch live), if any.
        try:
            cached = resolve_in_session(
                self.session_dir, f"{ARTIFACT_DIR}/{CACHE_DIR}/{cache_name(source_id)}"
            )
        except ToolError:
            raise missing from None
        if cached.is_file():
            return cached
        raise missing

    def _read(self, path: Path) -> tuple[bytes, bool]:
        fd = open_in_session(self.session_dir, path)
        with open(fd, "rb", closefd=True) as fh:
            data = fh.read(self.max_bytes + 1)
        return data[: self.max_bytes], len(data) > self.max_bytes


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
