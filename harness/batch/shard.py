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

**One N at a time.** Shards of different N would share sessions (shard 0/1 holds every
session, shard 0/2 half of them) and wait on each other's session locks as two batches on
the same sessions would. So a shard batch also holds `ROOT/.judge-batch/shards.lock`
shared, which holds the K/N and process id of the first shard batch that took it: a shard
batch whose N differs from the one there is refused at once (`UsageError`, exit 2),
naming the running batch and the fix (the same N, or wait for it to end). The first
shard batch takes the file exclusively to write its K/N, then shares it; the N is read
back once it is shared, when no other batch can write it.
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


def _open_lock(path: Path) -> int:
    """The lock file at `path`, opened without following a link; a regular file of one
    link, or a `UsageError` naming the fix."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        why = "it is a symbolic link" if exc.errno == errno.ELOOP else exc.strerror or str(exc)
        raise UsageError(
            f"cannot open the batch lock {path}: {why}; remove it and run again"
        ) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
        os.close(fd)
        raise UsageError(
            f"cannot use the batch lock {path}: it is not a regular file of one link; "
            "remove it and run again"
        )
    return fd


@contextlib.contextmanager
def held(folder: Path, *, shared: bool = False, what: str = "this batch") -> Iterator[None]:
    """Hold `folder/batch.lock` (exclusive, or `shared`) without waiting, or raise
    `BatchBusy` naming who holds it. The lock file is opened without following a link and
    must be a regular file of one link; an exclusive holder writes its process id in it."""
    path = folder / LOCK_FILE
    fd = _open_lock(path)
    try:
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


SHARDS_FILE = "shards.lock"
_SAID = re.compile(r"([0-9]{1,20})/([0-9]{1,20}) ([0-9]{1,20})")


@contextlib.contextmanager
def one_count(folder: Path, shard: Shard) -> Iterator[None]:
    """Hold `folder/shards.lock` shared for as long as the shard batch runs, with every
    other shard batch of the same N; refuse at once one of another N (`UsageError`,
    naming the batch running and the fix), or `BatchBusy` when the first shard batch is
    writing its K/N at this very moment."""
    path = folder / SHARDS_FILE
    fd = _open_lock(path)
    try:
        try:  # the first shard batch: it says its K/N, then shares the file
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{shard.index}/{shard.count} {os.getpid()}".encode(), 0)
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                raise BatchBusy(
                    f"another `judge batch --batch-api --shard` is starting on these sessions "
                    f"(it holds {path}); shard {shard} did not start. Run it again in a moment"
                ) from None
        # Shared now: no batch can write it until every holder has let go.
        said = _SAID.fullmatch(os.pread(fd, 64, 0).decode("ascii", "replace").strip())
        if said is None or int(said.group(2)) != shard.count:
            other = (
                f"as --shard {said.group(1)}/{said.group(2)} (process {said.group(3)})"
                if said is not None
                else f"(it holds {path})"
            )
            count = said.group(2) if said is not None else "M"
            raise UsageError(
                f"another `judge batch --batch-api` is running on ROOT {other}: shards of "
                f"different N share sessions, and the two batches would wait on each "
                f"other's until neither judged them; shard {shard} did not start. Give every "
                f"shard of ROOT the same N (--shard K/{count}) or wait for that batch to end"
            )
        yield
    finally:
        os.close(fd)  # releases the flock


__all__ = [
    "LOCK_FILE",
    "SHARDS_FILE",
    "SHARD_ENV",
    "BatchBusy",
    "Shard",
    "held",
    "one_count",
    "parse_shard",
    "shard_of",
]
