"""Documents are converted in worker processes, never in the run's own process.

PDFium and lexbor are native parsers: on hostile input they can allocate until the
process aborts (an 861-byte PDF whose form draws itself twice), or spend minutes in a
loop no Python check interrupts (80,000 nested ``<div>``). So PDF and HTML become text
in a worker (``python -m harness.text.worker``) that runs under

* a memory ceiling (``RLIMIT_AS``, :data:`harness.config.DOCUMENT_WORKER_BYTES`),
* a CPU-time limit per document (``RLIMIT_CPU``, the document's seconds plus a little),
* a wall-clock wait: the parent waits for the reply until the document's time or the
  run's deadline, whichever comes first, and then kills the worker;
* a SIGTERM or Ctrl-C to the run: the wait ends at once (it wakes every
  :data:`_TICK` seconds) and the worker is killed.

A worker that dies, runs out of memory or time gives a :class:`Failure` with the reason
in words; the caller makes it the document's ``problem`` (the source is then
``source_unreadable``), never an exception. Workers start lazily (a session with no PDF
or HTML never starts one), at most :data:`POOL_SIZE` at once, and are reused; one that
failed is thrown away. Results are cached in memory by content digest (and every
parameter that shapes the text), so a batch converts each document once per process.

The wire is length-prefixed: a JSON header and the raw bytes one way, a JSON reply the
other. Nothing from the worker is unpickled.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import selectors
import signal
import struct
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import config, interrupt
from harness.clock import Deadline

__all__ = [
    "CACHE_CHARS",
    "POOL_SIZE",
    "Failure",
    "Request",
    "cache_clear",
    "convert",
    "shutdown",
    "stats",
]

POOL_SIZE = config.DOCUMENT_WORKERS
CACHE_CHARS = 64 * 1024 * 1024  # characters of converted text kept in the digest cache
_TICK = 0.2  # how often a wait looks at an interrupt (seconds)
_CPU_GRACE = 2.0  # CPU seconds beyond the document's own time cap
_WALL_GRACE = 5.0  # wall seconds beyond 1.5 times it (the machine may be busy)
_HEADER = struct.Struct(">I")
_REPLY = struct.Struct(">Q")
_REPLY_MAX = 512 * 1024 * 1024  # a reply longer than this is a broken worker


@dataclass(frozen=True, slots=True)
class Request:
    """What one conversion depends on (with the bytes, the cache key)."""

    kind: str
    charset: str | None
    max_bytes: int
    max_pages: int
    max_seconds: float
    truncated: bool

    def header(self, size: int) -> bytes:
        body = json.dumps(
            {
                "kind": self.kind,
                "charset": self.charset,
                "max_bytes": self.max_bytes,
                "max_pages": self.max_pages,
                "max_seconds": self.max_seconds,
                "truncated": self.truncated,
                "cpu_seconds": self.max_seconds + _CPU_GRACE,
                "size": size,
            }
        ).encode()
        return _HEADER.pack(len(body)) + body


@dataclass(frozen=True, slots=True)
class Failure:
    """A conversion that gave no text, and why (``cacheable``: the document's fault)."""

    reason: str
    cacheable: bool = True


# -- statistics (for the bench and the tests) -------------------------------------------


@dataclass(slots=True)
class _Stats:
    started: int = 0  # workers started
    start_seconds: float = 0.0  # wall time spent starting them (until ready)
    conversions: int = 0  # documents sent to a worker
    cache_hits: int = 0
    failures: int = 0


_stats = _Stats()


def stats() -> dict[str, float]:
    """Counters since the process started: workers started, conversions, cache hits."""
    return {
        "started": _stats.started,
        "start_seconds": _stats.start_seconds,
        "conversions": _stats.conversions,
        "cache_hits": _stats.cache_hits,
        "failures": _stats.failures,
    }


# -- one worker --------------------------------------------------------------------------


class _Dead(Exception):
    """The worker is gone or broken; ``reason`` says how, in words."""

    def __init__(self, reason: str, cacheable: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.cacheable = cacheable


def _package_root() -> str:
    return str(Path(__file__).resolve().parent.parent.parent)


def _signal_words(returncode: int, memory: int, cpu: float) -> str:
    if returncode >= 0:
        return f"the document converter exited (status {returncode}) before answering"
    number = -returncode
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    if number == signal.SIGXCPU:
        return f"converting it took more than {cpu:g} s of CPU time (the converter was stopped)"
    if number in (signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS):
        return (
            f"the document converter crashed on it ({name}; most often it ran out of its "
            f"{memory // (1024 * 1024):,} MiB memory ceiling)"
        )
    if number == signal.SIGKILL:
        return "the document converter was killed (SIGKILL; the system may be out of memory)"
    return f"the document converter died on it ({name})"


class _Worker:
    def __init__(self, memory: int) -> None:
        self.memory = memory
        env = dict(os.environ)
        root = _package_root()
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        env.pop("PYTHONSTARTUP", None)
        # The kernel's "kill me when my parent ends" follows the thread that started the
        # worker: only a worker started by the main thread (which lives as long as the
        # run) may ask for it; others end on RLIMIT_CPU or their stdin's end.
        deathsig = "1" if threading.current_thread() is threading.main_thread() else "0"
        started = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "harness.text.worker", str(memory), deathsig],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            close_fds=True,
            start_new_session=True,  # a Ctrl-C to the terminal is the run's to handle
        )
        _stats.started += 1
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._out = self.proc.stdout
        self._in = self.proc.stdin
        self._ready_at = started
        self._ready = False

    def _read(self, n: int, until: float, cpu: float) -> bytes:
        """Exactly ``n`` bytes of the reply, or :class:`_Dead` (died, timed out)."""
        chunks: list[bytes] = []
        need = n
        fd = self._out.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while need:
                if interrupt.requested():
                    raise _Dead("the run was interrupted while the document was converted", False)
                left = until - time.monotonic()
                if left <= 0:
                    raise _Dead("timeout", False)
                if not sel.select(min(left, _TICK)):
                    continue
                chunk = os.read(fd, min(need, 1 << 20))
                if not chunk:
                    code = self.proc.wait()
                    raise _Dead(_signal_words(code, self.memory, cpu))
                chunks.append(chunk)
                need -= len(chunk)
        return b"".join(chunks)

    def ready(self, until: float) -> None:
        """Wait for the worker's one-byte greeting (its imports done)."""
        if self._ready:
            return
        greeting = self._read(1, until, 0.0)
        if greeting != b"R":
            raise _Dead("the document converter did not start", False)
        self._ready = True
        _stats.start_seconds += time.monotonic() - self._ready_at

    def convert(self, request: Request, data: bytes, until: float) -> dict[str, Any]:
        cpu = request.max_seconds + _CPU_GRACE
        try:
            self._in.write(request.header(len(data)))
            self._in.write(data)
            self._in.flush()
        except OSError:
            code = self.proc.wait()
            raise _Dead(_signal_words(code, self.memory, cpu)) from None
        (size,) = _REPLY.unpack(self._read(_REPLY.size, until, cpu))
        if size > _REPLY_MAX:
            raise _Dead("the document converter sent a broken reply", False)
        reply = json.loads(self._read(size, until, cpu))
        if not isinstance(reply, dict):
            raise _Dead("the document converter sent a broken reply", False)
        return reply

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.kill()
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        for stream in (self._in, self._out):
            with contextlib.suppress(OSError):
                stream.close()

    def alive(self) -> bool:
        return self.proc.poll() is None


