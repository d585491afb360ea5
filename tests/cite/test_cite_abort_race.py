"""A judgment started after another's fault aborted the batch still finishes: the caller's
wait ends with the fault, never hangs (seen as an intermittent hang of `judge run` when the
first audit request found a refused key while later documents were still being started)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from harness.cite import CitePool
from harness.cite.client import Reply, Request
from harness.errors import ConfigError
from tests.support.cite_builders import concerns, screened, source


class _Refusing:
    def __init__(self) -> None:
        self.asked = 0
        self.refused = threading.Event()

    def ask(self, request: Request) -> Reply:
        self.asked += 1
        try:
            raise ConfigError("the API refused the credentials")
        finally:
            self.refused.set()


@pytest.mark.parametrize("later", [1, 3])
def test_a_judgment_started_after_the_abort_finishes(later: int) -> None:
    client = _Refusing()
    defs = concerns(screened())

    def items() -> Iterator[tuple[Any, Any]]:
        yield source("a1", "a2"), defs
        assert client.refused.wait(5)  # the first judgment's fault has aborted the batch
        for n in range(later):
            yield source(f"b{n}"), defs

    done = threading.Event()
    caught: list[BaseException] = []

    def read() -> None:
        with CitePool(4) as pool:
            try:
                list(pool.stream(items(), client).as_ready())
            except BaseException as exc:  # the fault, as the caller should see it
                caught.append(exc)
        done.set()

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    assert done.wait(10), "the wait for the batch never ended"
    assert caught and isinstance(caught[0], ConfigError)
    assert client.asked == 1  # nothing was asked for the judgments started after the abort
