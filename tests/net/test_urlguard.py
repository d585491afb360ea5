"""URL parsing, normalisation, address classes, resolution and the allow list."""

from __future__ import annotations

import socket
from ipaddress import IPv4Address, ip_address
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.errors import ToolError
from harness.net.urlguard import (
    AllowList,
    IPAddress,
    address_problem,
    check_address,
    check_scheme_and_host,
    normalize_url,
    parse_ipv4_host,
    parse_url,
    resolve_and_check,
)

# --- normalisation ------------------------------------------------------------

NORMALIZE = [
    ("HTTP://Example.COM", "http://example.com/"),
    ("http://example.com:80/a", "http://example.com/a"),
    ("https://example.com:443/a", "https://example.com/a"),
    ("http://example.com:443/a", "http://example.com:443/a"),
    ("https://example.com:8443", "https://example.com:8443/"),
    ("http://example.com:/a", "http://example.com/a"),
    ("http://example.com/a#frag", "http://example.com/a"),
    ("http://example.com/a?x=1#frag", "http://example.com/a?x=1"),
    ("http://example.com/a?", "http://example.com/a"),
    ("http://example.com/%7euser/%7E", "http://example.com/~user/~"),
    ("http://example.com/a%2fb", "http://example.com/a%2Fb"),
    ("http://example.com/a%2Fb", "http://example.com/a%2Fb"),
    ("http://example.com/%41%42", "http://example.com/AB"),
    ("http://example.com/100%", "http://example.com/100%25"),
    ("http://example.com/%zz", "http://example.com/%25zz"),
    ("http://example.com/a b", "http://example.com/a%20b"),
    ("http://example.com/é", "http://example.com/%C3%A9"),
    ("http://example.com/?q=a b&r=é", "http://example.com/?q=a%20b&r=%C3%A9"),
    ("http://example.com/?q=%2a", "http://example.com/?q=%2A"),
    ("http://example.com/a/./b/../c", "http://example.com/a/c"),
    ("http://example.com/a/b/..", "http://example.com/a/"),
    ("http://example.com/../../x", "http://example.com/x"),
    ("http://example.com/%2e%2E/x", "http://example.com/x"),
    ("http://example.com//double", "http://example.com//double"),
    ("http://example.com./", "http://example.com/"),
    ("  http://example.com/  ", "http://example.com/"),
    ("http://bücher.de/", "http://xn--bcher-kva.de/"),
    ("http://BÜCHER.de/", "http://xn--bcher-kva.de/"),
    ("http://ｅｘａｍｐｌｅ．ｃｏｍ/", "http://example.com/"),  # fullwidth letters and dot
    ("http://example.com\u3002org/", "http://example.com.org/"),  # ideographic full stop
    ("http://xn--bcher-kva.de/", "http://xn--bcher-kva.de/"),
    ("http://under_score.example.com/", "http://under_score.example.com/"),
    ("http://[2001:DB8:0:0::1]:8080/", "http://[2001:db8::1]:8080/"),
    ("http://93.184.216.34/", "http://93.184.216.34/"),
    # Numeric forms become dotted quads (and are judged by address later).
    ("http://2130706433/", "http://127.0.0.1/"),
    ("http://0x7f.1/", "http://127.0.0.1/"),
    ("http://0x7F.0.0.1/", "http://127.0.0.1/"),
    ("http://0177.0.0.1/", "http://127.0.0.1/"),
    ("http://127.1/", "http://127.0.0.1/"),
    ("http://127.0.1/", "http://127.0.0.1/"),
    ("http://1.2.3.4./", "http://1.2.3.4/"),
    ("http://１２７.0.0.1/", "http://127.0.0.1/"),
    ("http://0x5db8d822/", "http://93.184.216.34/"),
]


@pytest.mark.parametrize(("given", "expected"), NORMALIZE)
def test_normalize_url(given: str, expected: str) -> None:
    assert normalize_url(given) == expected
    assert normalize_url(expected) == expected  # idempotent


