"""A child process's own peak resident memory, sampled from the kernel while it runs.

`wait4`'s `ru_maxrss` is not the child's own: Linux carries a process's memory high-water
mark across `exec`, and `subprocess` starts a child with `vfork` (the parent's memory
then), so a child's `ru_maxrss` is at least what the benchmark itself held when it started
the child. Measured: `python -c pass` started from a process of 411 MB reports 411 MB;
`judge batch` children of `bench_batch.py` reported 104, 120, 150, 181, 211 MB as the
benchmark grew, for the same batch. `VmHWM` in /proc/PID/status is the peak of the child's
own address space (new at exec): read every `every` seconds until the child exits, its
last value is the child's peak up to that last reading.
"""

from __future__ import annotations

import threading


def _vm_hwm_kib(pid: int) -> int | None:
    """The VmHWM of `pid` in KiB; None once it has no memory of its own (exited)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


class PeakRSS:
    """Samples a started child's VmHWM until `stop()`, which gives its peak in MB."""

    def __init__(self, pid: int, every: float = 0.02) -> None:
        self._pid, self._every = pid, every
        self._peak_kib = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while True:
            hwm = _vm_hwm_kib(self._pid)
            if hwm is None:
                return
            self._peak_kib = max(self._peak_kib, hwm)
            if self._done.wait(self._every):
                return

    def so_far(self) -> float:
        """The child's peak RSS in MB as last sampled."""
        return self._peak_kib / 1024

    def stop(self) -> float:
        """The child's peak RSS in MB (call once it has exited or been reaped)."""
        self._done.set()
        self._thread.join()
        return self.so_far()
