"""One run per session at a time: an advisory lock file in the artifact folder."""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.errors import JudgeError, WriteError


class LockTimeout(JudgeError):
    """Another run holds the session's lock for longer than we may wait."""


@contextmanager
def session_lock(path: Path, timeout: float) -> Iterator[None]:
    """Hold an exclusive flock on `path`, waiting at most `timeout` seconds."""
    fd = _open_lock_file(path)
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


def _open_lock_file(path: Path) -> int:
    """Open (or create) the lock file itself, never what a link planted there points at:
    the lock is truncated and written, so following a link could clobber any file."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        why = "it is a symbolic link" if exc.errno == errno.ELOOP else exc.strerror or str(exc)
        raise WriteError(
            f"cannot open the run lock {path}: {why}; remove it and run again", path=str(path)
        ) from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise WriteError(
            f"cannot use the run lock {path}: it is not a regular file; remove it and run again",
            path=str(path),
        )
    return fd