PARSE_REFUSED = [
    ("", "empty"),
    ("example.com/page", "not an absolute URL"),
    ("/relative/path", "not an absolute URL"),
    ("file:///etc/passwd", "a scheme other than http and https"),
    ("FILE:///etc/passwd", "a scheme other than http and https"),
    ("ftp://example.com/x", "a scheme other than http and https"),
    ("data:text/html,<script>alert(1)</script>", "a scheme other than http and https"),
    ("javascript:alert(1)", "a scheme other than http and https"),
    ("gopher://example.com/", "a scheme other than http and https"),
    ("http:example.com", "must start with http://"),
    ("http:/example.com", "must start with http://"),
    ("http://user@example.com/", "user credentials"),
    ("http://user:pw@example.com/", "user credentials"),
    ("http://@example.com/", "user credentials"),
    ("http://example.com@evil.com/", "user credentials"),
    ("http://evil.com\\@example.com/", "backslash"),
    ("http://example.com\\.evil.com/", "backslash"),
    ("http://example.com/a\\b", "backslash"),
    ("http://exa\tmple.com/", "control characters"),
    ("http://example.com/\nHost: evil", "control characters"),
    ("http://example.com/\x00", "control characters"),
    ("http://", "has no host"),
    ("http:///path", "has no host"),
    ("http://:80/", "has no host"),
    ("http://example.com:0/", "invalid port"),
    ("http://example.com:65536/", "invalid port"),
    ("http://example.com:+80/", "invalid port"),
    ("http://example.com:8o/", "invalid port"),
    ("http://example.com:80:80/", "more than one ':'"),
    ("http://[::1/", "unterminated IPv6"),
    ("http://[::1]x/", "after its IPv6 literal"),
    ("http://[fe80::1%25eth0]/", "zone identifier"),
    ("http://[not-v6]/", "malformed IPv6"),
    ("http://%31%32%37.0.0.1/", "percent-escape in its host"),
    ("http://exa mple.com/", "characters a domain cannot hold"),
    ("http://example.com%2f.evil/", "percent-escape"),
    ("http://example.com／evil.com/", "characters a domain cannot hold"),  # fullwidth slash
    ("http://a..b.com/", "not a valid"),
    ("http://" + "a" * 64 + ".com/", "not a valid"),
    ("http://" + "a." * 127 + "com/", "longer than 253"),
    ("http://256.1.1.1/", "numeric host"),
    ("http://1.2.3.4.5/", "numeric host"),
    ("http://4294967296/", "numeric host"),
    ("http://0x100000000/", "numeric host"),
    ("http://08.1.1.1/", "numeric host"),
    ("http://1.2.3.09/", "numeric host"),
    ("http://1.1.1.256.2/", "numeric host"),
    ("http://example.com/" + "a" * 9000, "longer than 8192"),
    ("http://example.com/\ud800", "not valid Unicode"),
]


@pytest.mark.parametrize(("given", "why"), PARSE_REFUSED)
def test_parse_refusals(given: str, why: str) -> None:
    with pytest.raises(ToolError) as info:
        parse_url(given)
    assert info.value.message.startswith("refused:")
    assert why in info.value.message
    # The URL itself is a name, shown only inside an untrusted block.
    if given:
        assert info.value.names == (("url", given if len(given) <= 200 else given[:200] + "…"),)
        assert given not in info.value.message


@pytest.mark.parametrize("given", [None, 42, b"http://example.com/", ["http://x.com"]])
def test_non_string_url(given: object) -> None:
    with pytest.raises(ToolError, match="must be a string"):
        parse_url(given)


def test_parsed_url_parts() -> None:
    p = parse_url("HTTPS://Example.com:8443/a/b?x=1#y")
    assert (p.scheme, p.host, p.port, p.path, p.query, p.ip) == (
        "https",
        "example.com",
        8443,
        "/a/b",
        "x=1",
        None,
    )
    assert p.netloc == "example.com:8443"
    assert p.target == "/a/b?x=1"
    assert parse_url("http://[2001:db8::1]/").netloc == "[2001:db8::1]"


# --- numeric IPv4 hosts -------------------------------------------------------

IPV4_FORMS = [
    ("example.com", None),
    ("0xg", None),
    ("1.2.3.example", None),
    ("127.0.0.1", "127.0.0.1"),
    ("2130706433", "127.0.0.1"),
    ("0x7f000001", "127.0.0.1"),
    ("0X7F.1", "127.0.0.1"),
    ("0177.1", "127.0.0.1"),
    ("017700000001", "127.0.0.1"),
    ("10.1", "10.0.0.1"),
    ("192.168.257", "192.168.1.1"),
    ("0", "0.0.0.0"),
    ("0x", "0.0.0.0"),
    ("169.254.43518", "169.254.169.254"),
    ("0xa9fea9fe", "169.254.169.254"),
    ("1.2.3.4.", "1.2.3.4"),
]


