"""The document converter's process: ``python -m harness.text.worker MEMORY [DEATHSIG]``.

Started by :mod:`harness.text.isolate`, never by hand. It sets its own limits first (no
core files; an address-space ceiling of ``MEMORY`` bytes), imports the parsers, says
``R`` on its stdout, and then converts one document per request until its stdin ends:

* request: a 4-byte length, a JSON header (kind, charset, limits, ``cpu_seconds``,
  ``size``), then ``size`` raw bytes;
* before each document the CPU-time limit (``RLIMIT_CPU``) is set to the CPU used so
  far plus ``cpu_seconds``: a document that spins is ended by SIGXCPU;
* reply: an 8-byte length and a JSON object, the document's fields; a MemoryError is
  answered with a problem and ``exit``, and the process ends (its heap is suspect).

With ``DEATHSIG`` set to 1 the kernel kills the worker when the process that started
it ends (Linux ``PR_SET_PDEATHSIG``), so a converter never outlives its run.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import resource
import signal
import struct
import sys
from typing import Any, BinaryIO

_HEADER = struct.Struct(">I")
_REPLY = struct.Struct(">Q")


def _limit(memory: int) -> None:
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if memory > 0:
        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = memory if hard == resource.RLIM_INFINITY else min(memory, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def _die_with_parent() -> None:
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() == 1:  # the parent is already gone
            os._exit(0)


def _cpu_limit(seconds: float) -> None:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = usage.ru_utime + usage.ru_stime
    _soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = math.ceil(used + max(seconds, 0.5))
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _read_exactly(stream: BinaryIO, n: int) -> bytes | None:
    chunks: list[bytes] = []
    need = n
    while need:
        chunk = stream.read(need)
        if not chunk:
            return None
        chunks.append(chunk)
        need -= len(chunk)
    return b"".join(chunks)


def _answer(out: BinaryIO, reply: dict[str, Any]) -> None:
    body = json.dumps(reply).encode()
    out.write(_REPLY.pack(len(body)) + body)
    out.flush()


def serve(memory: int, deathsig: bool) -> int:
    if deathsig:
        _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the run handles Ctrl-C and kills us
    _limit(memory)
    from harness.text import document

    document.preload()
    stdin = sys.stdin.buffer
    out = os.fdopen(os.dup(1), "wb")  # the protocol's own descriptor ...
    os.dup2(2, 1)  # ... so that a library printing to stdout cannot corrupt it
    out.write(b"R")
    out.flush()
    while True:
        head = _read_exactly(stdin, _HEADER.size)
        if head is None:
            return 0
        (length,) = _HEADER.unpack(head)
        raw = _read_exactly(stdin, length)
        if raw is None:
            return 0
        header = json.loads(raw)
        data = _read_exactly(stdin, int(header["size"]))
        if data is None:
            return 0
        _cpu_limit(float(header["cpu_seconds"]))
        try:
            reply = document.convert_here(data, header)
        except MemoryError:
            ceiling = memory // (1024 * 1024)
            reply = {
                "problem": f"converting it ran out of the converter's {ceiling:,} MiB memory",
                "exit": True,
            }
        del data
        _answer(out, reply)
        if reply.get("exit"):
            return 0


def main(argv: list[str]) -> int:
    memory = int(argv[1]) if len(argv) > 1 else 0
    deathsig = len(argv) > 2 and argv[2] == "1"
    return serve(memory, deathsig)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
