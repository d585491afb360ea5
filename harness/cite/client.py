"""The client boundary: what the shell sends, what comes back, and a scripted fake."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from harness.cite.wire import Request
from harness.usage import Usage

__all__ = ["CiteClient", "Reply", "Request", "RequestTooLarge", "ScriptedClient"]


class RequestTooLarge(Exception):
    """The provider refused a request as too large; round 1 halves it, round 2 records it."""


@dataclass(frozen=True)
class Reply:
    """A client's answer to one request.

    `answers` maps question keys to raw values: a number for noul and score, an option for
    choice, or `{"value": ..., "confidence": p}` for any of them. The shell checks them.
    `problems` says what the client corrected in the reply to read it (a token count out
    of range, clamped: harness.usage), one sentence each; the audit reports them.
    """

    answers: Mapping[str, object]
    usage: Usage = field(default_factory=Usage)
    model: str | None = None
    problems: tuple[str, ...] = ()


class CiteClient(Protocol):
    """Anything that answers a request. May be called from several threads at once."""

    def ask(self, request: Request) -> Reply: ...


Script = Mapping[str, object] | Callable[[Request], "Mapping[str, object] | Reply"]


class ScriptedClient:
    """A fake client for tests and benchmarks.

    `answers` is a table (question key -> value; keys it lacks are left unanswered) or a
    function of the request returning such a table or a whole `Reply`. `delay` and
    `jitter` (uniform extra seconds, seeded) simulate latency so replies can finish in any
    order; `too_large(request)` refuses a request as `RequestTooLarge`. Every request seen
    is kept in `requests` unless `keep=False` (long benchmarks).
    """

    def __init__(
        self,
        answers: Script,
        *,
        delay: float = 0.0,
        jitter: float = 0.0,
        seed: int | None = None,
        too_large: Callable[[Request], bool] | None = None,
        model: str = "scripted",
        usage: Usage | None = None,
        keep: bool = True,
    ) -> None:
        self._answers = answers
        self._delay = delay
        self._jitter = jitter
        self._random = random.Random(seed)
        self._too_large = too_large
        self._model = model
        self._usage = usage or Usage()
        self._lock = threading.Lock()
        self._keep = keep
        self.requests: list[Request] = []

    def ask(self, request: Request) -> Reply:
        pause = self._delay
        if self._keep or self._jitter:
            with self._lock:
                if self._keep:
                    self.requests.append(request)
                if self._jitter:
                    pause += self._random.uniform(0, self._jitter)
        if pause:
            time.sleep(pause)
        if self._too_large is not None and self._too_large(request):
            raise RequestTooLarge("scripted: request too large")
        if callable(self._answers):
            out = self._answers(request)
            if isinstance(out, Reply):
                return out
        else:
            table = self._answers
            out = {k: table[k] for k in request["questions"] if k in table}
        return Reply(answers=out, usage=self._usage, model=self._model)