@pytest.mark.parametrize(("host", "expected"), IPV4_FORMS)
def test_parse_ipv4_host(host: str, expected: str | None) -> None:
    got = parse_ipv4_host(host)
    assert (str(got) if got else None) == expected
    if expected is not None:
        # inet_aton agrees with the WHATWG parser on every form it accepts.
        trimmed = host.rstrip(".")
        if trimmed.lower() != "0x":
            assert socket.inet_ntoa(socket.inet_aton(trimmed)) == expected


@pytest.mark.parametrize(
    "host", ["1.2.3.4.5", "256.0.0.1", "1.2.65536", "08", "0x1g.1", "1..1", "4294967296"]
)
def test_parse_ipv4_host_invalid(host: str) -> None:
    with pytest.raises(ValueError):
        parse_ipv4_host(host)


# --- address classes ----------------------------------------------------------

BAD_ADDRESSES = [
    # IPv4
    ("0.0.0.0", "unspecified"),
    ("0.1.2.3", "unspecified"),
    ("127.0.0.1", "loopback"),
    ("127.255.255.254", "loopback"),
    ("10.0.0.5", "private"),
    ("172.16.0.1", "private"),
    ("172.31.255.255", "private"),
    ("192.168.1.1", "private"),
    ("169.254.169.254", "cloud metadata"),
    ("169.254.170.2", "cloud metadata"),
    ("169.254.1.1", "link-local"),
    ("100.64.0.1", "shared"),
    ("100.100.100.200", "shared"),  # Alibaba Cloud metadata
    ("100.127.255.255", "shared"),
    ("192.0.0.8", "IETF protocol assignment"),
    ("192.0.2.1", "documentation"),
    ("198.51.100.7", "documentation"),
    ("203.0.113.9", "documentation"),
    ("198.18.0.1", "benchmarking"),
    ("192.88.99.1", "6to4 relay"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "broadcast"),
    # IPv6
    ("::", "unspecified"),
    ("::1", "loopback"),
    ("::127.0.0.1", "IPv4-compatible"),
    ("::8.8.8.8", "IPv4-compatible"),
    ("::ffff:127.0.0.1", "IPv4-mapped IPv6 embedding 127.0.0.1, a loopback"),
    ("::ffff:10.0.0.1", "IPv4-mapped IPv6 embedding 10.0.0.1, a private"),
    ("::ffff:169.254.169.254", "cloud metadata"),
    ("::ffff:0:127.0.0.1", "IPv4-translated IPv6 embedding 127.0.0.1"),
    ("64:ff9b::127.0.0.1", "NAT64 IPv6 embedding 127.0.0.1"),
    ("64:ff9b::a9fe:a9fe", "NAT64 IPv6 embedding 169.254.169.254"),
    ("64:ff9b:1::1", "local-use NAT64"),
    ("2002:7f00:1::", "6to4 IPv6 embedding 127.0.0.1"),
    ("2002:c0a8:101::1", "6to4 IPv6 embedding 192.168.1.1"),
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),
    ("fc00::1", "unique local"),
    ("fd12:3456:789a::1", "unique local"),
    ("fd00:ec2::254", "unique local"),  # AWS IPv6 metadata
    ("fec0::1", "site-local"),
    ("fe80::1", "link-local"),
    ("febf::1", "link-local"),
    ("ff02::1", "multicast"),
    ("2001:db8::1", "documentation"),
    ("3fff::1", "documentation"),
    ("2001:2::1", "benchmarking"),
    ("100::1", "discard-only"),
    ("4000::1", "reserved"),
    ("1::1", "reserved"),
]


@pytest.mark.parametrize(("ip", "why"), BAD_ADDRESSES)
def test_bad_addresses(ip: str, why: str) -> None:
    problem = address_problem(ip)
    assert problem is not None and why in problem
    with pytest.raises(ToolError, match="public internet addresses") as info:
        check_address(ip)
    assert why in info.value.message
    assert info.value.data["reason"] == problem


