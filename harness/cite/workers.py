"""A fixed set of worker threads fed by one queue.

Leaner than `ThreadPoolExecutor` (no Future per task, a C-level queue): with thousands of
short requests that mostly wait on the network, the executor's bookkeeping was most of the
harness's own CPU time (see bench/bench_cite.py).
"""

from __future__ import annotations

import queue
import threading
import traceback
from collections.abc import Callable
from typing import Any


class Workers:
    def __init__(self, size: int, name: str = "cite") -> None:
        self._queue: queue.SimpleQueue[tuple[Callable[[Any], None], Any] | None] = (
            queue.SimpleQueue()
        )
        self._lock = threading.Lock()
        self._closed = False
        # Daemon threads: a pool someone forgot to close must not keep the process alive.
        self._threads = [
            threading.Thread(target=self._loop, name=f"{name}-{i}", daemon=True)
            for i in range(size)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, task: Callable[[Any], None], arg: Any) -> None:
        """Run `task(arg)` on a worker; `RuntimeError` once closed."""
        with self._lock:  # so no task can slip in behind the stop markers
            if self._closed:
                raise RuntimeError("cite workers are closed")
            self._queue.put((task, arg))

    def _loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            try:
                item[0](item[1])
            except BaseException:  # tasks handle their own faults; never lose a worker
                traceback.print_exc()

    def close(self, join: bool = True) -> None:
        """Finish queued tasks, then stop every worker (`join=False`: without waiting for
        them, when the process is being interrupted; the workers are daemon threads)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for _ in self._threads:
                self._queue.put(None)
        if not join:
            return
        me = threading.current_thread()
        for thread in self._threads:
            if thread is not me:
                thread.join()
