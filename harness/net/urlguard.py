"""URL and address rules for WebFetch: which URLs may be asked for, which hosts reached.

Three layers, each usable on its own:

* :func:`parse_url` / :func:`normalize_url` read a URL strictly (http and https only,
  no userinfo, no backslashes or control characters, hosts IDNA-encoded, numeric
  IPv4 forms such as ``0x7f.1`` decoded the way browsers and ``inet_aton`` do) and
  give one canonical spelling, so an allow list can be compared exactly.
* :func:`check_scheme_and_host` adds the host rules that need no DNS: IP literals must
  be public, and names that only ever mean "this machine or network" are refused.
* :func:`check_address` / :func:`resolve_and_check` judge the addresses a name resolves
  to: every one must be public unicast, including the IPv4 address inside an
  IPv4-mapped, 6to4 or NAT64 IPv6 address.

The parser is deliberately stricter than browsers: where WHATWG quietly repairs a URL
(tabs and newlines removed, ``\\`` read as ``/``, percent-escapes in hosts decoded),
two parsers can disagree about which host is meant, so such URLs are refused instead.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address
from typing import Any

from harness.errors import ToolError

__all__ = [
    "AllowList",
    "IPAddress",
    "ParsedURL",
    "Resolver",
    "address_problem",
    "check_address",
    "check_scheme_and_host",
    "normalize_url",
    "parse_ipv4_host",
    "parse_url",
    "resolve_and_check",
]

IPAddress = IPv4Address | IPv6Address
Resolver = Callable[[str, int], Iterable[tuple[Any, ...]]]
"""``socket.getaddrinfo``-shaped: ``(host, port) -> [(family, type, proto, name, sockaddr)]``."""

MAX_URL_CHARS = 8192
DEFAULT_PORTS = {"http": 80, "https": 443}

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_CONTROLS = re.compile(r"[\x00-\x1f\x7f]")
_HOST_CHARS = re.compile(r"[a-z0-9_\-.]+")
_HEX = "0123456789abcdefABCDEF"
_DIGITS = {8: "01234567", 10: "0123456789", 16: _HEX}
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# Printable ASCII that may not appear raw in a path or query; WHATWG encodes these too.
_ENCODE = frozenset(' "<>`{}|^\\')
_LOCAL_NAMES = ("localhost",)
_LOCAL_SUFFIXES = (".localhost", ".local", ".localdomain", ".internal", ".home.arpa", ".onion")


@dataclass(frozen=True)
class ParsedURL:
    """A URL as :func:`parse_url` read it; ``url`` is its canonical spelling."""

    scheme: str
    host: str
    """ASCII and lowercase; an IPv6 literal without brackets, IPv4 as a dotted quad."""
    port: int
    path: str
    query: str | None
    ip: IPAddress | None
    """Set when the host is an IP literal (in any accepted spelling)."""

    @property
    def netloc(self) -> str:
        host = f"[{self.host}]" if isinstance(self.ip, IPv6Address) else self.host
        return host if self.port == DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"

    @property
    def target(self) -> str:
        """The request target: path and query."""
        return self.path if self.query is None else f"{self.path}?{self.query}"

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.netloc}{self.target}"


def _refuse(url: str, why: str, **data: Any) -> ToolError:
    """A refusal of ``url`` (the model's, or a redirect's target: never the harness's
    words), which the agent shows the model only as a name inside an untrusted block."""
    shown = url if len(url) <= 200 else url[:200] + "…"
    return ToolError(f"refused: the URL {why}", names=[("url", shown)], url=shown, **data)


# --- parsing ------------------------------------------------------------------


def parse_ipv4_host(host: str) -> IPv4Address | None:
    """The WHATWG IPv4 parser: ``None`` if ``host`` is a domain name.

    A host whose last label is a number (decimal, ``0x`` hex, or ``0``-prefixed octal)
    is an IPv4 address, in one to four parts, the last part filling the remaining
    bytes: ``2130706433``, ``0x7f.1``, ``0177.0.0.1`` and ``127.1`` all mean
    127.0.0.1, as they do to ``inet_aton``. Such a host that does not parse raises
    :class:`ValueError`: it is never looked up as a name.
    """
    parts = host.split(".")
    if len(parts) > 1 and parts[-1] == "":
        parts.pop()
    if not _ends_in_number(parts[-1]):
        return None
    if len(parts) > 4:
        raise ValueError("more than four parts")
    numbers = [_ipv4_number(part) for part in parts]
    if any(n > 255 for n in numbers[:-1]):
        raise ValueError("a part other than the last is above 255")
    if numbers[-1] >= 256 ** (5 - len(numbers)):
        raise ValueError("the last part is too large")
    value = numbers[-1]
    for i, n in enumerate(numbers[:-1]):
        value += n << (8 * (3 - i))
    return IPv4Address(value)


def _ends_in_number(last: str) -> bool:
    if last.isascii() and last.isdigit():
        return True
    try:
        _ipv4_number(last)
    except ValueError:
        return False
    return last[:2].lower() == "0x"


def _ipv4_number(part: str) -> int:
    if not part or not part.isascii():
        raise ValueError(f"bad IPv4 part {part!r}")
    if part[:2].lower() == "0x":
        digits, base = part[2:], 16
    elif len(part) > 1 and part[0] == "0":
        digits, base = part[1:], 8
    else:
        digits, base = part, 10
    if not digits:
        return 0
    if any(c not in _DIGITS[base] for c in digits):
        raise ValueError(f"bad IPv4 part {part!r}")
    return int(digits, base)


def _normalize_host(url: str, raw: str) -> tuple[str, IPAddress | None]:
    if not raw:
        raise _refuse(url, "has no host")
    if raw.startswith("["):
        if not raw.endswith("]"):
            raise _refuse(url, "has an unterminated IPv6 literal")
        inner = raw[1:-1]
        if "%" in inner:
            raise _refuse(url, "has an IPv6 zone identifier, which names a local interface")
        try:
            v6 = IPv6Address(inner)
        except ValueError:
            raise _refuse(url, "has a malformed IPv6 address") from None
        return v6.compressed, v6
    if "%" in raw:
        raise _refuse(url, "has a percent-escape in its host name; write the host plainly")
    try:
        # Python's IDNA codec applies nameprep (lowercasing, NFKC: fullwidth forms and
        # dots fold to ASCII), so look-alike spellings reach the same canonical host.
        host = raw.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise _refuse(
            url, "has a host name that is not a valid (internationalized) domain"
        ) from None
    if host.endswith("."):
        host = host[:-1]
    if not host or not _HOST_CHARS.fullmatch(host) or ".." in host or host.startswith("."):
        raise _refuse(url, "has a host name with characters a domain cannot hold")
    if len(host) > 253:
        raise _refuse(url, "has a host name longer than 253 characters")
    try:
        v4 = parse_ipv4_host(host)
    except ValueError:
        raise _refuse(url, "has a numeric host that is not a valid IPv4 address") from None
    if v4 is not None:
        return str(v4), v4
    return host, None


def _normalize_escapes(text: str) -> str:
    """Canonical percent-encoding: unreserved bytes decoded, other escapes upper-case."""
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "%":
            pair = text[i + 1 : i + 3]
            if len(pair) == 2 and all(h in _HEX for h in pair):
                ch = chr(int(pair, 16))
                out.append(ch if ch in _UNRESERVED else f"%{pair.upper()}")
                i += 3
                continue
            out.append("%25")
        elif c in _ENCODE or not c.isascii():
            out.extend(f"%{b:02X}" for b in c.encode("utf-8"))
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _remove_dot_segments(path: str) -> str:
    segments = path.split("/")[1:]
    out: list[str] = []
    for i, seg in enumerate(segments):
        last = i == len(segments) - 1
        if seg in (".", ".."):
            if seg == ".." and out:
                out.pop()
            if last:
                out.append("")
        else:
            out.append(seg)
    return "/" + "/".join(out)


def parse_url(url: object) -> ParsedURL:
    """Read ``url`` strictly; raise :class:`ToolError` saying what is wrong with it.

    Only absolute ``http://`` and ``https://`` URLs are accepted. The fragment is
    dropped, scheme and host lowercased, default ports removed, the host IDNA-encoded,
    percent-encoding made canonical, dot segments removed, and an empty path made ``/``.
    """
    if not isinstance(url, str):
        raise ToolError(f"refused: url must be a string, got {type(url).__name__}")
    text = url.strip(" \t\r\n")
    if not text:
        raise ToolError("refused: url is empty; give one of the session's source URLs")
    if len(text) > MAX_URL_CHARS:
        raise _refuse(text, f"is longer than {MAX_URL_CHARS} characters")
    if _CONTROLS.search(text):
        raise _refuse(text, "contains control characters (tabs, newlines or others)")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise _refuse(text, "is not valid Unicode text") from None
    match = _SCHEME.match(text)
    if not match:
        raise _refuse(text, "is not an absolute URL; give a full http:// or https:// URL")
    scheme = match.group(1).lower()
    if scheme not in DEFAULT_PORTS:
        raise _refuse(
            text, "uses a scheme other than http and https; only http and https URLs can be fetched"
        )
    rest = text[match.end() :]
    if not rest.startswith("//"):
        raise _refuse(text, f"must start with {scheme}:// (two slashes, then the host)")
    rest = rest[2:]
    end = len(rest)
    for stop in "/?#":
        found = rest.find(stop)
        if found != -1:
            end = min(end, found)
    authority, rest = rest[:end], rest[end:]
    rest = rest.split("#", 1)[0]
    path, sep, query = rest.partition("?")
    if "\\" in authority or "\\" in path:
        raise _refuse(text, "contains a backslash, which browsers read as '/'; use '/'")
    if "@" in authority:
        raise _refuse(text, "carries user credentials (user@host); they are not allowed")

    if authority.startswith("["):
        close = authority.find("]")
        raw_host, port_text = authority[: close + 1], authority[close + 1 :]
        if close == -1:
            raw_host, port_text = authority, ""
        elif port_text and not port_text.startswith(":"):
            raise _refuse(text, "has characters after its IPv6 literal")
        port_text = port_text[1:]
    else:
        raw_host, colon, port_text = authority.partition(":")
        if colon and ":" in port_text:
            raise _refuse(text, "has more than one ':' in its host and port")
    if port_text == "":
        port = DEFAULT_PORTS[scheme]
    elif port_text.isascii() and port_text.isdigit() and 0 < int(port_text) < 65536:
        port = int(port_text)
    else:
        raise _refuse(text, "has an invalid port (1-65535 allowed)")

    host, ip = _normalize_host(text, raw_host)
    norm_path = _remove_dot_segments(_normalize_escapes(path or "/"))
    if not norm_path.startswith("/"):
        norm_path = "/" + norm_path
    norm_query = _normalize_escapes(query) if sep and query else None
    return ParsedURL(scheme, host, port, norm_path, norm_query, ip)


def normalize_url(url: str) -> str:
    """The canonical spelling of ``url`` (see :func:`parse_url`), for exact comparison."""
    return parse_url(url).url


# --- addresses ----------------------------------------------------------------

_METADATA = {IPv4Address("169.254.169.254"), IPv4Address("169.254.170.2")}
_V4_RULES = [
    (IPv4Network(net), why)
    for net, why in [
        ("0.0.0.0/8", "unspecified ('this network')"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "shared (carrier-grade NAT)"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "IETF protocol assignment"),
        ("192.0.2.0/24", "documentation (TEST-NET-1)"),
        ("192.88.99.0/24", "6to4 relay anycast"),
        ("192.168.0.0/16", "private"),
        ("198.18.0.0/15", "benchmarking"),
        ("198.51.100.0/24", "documentation (TEST-NET-2)"),
        ("203.0.113.0/24", "documentation (TEST-NET-3)"),
        ("224.0.0.0/4", "multicast"),
        ("255.255.255.255/32", "broadcast"),
        ("240.0.0.0/4", "reserved"),
    ]
]
_V6_RULES = [
    (IPv6Network(net), why)
    for net, why in [
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("::/96", "IPv4-compatible (deprecated)"),
        ("64:ff9b:1::/48", "local-use NAT64"),
        ("100::/64", "discard-only"),
        ("2001::/32", "Teredo"),
        ("2001:2::/48", "benchmarking"),
        ("2001:db8::/32", "documentation"),
        ("3fff::/20", "documentation"),
        ("fc00::/7", "unique local"),
        ("fec0::/10", "site-local (deprecated)"),
        ("fe80::/10", "link-local"),
        ("ff00::/8", "multicast"),
    ]
]
_NAT64 = IPv6Network("64:ff9b::/96")
_V4_TRANSLATED = IPv6Network("::ffff:0:0:0/96")
_GLOBAL_UNICAST = IPv6Network("2000::/3")


def _embedded_v4(ip: IPv6Address) -> tuple[str, IPv4Address] | None:
    if ip.ipv4_mapped is not None:
        return "IPv4-mapped", ip.ipv4_mapped
    if ip in _V4_TRANSLATED:
        return "IPv4-translated", IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip in _NAT64:
        return "NAT64", IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.sixtofour is not None:
        return "6to4", ip.sixtofour
    return None


def address_problem(ip: IPAddress | str) -> str | None:
    """Why ``ip`` must not be connected to (e.g. ``"loopback"``), or ``None`` if public."""
    addr = ip_address(ip.split("%", 1)[0]) if isinstance(ip, str) else ip
    if isinstance(addr, IPv4Address):
        if addr in _METADATA:
            return "link-local (cloud metadata service)"
        for net, why in _V4_RULES:
            if addr in net:
                return why
        return None if addr.is_global else "non-public"
    embedded = _embedded_v4(addr)
    if embedded is not None:
        form, v4 = embedded
        inner = address_problem(v4)
        return f"{form} IPv6 embedding {v4}, a {inner}" if inner else None
    for net6, why in _V6_RULES:
        if addr in net6:
            return why
    if addr not in _GLOBAL_UNICAST:
        return "reserved (outside global unicast 2000::/3)"
    return None if addr.is_global else "non-public"


def check_address(ip: IPAddress | str) -> IPAddress:
    """``ip`` as an address object if it is public; else :class:`ToolError` saying why."""
    try:
        addr = ip_address(ip.split("%", 1)[0]) if isinstance(ip, str) else ip
    except ValueError:
        raise ToolError("refused: not an IP address", names=[("address", str(ip))]) from None
    problem = address_problem(addr)
    if problem:
        raise ToolError(
            f"refused: {addr} is a {problem} address; WebFetch only connects to public "
            "internet addresses",
            address=str(addr),
            reason=problem,
        )
    return addr


def check_scheme_and_host(url: object) -> ParsedURL:
    """:func:`parse_url`, plus the host rules that need no DNS lookup.

    An IP-literal host (in any spelling) must be public; host names that only ever
    mean this machine or its local network (``localhost``, ``*.local``, ``*.internal``,
    single-label names that a resolver would complete with a local search domain) are
    refused before any lookup.
    """
    parsed = parse_url(url)
    shown = parsed.url
    if parsed.ip is not None:
        problem = address_problem(parsed.ip)
        if problem:
            raise _refuse(
                shown,
                f"points at {parsed.ip}, a {problem} address; WebFetch only connects to "
                "public internet addresses",
                address=str(parsed.ip),
                reason=problem,
            )
        return parsed
    host = parsed.host
    if host in _LOCAL_NAMES or host.endswith(_LOCAL_SUFFIXES) or "." not in host:
        raise _refuse(
            shown,
            "names a local or intranet host; WebFetch only fetches public web pages",
            host=host,
        )
    return parsed


def resolve_and_check(
    host: str,
    port: int,
    resolver: Resolver = socket.getaddrinfo,
    *,
    allow_address: Callable[[IPAddress], bool] | None = None,
) -> list[IPAddress]:
    """Every address ``host`` resolves to, in order, each checked by :func:`address_problem`.

    One bad address refuses the whole host: a name that also resolves to a private
    address must not be reachable by retrying. An IP literal is checked without a
    lookup. ``allow_address`` (tests only) may exempt specific resolved addresses.
    """
    literal = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        ip = ip_address(literal)
    except ValueError:
        pass
    else:
        return [check_address(ip)]
    try:
        infos = list(resolver(host, port))
    except (OSError, UnicodeError) as exc:
        raise ToolError(
            "could not resolve the host; check the URL",
            names=[("host", host), ("error", str(exc))],
            host=host,
        ) from None
    addresses: list[IPAddress] = []
    for info in infos:
        sockaddr = info[4]
        if not isinstance(sockaddr, tuple) or not isinstance(sockaddr[0], str):
            raise ToolError(
                "refused: the host resolved to a non-IP address", names=[("host", host)], host=host
            )
        addr = ip_address(sockaddr[0].split("%", 1)[0])
        if addr not in addresses:
            addresses.append(addr)
    if not addresses:
        raise ToolError(
            "could not resolve the host: no addresses", names=[("host", host)], host=host
        )
    for addr in addresses:
        problem = address_problem(addr)
        if problem and not (allow_address is not None and allow_address(addr)):
            raise ToolError(
                f"refused: the host resolves to {addr}, a {problem} address; WebFetch only "
                "connects to public internet addresses",
                names=[("host", host)],
                host=host,
                address=str(addr),
                reason=problem,
            )
    return addresses


# --- the allow list -----------------------------------------------------------


class AllowList:
    """The session's source URLs, compared in canonical form.

    Entries that cannot be parsed as http(s) URLs are kept in :attr:`rejected`
    (original -> reason) instead of failing the whole list.
    """

    def __init__(self, urls: Iterable[str]) -> None:
        self._urls: dict[str, str] = {}
        self.rejected: dict[str, str] = {}
        for url in urls:
            try:
                self._urls.setdefault(normalize_url(url), url)
            except ToolError as exc:
                self.rejected[str(url)] = exc.message

    @property
    def urls(self) -> tuple[str, ...]:
        """The canonical URLs, in the order first given."""
        return tuple(self._urls)

    def __len__(self) -> int:
        return len(self._urls)

    def __contains__(self, url: object) -> bool:
        try:
            return normalize_url(url) in self._urls  # type: ignore[arg-type]
        except ToolError:
            return False

    def check(self, url: str) -> str:
        """The canonical form of ``url`` if it is a listed source that passes the host rules."""
        parsed = check_scheme_and_host(url)
        if parsed.url not in self._urls:
            raise ToolError(
                f"refused: the URL is not one of this session's {len(self._urls)} "
                "source URLs; WebFetch only fetches URLs listed in sources.json (Read it for "
                "the exact URLs)",
                names=[("url", parsed.url)],
                url=parsed.url,
            )
        return parsed.url
