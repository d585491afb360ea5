"""The fake model both engine benchmarks use: deterministic answers after a fixed latency.

`Timed` keeps the CPU its own threads spend inside `ask` (hashing answers, going to sleep
and waking), which a real client spends in the SDK instead: the benchmarks subtract it to
report the harness's own CPU.
"""

from __future__ import annotations

import gc
import hashlib
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

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


T = TypeVar("T")


def measure(
    latency: float, concurrency: int, call: Callable[[Timed], T], requests: Callable[[T], int]
) -> tuple[T, dict[str, float]]:
    """Run `call` against a fresh fake model and time it against the ideal bound.

    Figures: `requests`, `wall`, `ideal` (requests x latency / concurrency), `over` (wall
    past ideal), `cpu_share` (the harness: the process's CPU less the fake model's, over
    wall) and `process_share` (the whole process's).
    """
    client = Timed(latency)
    gc.collect()  # each run starts clean, not paying for the garbage of the one before
    cpu0, wall0 = time.process_time(), time.perf_counter()
    result = call(client)
    wall = time.perf_counter() - wall0
    process = time.process_time() - cpu0
    asked = requests(result)
    ideal = asked * latency / concurrency
    return result, {
        "requests": asked,
        "wall": wall,
        "ideal": ideal,
        "over": wall / ideal - 1 if ideal else 0.0,
        "cpu_share": (process - client.cpu) / wall if wall else 0.0,
        "process_share": process / wall if wall else 0.0,
    }