GOOD_ADDRESSES = [
    "93.184.216.34",
    "8.8.8.8",
    "1.1.1.1",
    "172.15.255.255",
    "172.32.0.0",
    "100.63.255.255",
    "100.128.0.0",
    "192.167.255.255",
    "223.255.255.255",
    "2606:2800:220:1:248:1893:25c8:1946",
    "2001:4860:4860::8888",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "2002:808:808::1",
]


@pytest.mark.parametrize("ip", GOOD_ADDRESSES)
def test_public_addresses(ip: str) -> None:
    assert address_problem(ip) is None
    assert check_address(ip) == ip_address(ip)
    assert check_address(ip_address(ip)) == ip_address(ip)


def test_check_address_not_an_ip() -> None:
    with pytest.raises(ToolError, match="not an IP address"):
        check_address("example.com")


# --- host rules without DNS ----------------------------------------------------

HOST_REFUSED = [
    ("http://127.0.0.1/", "loopback"),
    ("http://2130706433/", "loopback"),
    ("http://0x7f.1/", "loopback"),
    ("http://0177.0.0.1/", "loopback"),
    ("http://127.1/", "loopback"),
    ("http://0/", "unspecified"),
    ("http://0.0.0.0:8080/", "unspecified"),
    ("http://10.0.0.1/", "private"),
    ("http://169.254.169.254/latest/meta-data/", "metadata"),
    ("http://0xa9fea9fe/", "metadata"),
    ("http://[::1]/", "loopback"),
    ("http://[::ffff:127.0.0.1]/", "loopback"),
    ("http://[::ffff:7f00:1]/", "loopback"),
    ("http://[fd00::1]/", "unique local"),
    ("http://[fe80::1]/", "link-local"),
    ("http://localhost/", "local or intranet"),
    ("http://LOCALHOST./", "local or intranet"),
    ("http://foo.localhost/", "local or intranet"),
    ("http://printer.local/", "local or intranet"),
    ("http://metadata.google.internal/", "local or intranet"),
    ("http://router.home.arpa/", "local or intranet"),
    ("http://intranet/", "local or intranet"),
    ("http://metadata/", "local or intranet"),
]


@pytest.mark.parametrize(("url", "why"), HOST_REFUSED)
def test_check_scheme_and_host_refusals(url: str, why: str) -> None:
    with pytest.raises(ToolError, match=why):
        check_scheme_and_host(url)


def test_check_scheme_and_host_accepts_public() -> None:
    assert check_scheme_and_host("https://example.com/x").url == "https://example.com/x"
    assert check_scheme_and_host("http://93.184.216.34/").ip == IPv4Address("93.184.216.34")


# --- resolution ------------------------------------------------------------------


def fake_resolver(table: dict[str, list[str]]) -> Any:
    calls: list[tuple[str, int]] = []

    def resolve(host: str, port: int) -> list[tuple[Any, ...]]:
        calls.append((host, port))
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        out: list[tuple[Any, ...]] = []
        for ip in table[host]:
            if ":" in ip:
                out.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", (ip, port, 0, 0)))
            else:
                out.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port)))
            out.append(out[-1])  # getaddrinfo repeats addresses per socket type
        return out

    resolve.calls = calls  # type: ignore[attr-defined]
    return resolve


RESOLVER = fake_resolver(
    {
        "public.example": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
        "private.example": ["10.0.0.7"],
        "mixed.example": ["93.184.216.34", "127.0.0.1"],
        "mixed6.example": ["93.184.216.34", "::ffff:169.254.169.254"],
        "scoped.example": ["fe80::1%eth0"],
        "empty.example": [],
        "loop.test": ["127.0.0.1"],
    }
)


def test_resolve_public() -> None:
    got = resolve_and_check("public.example", 443, RESOLVER)
    assert got == [
        ip_address("93.184.216.34"),
        ip_address("2606:2800:220:1:248:1893:25c8:1946"),
    ]


@pytest.mark.parametrize(
    ("host", "why"),
    [
        ("private.example", "resolves to 10.0.0.7, a private address"),
        ("mixed.example", "resolves to 127.0.0.1, a loopback address"),
        ("mixed6.example", "cloud metadata"),
        ("scoped.example", "link-local"),
        ("empty.example", "no addresses"),
        ("nxdomain.example", "could not resolve the host; check the URL"),
    ],
)
def test_resolve_refusals(host: str, why: str) -> None:
    with pytest.raises(ToolError, match=why):
        resolve_and_check(host, 80, RESOLVER)


