"""One run per session at a time: an advisory lock file in the artifact folder."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.errors import JudgeError


class LockTimeout(JudgeError):
    """Another run holds the session's lock for longer than we may wait."""


@contextmanager
def session_lock(path: Path, timeout: float) -> Iterator[None]:
    """Hold an exclusive flock on `path`, waiting at most `timeout` seconds."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockTimeout(
                        f"another judge run holds {path} (waited {timeout:g} s); "
                        "wait for it to finish or raise --lock-timeout",
                        path=str(path),
                    ) from None
                time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
