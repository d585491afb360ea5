"""Escapes, generated: no path leaves the session, no private address is fetched.

Hypothesis builds paths (`..` chains, links made on the fly, look-alikes, NUL, very
long names, absolute prefixes) and URLs (every spelling of private addresses, names
that resolve into private space through an injected resolver, redirects into them).
The properties are the guarantees themselves, checked from the outside: what was read
holds no outside canary, nothing outside changed, nothing but the checked address was
ever sent a request. `make test` tries ~200 inputs per property; HYPOTHESIS_PROFILE=fuzz
tries 5,000. The counts are printed at the end of the run ("inputs tried").
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import os
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote

import httpx2
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from harness.agent.read import read_tool
from harness.agent.tools import ToolBox
from harness.errors import ToolError
from harness.fs.scope import resolve_in_session, resolve_write_target
from harness.net.fetch import Fetcher
from harness.net.urlguard import (
    AllowList,
    address_problem,
    check_scheme_and_host,
    normalize_url,
    resolve_and_check,
)
from tests.support.fakes import TableResolver
from tests.support.tried import count

CANARY = "CANARY-ESCAPE-9b7e1d"

# -- the layout: one per module, restored by every example that changes it -----------


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """root/sess (the session), root/outside (canaries), root/sess-evil (prefix sibling)."""
    root = tmp_path_factory.mktemp("escapes")
    sess = root / "sess"
    (sess / "findings").mkdir(parents=True)
    (sess / "findings" / "sq1.json").write_text('{"id": "sq1"}\n')
    (sess / "answer.md").write_text("inside\n")
    (sess / "fly").mkdir()  # where examples make their links
    outside = root / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{CANARY}\n")
    (outside / "judge.json").write_text(f"{CANARY}\n")
    (root / "sess-evil").mkdir()
    (root / "sess-evil" / "x.txt").write_text(f"{CANARY}\n")
    (root / "secret.txt").write_text(f"{CANARY}\n")
    (sess / "link-file").symlink_to(outside / "secret.txt")
    (sess / "link-dir").symlink_to(outside)
    (sess / "link-rel").symlink_to("../outside")
    (sess / "link-root").symlink_to("/")
    (sess / "findings" / "up").symlink_to("../..")
    (sess / "link-in").symlink_to("findings")
    (sess / "loop").symlink_to("loop")
    (sess / "judge-link").symlink_to(outside / "judge.json")
    return sess


def tree(root: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            out[str(path.relative_to(root))] = path.read_bytes()
    return out


_PIECES = [
    "..",
    ".",
    "",
    "findings",
    "sq1.json",
    "answer.md",
    "outside",
    "secret.txt",
    "judge.json",
    "sess",
    "sess-evil",
    "x.txt",
    "link-file",
    "link-dir",
    "link-rel",
    "link-root",
    "link-in",
    "judge-link",
    "up",
    "loop",
    "fly",
    "etc",
    "passwd",
    "proc",
    "self",
    "environ",
    "cwd",
    "root",
    "．．",  # fullwidth dots
    "\u2024\u2024",  # one-dot leaders
    "..\u200b",  # zero-width space
    "..\\..",
    "%2e%2e",
    "~",
    "...",
    ". .",
    "\x00",
    "..\x00",
]
piece = st.sampled_from(_PIECES) | st.text(max_size=8)
long_piece = st.text(alphabet="a.", min_size=200, max_size=300)


@st.composite
def session_paths(draw: st.DrawFn, sess: str) -> str:
    root = os.path.dirname(sess)
    parts = draw(st.lists(piece | long_piece, max_size=10))
    text = "/".join(parts)
    prefix = draw(
        st.sampled_from(["", "", "/", "//", f"{sess}/", f"{root}/", "/proc/self/cwd/", "./"])
    )
    text = prefix + text
    if draw(st.booleans()) and len(text) < 10:
        text = text + "/.." * draw(st.integers(1, 40))
    if draw(st.integers(0, 20)) == 0:
        text = "a/" * draw(st.integers(1000, 2100))  # longer than any path may be
    return text


# Files outside the session (relative to it), and ways in the session's links lead out.
_OUTSIDE = ["../secret.txt", "../outside/secret.txt", "../sess-evil/x.txt", "../outside/judge.json"]
_VIA_LINKS = [
    "link-file",
    "link-dir/secret.txt",
    "link-rel/secret.txt",
    "link-root/etc/passwd",
    "link-root/proc/self/environ",
    "findings/up/outside/secret.txt",
    "findings/up/sess-evil/x.txt",
    "judge-link",
]
_NOISE = ["./", ".//", "findings/../", "fly/../", "link-in/../", "findings/./../"]


@st.composite
def escapes(draw: st.DrawFn, sess: str) -> str:
    """A path that names a file outside the session, spelled one of many ways."""
    root = os.path.dirname(sess)
    noise = "".join(draw(st.lists(st.sampled_from(_NOISE), max_size=4)))
    kind = draw(st.sampled_from(["relative", "deeper", "absolute", "sibling", "link", "system"]))
    target = draw(st.sampled_from(_OUTSIDE))
    if kind == "relative":
        return noise + target
    if kind == "deeper":  # more .. than there are folders: the kernel stops at /
        return noise + "../" * draw(st.integers(2, 30)) + root.lstrip("/") + target[2:]
    if kind == "absolute":
        return f"{root}/{noise}{target[3:]}"
    if kind == "sibling":  # shares the session's name as a prefix
        return draw(st.sampled_from([f"{sess}-evil/x.txt", f"{noise}../sess-evil/x.txt"]))
    if kind == "link":
        return noise + draw(st.sampled_from(_VIA_LINKS))
    return draw(st.sampled_from(["/etc/passwd", "/proc/self/environ", "//etc/passwd", "/"]))


@contextlib.contextmanager
def link_on_the_fly(sess: Path, name: str, target: str) -> Iterator[None]:
    link = sess / "fly" / name
    try:
        link.symlink_to(target)
    except (OSError, ValueError):
        yield
        return
    try:
        yield
    finally:
        link.unlink()


fly_names = st.text(
    alphabet=st.characters(blacklist_characters="/\x00", codec="utf-8"), min_size=1, max_size=12
).filter(lambda n: n not in (".", ".."))


def inside(path: str | Path, sess: Path) -> bool:
    real = Path(os.path.realpath(path))
    return real == sess or real.is_relative_to(sess)


@given(data=st.data())
def test_resolve_in_session_never_leaves(layout: Path, data: st.DataObject) -> None:
    count("scope: resolve_in_session")
    text = data.draw(session_paths(str(layout)) | escapes(str(layout)))
    name = data.draw(fly_names)
    target = data.draw(session_paths(str(layout)) | escapes(str(layout)))
    through = data.draw(st.booleans())
    with link_on_the_fly(layout, name, target):
        candidate = f"fly/{name}/{text}" if through else text
        try:
            resolved = resolve_in_session(layout, candidate)
        except ToolError as exc:
            assert exc.message.startswith("refused") or "outside" in exc.message
            return
        assert inside(resolved, layout), (candidate, resolved)
        try:
            os.stat(resolved)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return  # a link loop inside: it has no real path, and opening it is refused
        assert str(resolved) == os.path.realpath(resolved)


@given(data=st.data())
def test_every_spelling_of_an_outside_file_is_refused(layout: Path, data: st.DataObject) -> None:
    count("scope: spelled escapes")
    text = data.draw(escapes(str(layout)))
    with pytest.raises(ToolError):
        resolve_in_session(layout, text)
    with pytest.raises(ToolError):
        read_tool(layout, text)
    with pytest.raises(ToolError):
        resolve_write_target(layout, text)


@given(data=st.data())
def test_resolve_write_target_is_judge_json_or_refused(layout: Path, data: st.DataObject) -> None:
    count("scope: resolve_write_target")
    text = data.draw(session_paths(str(layout)) | st.sampled_from(["judge.json", "./judge.json"]))
    name = data.draw(fly_names)
    target = data.draw(session_paths(str(layout)))
    with link_on_the_fly(layout, name, target):
        candidate = data.draw(st.sampled_from([text, f"fly/{name}/judge.json", f"fly/{name}"]))
        try:
            resolved = resolve_write_target(layout, candidate)
        except ToolError:
            return
        assert resolved == layout / "judge.json"
        assert not resolved.is_symlink()


@given(data=st.data())
def test_read_tool_shows_nothing_from_outside(layout: Path, data: st.DataObject) -> None:
    count("scope: read_tool")
    text = data.draw(session_paths(str(layout)) | escapes(str(layout)))
    name = data.draw(fly_names)
    target = data.draw(session_paths(str(layout)) | escapes(str(layout)))
    through = data.draw(st.booleans())
    offset = data.draw(st.none() | st.integers(-2, 5))
    limit = data.draw(st.none() | st.integers(-1, 5))
    with link_on_the_fly(layout, name, target):
        try:
            out = read_tool(layout, f"fly/{name}/{text}" if through else text, offset, limit)
        except ToolError as exc:
            assert CANARY not in exc.message
            return
        assert CANARY not in out


@given(data=st.data())
def test_write_tool_changes_nothing_but_judge_json(layout: Path, data: st.DataObject) -> None:
    count("scope: Write tool")
    root = layout.parent
    before = tree(root)
    text = data.draw(session_paths(str(layout)) | escapes(str(layout)) | st.just("judge.json"))
    name = data.draw(fly_names)
    target = data.draw(session_paths(str(layout)) | escapes(str(layout)))
    content = data.draw(st.sampled_from(['{"scores": 1}', VALID]))
    box = ToolBox(session_dir=layout, session_id="sess", fetcher=_NoFetch())
    with link_on_the_fly(layout, name, target):
        candidate = data.draw(st.sampled_from([text, f"fly/{name}", f"fly/{name}/judge.json"]))
        box.run("Write", {"file_path": candidate, "content": content})
    after = tree(root)
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    assert changed <= {"sess/judge.json"}, changed
    with contextlib.suppress(FileNotFoundError):
        (layout / "judge.json").unlink()


VALID = (
    '{"scores": {"factualAccuracy": 1, "citationAccuracy": 1, "completeness": 1, '
    '"sourceQuality": 1, "toolEfficiency": 1}, "unknowns": [], "note": "n", '
    '"rubricVersion": "deep-judge-v1"}'
)


class _NoFetch:
    uses = 0

    def fetch(self, url: str, prompt: str | None = None) -> str:
        raise AssertionError("no fetch here")


def test_the_layout_is_intact_after_the_properties(layout: Path) -> None:
    assert sorted(p.name for p in (layout / "fly").iterdir()) == []
    assert (layout.parent / "outside" / "secret.txt").read_text() == f"{CANARY}\n"
    assert not (layout / "judge.json").exists()


# -- addresses in every spelling -------------------------------------------------------

_PRIVATE_V4 = [
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.0.0.0/24",
    "192.168.0.0/16",
    "198.18.0.0/15",
    "224.0.0.0/4",
    "240.0.0.0/4",
]
_PUBLIC_V4 = ["93.184.216.34", "1.1.1.1", "8.8.8.8", "151.101.1.69", "140.82.112.3"]


@st.composite
def private_v4(draw: st.DrawFn) -> ipaddress.IPv4Address:
    net = ipaddress.IPv4Network(draw(st.sampled_from(_PRIVATE_V4)))
    special = [ipaddress.IPv4Address("169.254.169.254"), ipaddress.IPv4Address("127.0.0.1")]
    offset = draw(st.integers(0, net.num_addresses - 1))
    return draw(st.sampled_from([*special, net.network_address + offset]))


@st.composite
def spelled(draw: st.DrawFn, addr: ipaddress.IPv4Address) -> str:
    """One of the many ways a URL host can name an IPv4 address."""
    n = int(addr)
    a, b, c, d = addr.packed

    def part(value: int) -> str:
        form = draw(st.sampled_from(["dec", "hex", "HEX", "oct", "zeros"]))
        if form == "hex":
            return hex(value)
        if form == "HEX":
            return "0X" + format(value, "X")
        if form == "oct":
            return "0" + format(value, "o")
        if form == "zeros":
            return str(value)
        return str(value)

    host = draw(
        st.sampled_from(
            [
                "dotted",
                "one",
                "two",
                "three",
                "mapped",
                "mapped-hex",
                "compat",
                "nat64",
                "6to4",
                "fullwidth",
            ]
        )
    )
    if host == "dotted":
        text = ".".join(part(x) for x in (a, b, c, d))
    elif host == "one":
        text = part(n)
    elif host == "two":
        text = f"{part(a)}.{part(n & 0xFFFFFF)}"
    elif host == "three":
        text = f"{part(a)}.{part(b)}.{part(n & 0xFFFF)}"
    elif host == "mapped":
        text = f"[::ffff:{addr}]"
    elif host == "mapped-hex":
        text = f"[::FFFF:{n >> 16:x}:{n & 0xFFFF:x}]"
    elif host == "compat":
        text = f"[::{addr}]"
    elif host == "nat64":
        text = f"[64:ff9b::{addr}]"
    elif host == "6to4":
        text = f"[2002:{n >> 16:x}:{n & 0xFFFF:x}::1]"
    else:
        text = str(addr).translate(str.maketrans("0123456789.", "０１２３４５６７８９．"))
    if draw(st.booleans()) and not text.startswith("["):
        text += "."
    return text


def url_for(host: str, draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["http", "https", "HTTP", "hTTp"]))
    port = draw(st.sampled_from(["", ":80", ":8080", ":443"]))
    path = draw(st.sampled_from(["/", "/latest/meta-data/", "/admin?x=1", "/%2e%2e/", ""]))
    return f"{scheme}://{host}{port}{path}"


@given(data=st.data())
def test_no_spelling_of_a_private_address_passes(data: st.DataObject) -> None:
    count("urlguard: private address spellings")
    addr = data.draw(private_v4())
    url = url_for(data.draw(spelled(addr)), data.draw)
    with pytest.raises(ToolError):
        check_scheme_and_host(url)
    allow = AllowList([url])
    with pytest.raises(ToolError):
        allow.check(url)
    with _no_connections() as sent, pytest.raises(ToolError):
        Fetcher(allow, resolver=_NoResolver()).fetch(url)
    assert sent == []


@given(data=st.data())
def test_public_addresses_read_the_same_in_every_spelling(data: st.DataObject) -> None:
    count("urlguard: public address spellings")
    addr = ipaddress.IPv4Address(data.draw(st.sampled_from(_PUBLIC_V4)))
    host = data.draw(spelled(addr))
    assume(not host.startswith("[") or "ffff" in host.lower())
    parsed = check_scheme_and_host(url_for(host, data.draw))
    assert parsed.ip is not None
    shown = ipaddress.ip_address(parsed.ip)
    embedded = getattr(shown, "ipv4_mapped", None) or shown
    assert embedded == addr


v6_private = st.sampled_from(
    ["::1", "::", "fe80::1", "fc00::5", "fd12:3456::1", "ff02::1", "2001:db8::1", "fec0::1"]
)


@given(host=v6_private, zeros=st.booleans(), upper=st.booleans(), zone=st.booleans())
def test_private_ipv6_literals_are_refused(host: str, zeros: bool, upper: bool, zone: bool) -> None:
    count("urlguard: private IPv6 literals")
    text = ipaddress.IPv6Address(host).exploded if zeros else host
    text = text.upper() if upper else text
    if zone:
        text += "%25eth0"
    with pytest.raises(ToolError):
        check_scheme_and_host(f"http://[{text}]/")


# -- names that resolve into private space -------------------------------------------

label = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?", fullmatch=True)
tld = st.from_regex(r"[a-z]{2,8}", fullmatch=True)
names = st.builds(
    lambda parts, end: ".".join([*parts, end]), st.lists(label, min_size=1, max_size=3), tld
)


class _NoResolver:
    def __call__(self, host: str, port: int) -> list[Any]:
        raise AssertionError(f"no lookup expected, got {host}")


@given(
    name=names,
    bad=st.lists(private_v4().map(str) | v6_private, min_size=1, max_size=3),
    good=st.lists(st.sampled_from(_PUBLIC_V4), max_size=3),
    order=st.randoms(use_true_random=False),
)
def test_a_name_with_any_private_address_is_refused(
    name: str, bad: list[str], good: list[str], order: Any
) -> None:
    count("urlguard: names resolving into private space")
    answers = bad + good
    order.shuffle(answers)
    with pytest.raises(ToolError, match="resolves to"):
        resolve_and_check(name, 80, TableResolver({name: answers}))


@contextlib.contextmanager
def _no_connections() -> Iterator[list[str]]:
    """Record (instead of making) every request WebFetch would send."""
    sent: list[str] = []
    original = httpx2.Client.send

    def send(self: httpx2.Client, request: httpx2.Request, **kwargs: Any) -> httpx2.Response:
        sent.append(str(request.url))
        raise httpx2.ConnectError("the test forbids connections")

    httpx2.Client.send = send  # type: ignore[method-assign]
    try:
        yield sent
    finally:
        httpx2.Client.send = original  # type: ignore[method-assign]


# -- redirects into private space --------------------------------------------------------


_TLS = ssl.create_default_context()


class _Redirector(BaseHTTPRequestHandler):
    hits: ClassVar[list[tuple[str, str]]]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.hits.append((self.headers.get("host", ""), self.path))
        if self.path.startswith("/go?to="):
            from urllib.parse import unquote

            self.send_response(302)
            self.send_header("location", unquote(self.path[len("/go?to=") :]))
        else:
            self.send_response(200)
            self.send_header("content-type", "text/plain")
        self.send_header("content-length", "0")
        self.end_headers()


@pytest.fixture(scope="module")
def redirector() -> Iterator[tuple[int, list[tuple[str, str]]]]:
    hits: list[tuple[str, str]] = []
    handler = type("Redirector", (_Redirector,), {"hits": hits})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    yield server.server_address[1], hits
    server.shutdown()
    server.server_close()


@given(data=st.data())
def test_redirects_into_private_space_are_not_followed(
    redirector: tuple[int, list[tuple[str, str]]], data: st.DataObject
) -> None:
    count("fetch: redirects into private space")
    port, hits = redirector
    kind = data.draw(st.sampled_from(["literal", "name"]))
    if kind == "literal":
        addr = data.draw(private_v4())
        target = url_for(data.draw(spelled(addr)), data.draw)
        target = target.replace("/admin", f":{port}/secret") if "]:" not in target else target
    else:
        target = f"http://{data.draw(names)}:{port}/secret"
    target = data.draw(st.sampled_from([target, target.replace("http", "HTTP", 1)]))
    assume(target.isascii())  # a Location header is ASCII (fullwidth forms: tested above)
    listed = f"http://site.test:{port}/go?to={quote(target, safe='')}"
    table = {"site.test": ["127.0.0.1"]}
    if kind == "name":
        name = target.split("/")[2].rsplit(":", 1)[0]
        assume(name != "site.test")
        # (127.0.0.1 from a name is the one address this test server is let through at.)
        private = private_v4().map(str).filter(lambda a: a != "127.0.0.1") | v6_private
        table[name] = [data.draw(private)]
    resolver = TableResolver(table)
    fetcher = Fetcher(
        AllowList([listed]),
        resolver=resolver,
        allow_address=lambda a: str(a) == "127.0.0.1",
        timeout=5.0,
        ssl_context=_TLS,  # built once: loading the trust store is most of a fetch's cost
    )
    hits.clear()
    with _only_first_hop(f"site.test:{port}") as others, pytest.raises(ToolError) as refused:
        fetcher.fetch(listed)
    # Refused by rule, before any connection: not a connection that happened to fail.
    assert refused.value.message.startswith("refused"), refused.value.message
    assert others == []
    # Only the listed first hop ever reached a server, and it was asked by name.
    assert [h for h, _ in hits] == [f"site.test:{port}"]
    assert all(not path.startswith("/secret") for _, path in hits)


@contextlib.contextmanager
def _only_first_hop(host: str) -> Iterator[list[str]]:
    """Let requests for `host` through; record (and fail) any other request."""
    others: list[str] = []
    original = httpx2.Client.send

    def send(self: httpx2.Client, request: httpx2.Request, **kwargs: Any) -> httpx2.Response:
        if request.headers.get("host") == host:
            return original(self, request, **kwargs)
        others.append(f"{request.url} Host={request.headers.get('host')}")
        raise httpx2.ConnectError("the test forbids this connection")

    httpx2.Client.send = send  # type: ignore[method-assign]
    try:
        yield others
    finally:
        httpx2.Client.send = original  # type: ignore[method-assign]


@given(data=st.data())
def test_canonical_form_never_turns_private_into_public(data: st.DataObject) -> None:
    count("urlguard: normalisation keeps the address class")
    addr = data.draw(private_v4())
    url = url_for(data.draw(spelled(addr)), data.draw)
    try:
        canonical = normalize_url(url)
    except ToolError:
        return
    # The allow list compares canonical forms: the canonical spelling must be refused too.
    with pytest.raises(ToolError):
        check_scheme_and_host(canonical)
    assert address_problem(addr) is not None
