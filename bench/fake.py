"""The fake model both engine benchmarks use: deterministic answers after a fixed latency.

`Timed` keeps the CPU its own threads spend inside `ask` (hashing answers, going to sleep
and waking), which a real client spends in the SDK instead: the benchmarks subtract it to
report the harness's own CPU.
"""

from __future__ import annotations

import hashlib
import threading
import time
from typing import Any

from harness.cite import Reply, ScriptedClient


def probability(key: str) -> float:
    # Deterministic per question key: the same replies at every concurrency.
    return int(hashlib.blake2b(key.encode(), digest_size=4).hexdigest(), 16) / 0xFFFFFFFF


def answers(request: dict[str, Any]) -> dict[str, object]:
    return {key: probability(key) for key in request["questions"]}


class Timed:
    """The fake model: `latency` seconds a request, its own CPU counted in `cpu`."""

    def __init__(self, latency: float) -> None:
        self._inner = ScriptedClient(answers, delay=latency, keep=False)
        self._lock = threading.Lock()
        self.cpu = 0.0

    def ask(self, request: dict[str, Any]) -> Reply:
        start = time.thread_time()
        try:
            return self._inner.ask(request)
        finally:
            spent = time.thread_time() - start
            with self._lock:
                self.cpu += spent
