"""`--fetch live|stored|off`: cited sources without a snapshot, fetched through WebFetch's
guard from a loopback server under an invented name, cached in `.judge/sources/`."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from ipaddress import IPv4Address, IPv6Address
from pathlib import Path
from typing import Any, ClassVar

import pytest

from harness.agent.fetch import StoredFetcher
from harness.audit import audit_session
from harness.audit.fetched import FetchedTexts, cache_name
from harness.cite import ScriptedClient
from harness.net.fetch import Fetcher
from harness.net.urlguard import AllowList
from harness.session.loader import load_session
from tests.support.fakes import TableResolver

PAGE = b"<html><body><nav>Home</nav><p>The Volta dam was completed in 1965.</p></body></html>"


class Handler(BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        Handler.hits.append(self.path)
        if self.path.startswith("/away"):
            self.send_response(302)
            self.send_header("Location", "http://internal.test/secret")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def port() -> Iterator[int]:
    Handler.hits = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def loopback(ip: IPv4Address | IPv6Address) -> bool:
    return ip == IPv4Address("127.0.0.1")


def write(folder: Path, port: int, paths: dict[str, str]) -> Path:
    (folder / "findings").mkdir(parents=True)
    (folder / "sources").mkdir()
    claims = [
        {
            "id": f"c-{sid}",
            "text": "The Volta dam was completed in 1965.",
            "sourceIds": [sid],
            "quotes": [{"sourceId": sid, "text": "The Volta dam was completed in 1965."}],
        }
        for sid in paths
    ]
    finding = {"id": "sq1", "subQuestion": "q", "claims": claims}
    (folder / "findings" / "sq1.json").write_text(json.dumps(finding), encoding="utf-8")
    listed = [{"id": s, "url": f"http://site.test:{port}{p}"} for s, p in paths.items()]
    (folder / "sources.json").write_text(json.dumps({"sources": listed}), encoding="utf-8")
    return folder


def fetcher(urls: dict[str, str], max_uses: int) -> Any:
    resolver = TableResolver({"site.test": ["127.0.0.1"], "internal.test": ["10.0.0.5"]})
    guard = AllowList(urls.values())
    return Fetcher(guard, resolver=resolver, allow_address=loopback, max_uses=max_uses).text


def yes(request: dict[str, Any]) -> dict[str, object]:
    return dict.fromkeys(request["questions"], 0.9)


def audit(folder: Path, mode: str, max_fetches: int = 5) -> tuple[Any, FetchedTexts]:
    session = load_session(folder)
    urls = session.source_urls()
    texts = FetchedTexts(
        folder / ".judge",
        urls,
        mode,  # type: ignore[arg-type]
        fetch=fetcher(urls, max_fetches) if mode == "live" else None,
        max_fetches=max_fetches,
    )
    report = audit_session(session, client=ScriptedClient(yes), source_text=texts)
    return report, texts


def test_live_fetch_is_cached_and_reused(tmp_path: Path, port: int) -> None:
    folder = write(tmp_path / "s", port, {"s9": "/doc"})
    report, texts = audit(folder, "live")
    (claim,) = report.claims
    assert claim.against == "sources" and claim.verdict == "supported"
    assert "The Volta dam was completed in 1965." in claim.passages[0].text
    assert texts.fetched == ["s9"] and Handler.hits == ["/doc"]
    cached = folder / ".judge" / "sources" / "s9.txt"
    assert "The Volta dam was completed in 1965." in cached.read_text(encoding="utf-8")
    assert not (folder / "sources" / "s9.txt").exists()  # never among the session's files

    # A later run reuses the cache without a request, in `stored` mode as in `live`.
    for mode in ("stored", "live"):
        again, texts = audit(folder, mode)
        assert again.claims[0].against == "sources"
        assert texts.reused == ["s9"] and texts.fetched == []
    assert Handler.hits == ["/doc"]

    # `off` reads neither: the claim falls back to its quotes.
    off, _ = audit(folder, "off")
    assert off.claims[0].against == "quotes"


def test_a_redirect_to_an_internal_address_is_refused(tmp_path: Path, port: int) -> None:
    folder = write(tmp_path / "s", port, {"s9": "/away"})
    report, texts = audit(folder, "live")
    assert report.claims[0].against == "quotes"  # no text: judged against the quote
    assert "s9" in texts.failed and "10.0.0.5" in texts.failed["s9"]
    assert not (folder / ".judge" / "sources" / "s9.txt").exists()


def test_fetches_are_bounded(tmp_path: Path, port: int) -> None:
    folder = write(tmp_path / "s", port, {"s1": "/a", "s2": "/b", "s3": "/c"})
    report, texts = audit(folder, "live", max_fetches=2)
    assert [c.against for c in report.claims] == ["sources", "sources", "quotes"]
    assert len(Handler.hits) == 2
    assert "limit (2)" in texts.failed["s3"]


def test_stored_without_a_cache_reads_nothing(tmp_path: Path, port: int) -> None:
    folder = write(tmp_path / "s", port, {"s9": "/doc"})
    report, _ = audit(folder, "stored")
    assert report.claims[0].against == "quotes" and Handler.hits == []


def test_a_linked_cache_is_never_followed(tmp_path: Path, port: int) -> None:
    folder = write(tmp_path / "s", port, {"s9": "/doc"})
    outside = tmp_path / "outside"
    (outside / "sources").mkdir(parents=True)
    (outside / "sources" / "s9.txt").write_text("The Volta dam was completed in 1965.")
    (folder / ".judge").symlink_to(outside)
    report, texts = audit(folder, "stored")
    assert report.claims[0].against == "quotes" and texts.reused == []


def test_cache_names_are_plain_or_hashed() -> None:
    assert cache_name("s9") == "s9.txt"
    for hostile in ("../x", "a/b", ".hidden", "", "x" * 200):
        name = cache_name(hostile)
        assert name.startswith("id-") and "/" not in name


def test_the_judges_stored_webfetch_reads_the_cache(tmp_path: Path, port: int) -> None:
    folder = write(tmp_path / "s", port, {"s9": "/doc"})
    audit(folder, "live")
    urls = load_session(folder).source_urls()
    result = StoredFetcher(folder, urls).fetch(urls["s9"])
    assert "The Volta dam was completed in 1965." in result
    assert ".judge/sources/s9.txt" in result and "citation audit fetched" in result
    assert Handler.hits == ["/doc"]  # read from the cache, not fetched again


def test_the_audits_own_live_fetch_starts_no_fetch_past_its_share() -> None:
    """The audit builds its live fetch itself (harness.audit.live), bounded as the run's was."""
    import time

    from harness import clock
    from harness.audit.live import live_fetch
    from harness.errors import ToolError

    with clock.scope(clock.Deadline(time.monotonic() - 1, clock.AUDIT_SHARE)):
        fetch = live_fetch({"s1": "https://example.org/a"}, 5)
    with pytest.raises(ToolError, match="the audit's share of the run's time was used up"):
        fetch("https://example.org/a")