def test_resolve_literal_skips_dns() -> None:
    resolver = fake_resolver({})
    assert resolve_and_check("93.184.216.34", 80, resolver) == [ip_address("93.184.216.34")]
    assert resolve_and_check("[2001:4860:4860::8888]", 80, resolver) == [
        ip_address("2001:4860:4860::8888")
    ]
    with pytest.raises(ToolError, match="loopback"):
        resolve_and_check("127.0.0.1", 80, resolver)
    assert resolver.calls == []


def test_allow_address_exempts_only_what_it_names() -> None:
    loopback = ip_address("127.0.0.1")

    def only_loopback(ip: IPAddress) -> bool:
        return ip == loopback

    assert resolve_and_check("loop.test", 80, RESOLVER, allow_address=only_loopback) == [loopback]
    with pytest.raises(ToolError, match="private"):
        resolve_and_check("private.example", 80, RESOLVER, allow_address=only_loopback)
    # A literal is never exempted: the hook is for resolved test-server names only.
    with pytest.raises(ToolError, match="loopback"):
        resolve_and_check("127.0.0.1", 80, RESOLVER, allow_address=only_loopback)


def test_resolver_raising_unicode_error() -> None:
    def bad(host: str, port: int) -> list[tuple[Any, ...]]:
        raise UnicodeError("label too long")

    with pytest.raises(ToolError, match="could not resolve"):
        resolve_and_check("x.example", 80, bad)


# --- allow list --------------------------------------------------------------------


def test_allow_list_matches_normalised_forms() -> None:
    allow = AllowList(
        [
            "https://Example.com:443/Report?id=7#section",
            "http://bücher.de/ä",
            "not a url",
            "ftp://example.com/file",
        ]
    )
    assert len(allow) == 2
    assert allow.urls == ("https://example.com/Report?id=7", "http://xn--bcher-kva.de/%C3%A4")
    assert set(allow.rejected) == {"not a url", "ftp://example.com/file"}
    assert allow.check("HTTPS://EXAMPLE.COM/Report?id=7") == "https://example.com/Report?id=7"
    assert allow.check("https://example.com/./Report?id=7#other") == (
        "https://example.com/Report?id=7"
    )
    assert allow.check("http://xn--bcher-kva.de/%c3%a4") == "http://xn--bcher-kva.de/%C3%A4"
    assert "https://example.com/Report?id=7" in allow
    assert "ftp://example.com/file" not in allow


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("https://example.com/report?id=7", "not one of this session's 1 source URLs"),
        ("https://example.com/Report?id=8", "not one of"),
        ("http://example.com/Report?id=7", "not one of"),  # no silent scheme change
        ("https://example.com/Report", "not one of"),
        ("https://user@example.com/Report?id=7", "user credentials"),
        ("file:///etc/passwd", "a scheme other than http and https"),
    ],
)
def test_allow_list_refusals(url: str, why: str) -> None:
    allow = AllowList(["https://example.com/Report?id=7"])
    with pytest.raises(ToolError, match=why):
        allow.check(url)


def test_listed_url_with_a_bad_host_is_still_refused() -> None:
    allow = AllowList(["http://127.0.0.1/", "http://2130706433/admin", "http://localhost/"])
    assert len(allow) == 3
    for url in allow.urls:
        with pytest.raises(ToolError, match=r"loopback|local or intranet"):
            allow.check(url)


# --- property: canonical form is stable and keeps the host --------------------------

_URL_CHARS = st.sampled_from([*"aZ09-._~%/?#&=+:@![]\\ é．2f", "%2e", "%2F", "..", "./"])


@settings(max_examples=400, deadline=None)
@given(
    host=st.sampled_from(["example.com", "EXAMPLE.com.", "bücher.de", "93.184.216.34", "[::2]"]),
    tail=st.lists(_URL_CHARS, max_size=20).map("".join),
)
def test_normalize_is_idempotent_and_keeps_the_host(host: str, tail: str) -> None:
    try:
        parsed = parse_url(f"http://{host}/{tail}")
    except ToolError:
        return
    assert normalize_url(parsed.url) == parsed.url
    assert parse_url(parsed.url).host == parsed.host
    assert parsed.host in {"example.com", "xn--bcher-kva.de", "93.184.216.34", "::2"}
