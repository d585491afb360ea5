"""`judge batch ROOT --shard K/N`: one of N processes (machines) judging one ROOT, and the
lock that keeps two `--batch-api` batches from sharing one state folder.

**Which sessions.** A session is in shard K of N (K from 0 to N-1) when the sha256 of its
path relative to ROOT (POSIX form, its bytes as the file system holds them), read as a
big-endian integer, is K modulo N. Nothing else enters: the same on every machine, run and
Python version (no `hash()`, no listing order), and a session added to ROOT moves no
other. `--shard auto/N` takes K from the scheduler: `JOB_COMPLETION_INDEX` (a Kubernetes
Indexed Job), else `SLURM_ARRAY_TASK_ID` (a Slurm array started with `--array=0-(N-1)`).

**State.** `--batch-api` keeps its state in `ROOT/.judge-batch/` (no `--shard`) or
`ROOT/.judge-batch/shard-K-of-N/`. A batch holds its state folder's `batch.lock` (an
exclusive flock, taken without waiting) for as long as it runs, and `ROOT/.judge-batch/
batch.lock` exclusively without `--shard`, shared with it: N shards run side by side, but
two batches on the same sessions never do. The second is refused at once (`BatchBusy`,
exit 1) with the process holding the lock named, instead of both waiting on each other's
sessions until `--lock-timeout` (each `--batch-api` batch's agent rounds wait for every
session it started). Plain batches need no such lock: the per-session lock serialises
them, and the second finds the first's sessions up to date.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import re
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.errors import EXIT_FAILED, JudgeError, UsageError

SHARD_ENV = ("JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID")
LOCK_FILE = "batch.lock"
MAX_SHARDS = 1_000_000
# ASCII digits only (`str.isdigit` and `int` also take "²" and "١"); up to 20 of them, so
# a K or N too large is told its range rather than the form.
_FORM = re.compile(r"(auto|[0-9]{1,20})/([0-9]{1,20})")
_INDEX = re.compile(r"[0-9]{1,20}")


class BatchBusy(JudgeError):
    """Another `--batch-api` batch holds this batch's state folder."""

    code = "batch_busy"
    exit_code = EXIT_FAILED


@dataclass(frozen=True, slots=True)
class Shard:
    index: int  # K, 0 <= K < N
    count: int  # N

    @property
    def folder(self) -> str:
        """The shard's state folder under `ROOT/.judge-batch/`."""
        return f"shard-{self.index}-of-{self.count}"

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, relative: str) -> bool:
        """Whether the session at `relative` (its path relative to ROOT) is in this shard."""
        return shard_of(relative, self.count) == self.index


def shard_of(relative: str, count: int) -> int:
    """The shard (0..count-1) of the session whose path relative to ROOT is `relative`."""
    posix = relative.replace(os.sep, "/") if os.sep != "/" else relative
    digest = hashlib.sha256(os.fsencode(posix)).digest()
    return int.from_bytes(digest, "big") % count


def parse_shard(text: str, env: Mapping[str, str] | None = None) -> Shard:
    """`K/N` or `auto/N` (K from `JOB_COMPLETION_INDEX` or `SLURM_ARRAY_TASK_ID`); a
    `UsageError` naming the fix otherwise."""
    env = os.environ if env is None else env
    match = _FORM.fullmatch(text.strip())
    if match is None:
        raise UsageError(
            f"--shard {text!r}: give K/N (K from 0 to N-1, e.g. 0/4) or auto/N (K from "
            f"{' or '.join(SHARD_ENV)})"
        )
    count = int(match.group(2))
    if not 1 <= count <= MAX_SHARDS:
        raise UsageError(f"--shard {text}: N must be from 1 to {MAX_SHARDS:,}")
    if match.group(1) != "auto":
        index, where = int(match.group(1)), f"--shard {text}"
    else:
        name = next((n for n in SHARD_ENV if env.get(n, "").strip()), None)
        if name is None:
            raise UsageError(
                f"--shard {text}: neither {' nor '.join(SHARD_ENV)} is set; run it as a "
                "Kubernetes Indexed Job or a Slurm array, or give K/N"
            )
        value = env[name].strip()
        if _INDEX.fullmatch(value) is None:
            raise UsageError(f"--shard {text}: {name}={value[:40]!r} is not a shard number")
        index, where = int(value), f"{name}={value} (--shard {text})"
    if index >= count:
        raise UsageError(
            f"{where}: K must be from 0 to {count - 1}; with Slurm start the array "
            f"as --array=0-{count - 1}"
        )
    return Shard(index, count)


def _describe_holder(fd: int) -> str:
    try:
        held = os.pread(fd, 200, 0).decode("ascii", "replace").strip()
    except OSError:
        held = ""
    return f" (process {held})" if held.isdigit() else ""


@contextlib.contextmanager
def held(folder: Path, *, shared: bool = False, what: str = "this batch") -> Iterator[None]:
    """Hold `folder/batch.lock` (exclusive, or `shared`) without waiting, or raise
    `BatchBusy` naming who holds it. The lock file is opened without following a link and
    must be a regular file of one link; an exclusive holder writes its process id in it."""
    path = folder / LOCK_FILE
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        why = "it is a symbolic link" if exc.errno == errno.ELOOP else exc.strerror or str(exc)
        raise UsageError(
            f"cannot open the batch lock {path}: {why}; remove it and run again"
        ) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
            raise UsageError(
                f"cannot use the batch lock {path}: it is not a regular file of one link; "
                "remove it and run again"
            )
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BatchBusy(
                f"another `judge batch --batch-api` is running on these sessions: it holds "
                f"{path}{_describe_holder(fd)}; {what} did not start. Wait for it to end, "
                "or split ROOT among processes with --shard K/N"
            ) from None
        if not shared:
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the flock


__all__ = ["LOCK_FILE", "SHARD_ENV", "BatchBusy", "Shard", "held", "parse_shard", "shard_of"]