# -- the pool ----------------------------------------------------------------------------


class _Pool:
    def __init__(self, size: int, memory: int) -> None:
        self.size = size
        self.memory = memory
        self.idle: list[_Worker] = []
        self.busy = 0
        self.cond = threading.Condition()

    def take(self, until: float) -> _Worker | None:
        with self.cond:
            while True:
                while self.idle:
                    worker = self.idle.pop()
                    if worker.alive():
                        self.busy += 1
                        return worker
                    worker.kill()
                if self.busy < self.size:
                    self.busy += 1
                    break
                left = until - time.monotonic()
                if left <= 0 or interrupt.requested():
                    return None
                self.cond.wait(min(left, _TICK))
        try:
            return _Worker(self.memory)
        except BaseException:
            self.give(None)
            raise

    def give(self, worker: _Worker | None) -> None:
        with self.cond:
            self.busy -= 1
            if worker is not None:
                self.idle.append(worker)
            self.cond.notify()

    def shutdown(self) -> None:
        with self.cond:
            idle, self.idle = self.idle, []
        for worker in idle:
            worker.kill()


_pool: _Pool | None = None
_pool_lock = threading.Lock()
_running: set[_Worker] = set()  # every worker in use, killed at exit


def _the_pool() -> _Pool:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = _Pool(POOL_SIZE, config.DOCUMENT_WORKER_BYTES)
        return _pool


