"""The live WebFetch ends at its own total timeout, whatever phase a slow server drips.

A loopback server that sends its status line and headers one byte at a time (each byte
well within any read timeout) held one WebFetch for 54 s against a 3 s timeout: the
socket timeouts bound each read, and no deadline check ran inside the HTTP stack.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from harness.errors import ToolError
from harness.net.fetch import Fetcher
from harness.net.urlguard import AllowList
from tests.support.waits import HANG, WITHIN

from .test_fetch import only_loopback, stub

RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello"
# The same answer with a header that takes HANG seconds to drip (h11 takes 16 KiB of head).
PADDED = RESPONSE.replace(b"\r\n\r\n", b"\r\nX-Pad: " + b"p" * int(HANG / 0.05) + b"\r\n\r\n")


@contextlib.contextmanager
def _dripping(response: bytes) -> Iterator[int]:
    """Answers every connection with `response`, one byte every 50 ms."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    stop = threading.Event()

    def serve(conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            conn.recv(65536)
            for byte in response:
                if stop.is_set():
                    return
                conn.sendall(bytes([byte]))
                time.sleep(0.05)

    def accept() -> None:
        with contextlib.suppress(OSError):
            while not stop.is_set():
                conn, _ = listener.accept()
                threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        listener.close()


@pytest.fixture
def dripping_server() -> Iterator[int]:
    """RESPONSE, dripped in about 4 s."""
    with _dripping(RESPONSE) as port:
        yield port


@pytest.fixture
def endless_headers() -> Iterator[int]:
    """PADDED: headers that drip for HANG seconds, every byte well within a read timeout."""
    with _dripping(PADDED) as port:
        yield port


@pytest.mark.timeout(2 * WITHIN)
def test_headers_dripping_one_byte_at_a_time_hit_the_total_timeout(endless_headers: int) -> None:
    url = f"http://site.test:{endless_headers}/page"
    fetcher = Fetcher(AllowList([url]), resolver=stub(), allow_address=only_loopback, timeout=1.0)
    began = time.monotonic()
    with pytest.raises(ToolError, match="timed out after 1 s"):
        fetcher.fetch(url)
    took = time.monotonic() - began
    # Without the watchdog the fetch waits for the whole head, HANG seconds; with it, about
    # 1 s, which no load stretches to WITHIN.
    assert took < WITHIN, f"the fetch took {took:.2f} s against a 1 s timeout"


def test_a_patient_timeout_still_reads_the_dripped_page(dripping_server: int) -> None:
    url = f"http://site.test:{dripping_server}/page"
    fetcher = Fetcher(
        AllowList([url]), resolver=stub(), allow_address=only_loopback, timeout=WITHIN
    )
    assert "hello" in fetcher.fetch(url)  # the watchdog does not cut a fetch in time
