"""bench/peak.py: a child's own peak memory, not the high-water mark it inherits.

A child started by a process that holds a lot of memory reports, through wait4, at least
what its parent held (Linux carries the mark across exec); the benchmarks' children are
started by processes that grow as they run. The sampled peak is the child's own.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from bench.peak import PeakRSS

HELD_MB = 150  # what this process holds while it starts the child
CHILD_MB = 30  # what the child allocates


def test_the_peak_is_the_childs_own_not_its_parents() -> None:
    held = bytearray(HELD_MB << 20)
    held[::4096] = b"\1" * len(range(0, len(held), 4096))  # touched: resident
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import sys; x = bytearray({CHILD_MB} << 20); x[::4096] = b'1' * len(x[::4096]); "
            "sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
    )
    peak = PeakRSS(child.pid)
    # Wait (without a clock that load could beat) until the child holds its memory.
    limit = time.monotonic() + 120
    while peak.so_far() < CHILD_MB and time.monotonic() < limit:
        time.sleep(0.01)
    assert child.stdin is not None
    child.stdin.close()
    _, _, usage = os.wait4(child.pid, 0)
    own = peak.stop()
    assert CHILD_MB <= own < HELD_MB  # its 30 MB and the interpreter, not this process's
    assert usage.ru_maxrss / 1024 >= HELD_MB  # what wait4 says: the parent's mark
    del held