def shutdown() -> None:
    """Stop every worker (idle ones now; busy ones are killed too)."""
    pool = _pool
    if pool is not None:
        pool.shutdown()
    for worker in list(_running):
        worker.kill()


atexit.register(shutdown)


# -- the cache ---------------------------------------------------------------------------


_cache: OrderedDict[bytes, dict[str, Any] | Failure] = OrderedDict()
_cache_sizes: dict[bytes, int] = {}
_cache_lock = threading.Lock()
_cache_total = 0


def cache_clear() -> None:
    global _cache_total
    with _cache_lock:
        _cache.clear()
        _cache_sizes.clear()
        _cache_total = 0


def _key(request: Request, data: bytes) -> bytes:
    digest = hashlib.sha256(data)
    digest.update(json.dumps([request.kind, request.charset, request.max_bytes]).encode())
    digest.update(json.dumps([request.max_pages, request.max_seconds, request.truncated]).encode())
    return digest.digest()


def _cached(key: bytes) -> dict[str, Any] | Failure | None:
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            _stats.cache_hits += 1
        return hit


def _remember(key: bytes, value: dict[str, Any] | Failure) -> None:
    global _cache_total
    size = 64
    if isinstance(value, dict):
        size += len(value.get("plain") or "") + len(value.get("marked") or "")
    if size > CACHE_CHARS // 4:
        return
    with _cache_lock:
        if key in _cache:
            return
        _cache[key] = value
        _cache_sizes[key] = size
        _cache_total += size
        while _cache_total > CACHE_CHARS and _cache:
            old, _ = _cache.popitem(last=False)
            _cache_total -= _cache_sizes.pop(old)


# -- converting --------------------------------------------------------------------------


def convert(request: Request, data: bytes, deadline: Deadline | None) -> dict[str, Any] | Failure:
    """The worker's reply for ``data`` (the document's fields), or why there is none.

    ``deadline`` is the run's (harness.clock; None: none): the wait never goes
    past it. Raises nothing but :class:`~harness.interrupt.Interrupted` (a signal).
    """
    key = _key(request, data)
    hit = _cached(key)
    if hit is not None:
        return hit
    if interrupt.requested():  # the run is stopping: start nothing more
        return Failure("not converted: the run was interrupted", cacheable=False)
    now = time.monotonic()
    wall = request.max_seconds * 1.5 + _WALL_GRACE
    until = now + wall
    at = None if deadline is None else deadline.at
    by_run = at is not None and at < until
    if at is not None:
        until = min(until, at)
    if until <= now:
        return Failure("not converted: the run's time limit was reached", cacheable=False)
    pool = _the_pool()
    try:
        worker = pool.take(until)
    except OSError as exc:  # no process could be started (resources, a broken install)
        return Failure(f"the document converter could not be started ({exc})", False)
    if worker is None:
        why = "the run was interrupted" if interrupt.requested() else "the run's time ran out"
        return Failure(f"not converted: {why} while waiting for a document converter", False)
    _running.add(worker)
    keep: _Worker | None = None
    try:
        _stats.conversions += 1
        try:
            worker.ready(until)
        except _Dead as dead:  # its start failed: not the document's fault, not cached
            raise _Dead(dead.reason, cacheable=False) from None
        reply = worker.convert(request, data, until)
        if reply.get("exit"):  # the worker ran out of memory and will not be reused
            worker.kill()
        else:
            keep = worker
    except _Dead as dead:
        worker.kill()
        _stats.failures += 1
        if dead.reason == "timeout":
            if by_run:
                return Failure("not converted: the run's time limit was reached", False)
            # Wall time, not CPU time (that is SIGXCPU): a busy machine may be the cause, so
            # the next run tries again.
            failure = Failure(f"converting it took longer than {wall:g} s (stopped)", False)
        else:
            failure = Failure(dead.reason, dead.cacheable)
        if failure.cacheable:
            _remember(key, failure)
        return failure
    except BaseException:
        worker.kill()  # a signal (or a bug): the worker must not outlive the wait
        raise
    finally:
        _running.discard(worker)
        pool.give(keep)
    if "problem" in reply and reply.get("crash"):
        _stats.failures += 1
    _remember(key, reply)
    return reply
