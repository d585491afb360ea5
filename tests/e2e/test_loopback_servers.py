"""The loopback API servers themselves: what the tests and benches measure against."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from tests.support.apiserver import FakeAPI
from tests.support.batchapiserver import BatchAPI

WIDE = 600  # connections opened at once: more than a batch of 512 sessions in flight


@pytest.mark.parametrize("server", [FakeAPI, BatchAPI], ids=["messages", "batches"])
def test_a_wide_batchs_connections_are_all_taken_before_any_is_accepted(server: Any) -> None:
    # Listening but not yet accepting: every connection waits in the listen backlog. With
    # socketserver's default backlog of 5 the seventh connect times out (the kernel drops
    # its SYN), as a wide batch's first connections did, to be retried a second later.
    api = server()
    host, port = api._server.server_address[:2]
    opened: list[socket.socket] = []
    try:
        for _ in range(WIDE):
            opened.append(socket.create_connection((host, port), timeout=1.0))
    finally:
        for sock in opened:
            sock.close()
        api._server.server_close()
    assert len(opened) == WIDE
