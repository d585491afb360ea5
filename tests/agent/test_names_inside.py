"""No session- or web-controlled name is ever outside the untrusted-content delimiters.

A table over every kind of text a tool returns to the model (results and refusals, as
`ToolBox.run` hands them over) and the first message: file names, folder names, listed
URLs, redirect targets, a server's reason phrase and content type, source ids, snapshot
names and claim ids all carry one planted marker. The marker must appear in what the model
is sent (the case really names it) and only inside a delimited block.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from ipaddress import IPv4Address
from pathlib import Path
from typing import Any, ClassVar

import pytest

from harness.agent.fetch import StoredFetcher
from harness.agent.opening import first_message
from harness.agent.tools import ToolBox
from harness.audit import audit_session
from harness.audit.text import judge_summary
from harness.fs.cache import cache_name
from harness.net.fetch import Fetcher
from harness.net.urlguard import AllowList, IPAddress
from harness.session.loader import load_session
from tests.support.blocks import blocks, outside
from tests.support.fakes import TableResolver

MARK = "zqplanted"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    port: ClassVar[int] = 0

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, code: int, headers: dict[str, str], body: bytes, reason: str = "") -> None:
        self.send_response(code, reason or None)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = self.path
        text = {"Content-Type": "text/plain"}
        if path == f"/{MARK}-page" or path == f"/{MARK}-target":
            self._send(200, text, b"page words")
        elif path == f"/{MARK}-redirect":
            target = f"http://{MARK}-other.test:{self.port}/{MARK}-target"
            self._send(302, {"Location": target}, b"")
        elif path == f"/{MARK}-status":
            self._send(404, text, b"gone", reason=f"{MARK} reason")
        elif path == f"/{MARK}-ctype":
            self._send(200, {"Content-Type": f"application/{MARK}"}, b"x")
        elif path == f"/{MARK}-encoding":
            self._send(200, {**text, "Content-Encoding": MARK}, b"x")
        elif path.startswith(f"/{MARK}-loop"):
            self._send(302, {"Location": f"/{MARK}-loop-{len(path)}"}, b"")
        elif path == f"/{MARK}-private":
            self._send(302, {"Location": f"http://{MARK}-private.test/x"}, b"")
        elif path == f"/{MARK}-noloc":
            self._send(302, {}, b"")
        else:
            self._send(404, text, b"not found")


class Quiet(ThreadingHTTPServer):
    daemon_threads = True


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    httpd = Quiet(("127.0.0.1", 0), Handler)
    Handler.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield Handler.port
    httpd.shutdown()
    httpd.server_close()


LIVE_PATHS = ["page", "redirect", "status", "ctype", "encoding", "loop", "private", "noloc"]


def live(port: int) -> Fetcher:
    def loopback(ip: IPAddress) -> bool:
        return ip == IPv4Address("127.0.0.1")

    resolver = TableResolver(
        {
            "site.test": ["127.0.0.1"],
            f"{MARK}-other.test": ["127.0.0.1"],
            f"{MARK}-private.test": ["10.0.0.5"],
        }
    )
    listed = [f"http://site.test:{port}/{MARK}-{p}" for p in LIVE_PATHS]
    return Fetcher(
        AllowList(listed),
        resolver=resolver,
        allow_address=loopback,
        timeout=5.0,
        max_redirects=2,
        max_uses=100,
    )


SOURCES = {
    f"{MARK}-s1": f"https://example.com/{MARK}-one",
    f"{MARK}-s2": f"https://example.com/{MARK}-two",
    f"{MARK}-s3": f"https://example.com/{MARK}-three",
    f"{MARK}-s4": f"https://example.com/{MARK}-four",
}


@pytest.fixture
def sess(tmp_path: Path) -> Path:
    s = tmp_path / "sess"
    (s / "findings").mkdir(parents=True)
    (s / "sources").mkdir()
    claim = {"id": f"{MARK}-claim", "text": "Sea level rose.", "sourceIds": [f"{MARK}-s9"]}
    finding = {"id": "sq1", "subQuestion": "What?", "claims": [claim]}
    (s / "findings" / f"{MARK}-a.json").write_text(json.dumps(finding, indent=1))
    (s / "findings" / f"{MARK}-bad.json").write_text("{not json")
    sources = [{"id": sid, "url": url} for sid, url in SOURCES.items()]
    (s / "sources.json").write_text(json.dumps({"sources": sources}))
    (s / "sources" / f"{MARK}-s1.txt").write_text("stored words\n")
    (s / "sources" / f"{MARK}-s3.pdf").write_bytes(b"%PDF-1.7 broken")
    cache = s / ".judge" / "sources"
    cache.mkdir(parents=True)
    (cache / cache_name(f"{MARK}-s4")).write_text("fetched words\n")
    (s / f"{MARK}-empty.txt").write_bytes(b"")
    (s / f"{MARK}.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    (s / f"{MARK}-dir").mkdir()
    (s / f"{MARK}-dir" / f"{MARK}-entry.txt").write_text("x\n")
    (s / f"{MARK}-void").mkdir()
    os.mkfifo(s / f"{MARK}-fifo")
    (tmp_path / "outside.txt").write_text("outside\n")
    os.link(tmp_path / "outside.txt", s / f"{MARK}-hard")
    (s / f"{MARK}-link").symlink_to(tmp_path / "outside.txt")
    (s / f"{MARK}-loop").symlink_to(f"{MARK}-loop")
    return s


Call = tuple[str, dict[str, Any]]

READS: dict[str, Call] = {
    "read a file": ("Read", {"file_path": f"findings/{MARK}-a.json"}),
    "read an empty file": ("Read", {"file_path": f"{MARK}-empty.txt"}),
    "read a binary file": ("Read", {"file_path": f"{MARK}.bin"}),
    "read a folder": ("Read", {"file_path": f"{MARK}-dir"}),
    "read the session folder": ("Read", {"file_path": "."}),
    "read an empty folder": ("Read", {"file_path": f"{MARK}-void"}),
    "read past a file's end": ("Read", {"file_path": f"findings/{MARK}-a.json", "offset": 99}),
    "read past a folder's end": ("Read", {"file_path": f"{MARK}-dir", "offset": 9}),
    "read a FIFO": ("Read", {"file_path": f"{MARK}-fifo"}),
    "read a hard link": ("Read", {"file_path": f"{MARK}-hard"}),
    "read a link out": ("Read", {"file_path": f"{MARK}-link"}),
    "read a link loop": ("Read", {"file_path": f"{MARK}-loop"}),
    "read a missing file": ("Read", {"file_path": f"{MARK}-missing.txt"}),
    "read outside": ("Read", {"file_path": f"../{MARK}-outside.txt"}),
    "write another file": ("Write", {"file_path": f"{MARK}.json", "content": "{}"}),
}

STORED: dict[str, Call] = {
    "stored snapshot": ("WebFetch", {"url": SOURCES[f"{MARK}-s1"]}),
    "no snapshot": ("WebFetch", {"url": SOURCES[f"{MARK}-s2"]}),
    "snapshot that is not text": ("WebFetch", {"url": SOURCES[f"{MARK}-s3"]}),
    "text the audit fetched": ("WebFetch", {"url": SOURCES[f"{MARK}-s4"]}),
    "stored, not listed": ("WebFetch", {"url": f"https://example.com/{MARK}-unlisted"}),
    "stored, bad scheme": ("WebFetch", {"url": f"ftp://example.com/{MARK}"}),
}

LIVE = {f"live {p}": f"/{MARK}-{p}" for p in LIVE_PATHS} | {"live, not listed": f"/{MARK}-unlisted"}


def assert_only_inside(text: str) -> None:
    assert MARK in text.lower(), text  # the case really names the planted thing
    assert blocks(text), text
    assert MARK not in outside(text).lower(), outside(text)


@pytest.mark.parametrize("case", sorted(READS))
def test_read_and_write_results(sess: Path, case: str) -> None:
    name, args = READS[case]
    text, _ = ToolBox(sess, "sess", StoredFetcher(sess, SOURCES)).run(name, args)
    assert_only_inside(text)


@pytest.mark.parametrize("case", sorted(STORED))
def test_stored_webfetch_results(sess: Path, case: str) -> None:
    name, args = STORED[case]
    text, _ = ToolBox(sess, "sess", StoredFetcher(sess, SOURCES)).run(name, args)
    assert_only_inside(text)


@pytest.mark.parametrize("case", sorted(LIVE))
def test_live_webfetch_results(sess: Path, port: int, case: str) -> None:
    listed = f"http://site.test:{port}{LIVE[case]}"
    text, _ = ToolBox(sess, "sess", live(port)).run("WebFetch", {"url": listed})
    assert_only_inside(text)


def test_live_redirect_target_is_named_inside(sess: Path, port: int) -> None:
    text, error = ToolBox(sess, "sess", live(port)).run(
        "WebFetch", {"url": f"http://site.test:{port}/{MARK}-redirect"}
    )
    assert not error
    (page,) = blocks(text)
    assert page.names["reached"] == f"http://{MARK}-other.test:{port}/{MARK}-target"


def test_first_message_and_audit_summary(sess: Path) -> None:
    session = load_session(sess)
    assert any(MARK in p.file for p in session.problems)  # the broken finding is named
    report = audit_session(session, offline=True)
    summary = judge_summary(report, ".judge/citations.json")
    assert_only_inside(summary)
    assert_only_inside(first_message(session, "judge", summary))
