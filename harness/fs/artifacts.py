"""Every file a run writes, written relative to directory descriptors opened once.

:class:`ArtifactDir` opens the session folder and its artifact folder ``.judge/`` once,
each with ``O_DIRECTORY|O_NOFOLLOW``; from then on every artifact (run.json,
citations.json, previous-judge.json, the lock, judge.json's temp file) is created with
``openat(artifact_fd, tmp, O_CREAT|O_EXCL|O_NOFOLLOW)`` and renamed into place with
``renameat``. A ``.judge`` swapped for a symlink after the start, or links planted among
the artifacts, cannot redirect a write: the descriptors still name the folders that were
checked, and a rename replaces an entry rather than writing through it.

One mode rule for every file the run writes: ``0o666 & ~umask`` (what any new file gets).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import io
import os
import secrets
import shutil
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from harness.errors import JudgeError, WriteError
from harness.fs.confined import kind_of_mode, kind_words
from harness.fs.names import ARTIFACT_DIR, LOCK_FILE

__all__ = [
    "ARTIFACT_DIR",
    "FILE_MODE",
    "ArtifactDir",
    "LockTimeout",
    "NotWritable",
    "atomic_write",
]

# Handed to open(2); the kernel applies the umask, as for any file a program creates.
FILE_MODE = 0o666
# previous-judge.json is a copy of judge.json; a larger file is not copied.
COPY_CAP = 16 * 1024 * 1024
_COPY_READ = 1 << 16  # bytes a read asks for past the size the file had when opened

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


class LockTimeout(JudgeError):
    """Another run holds the session's lock for longer than we may wait."""

    code = "lock_timeout"


class NotWritable(WriteError):
    """The artifact folder cannot be opened or made; the message names the path and fix."""

    code = "not_writable"


def _kind_of(dir_fd: int, name: str) -> str | None:
    try:
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except OSError:
        return None
    return kind_words(kind_of_mode(mode))


def _move_aside(dir_fd: int, name: str, shown: str) -> str:
    """Rename ``name`` in ``dir_fd`` out of the way (a rename: the entry itself, never what
    a link names); ``shown``, for the message."""
    os.rename(name, f"{name}.not-ours-{secrets.token_hex(4)}", src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    return shown


def _temp(dir_fd: int, name: str) -> tuple[int, str]:
    """A new temp file in the folder ``dir_fd``: O_EXCL, never a planted entry."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(100):
        tmp = f".{name}.{secrets.token_hex(6)}.tmp"
        try:
            return os.open(tmp, flags, FILE_MODE, dir_fd=dir_fd), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temp file name", name)


def _sync_dir(fd: int) -> None:
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise  # EIO: the rename may not be on the disk; the caller must know


def atomic_write(
    dir_fd: int, name: str, content: bytes | BinaryIO, *, dst_fd: int | None = None
) -> None:
    """THE atomic, durable write of every artifact: a new temp file in ``dir_fd``
    (O_EXCL|O_NOFOLLOW), written, fsync'd, renamed to ``name`` in ``dst_fd`` (default: the
    same folder), then the folder fsync'd. Any OSError (ENOSPC, EIO, …) propagates, and
    the temp file is removed: the entry at ``name`` is either the old file or the new one,
    whole. Tests fake disk faults here (the write seam)."""
    target = dir_fd if dst_fd is None else dst_fd
    source = io.BytesIO(content) if isinstance(content, bytes) else content
    fd, tmp = _temp(dir_fd, name)
    try:
        with os.fdopen(fd, "wb") as handle:
            shutil.copyfileobj(source, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    _sync_dir(target)


class ArtifactDir:
    """The session folder and its ``.judge/`` artifact folder, each opened once."""

    def __init__(self, session: Path | str, name: str = ARTIFACT_DIR) -> None:
        self._session_fd: int | None = None
        self._fd: int | None = None
        self.session = Path(os.path.realpath(session))
        self.path = self.session / name
        try:
            self._session_fd = os.open(self.session, _DIR_FLAGS)
        except OSError as exc:
            raise NotWritable(
                f"cannot open the session folder {self.session} ({exc.strerror or exc})",
                path=str(self.session),
            ) from None
        try:
            self._fd = self._open_artifact_folder(name)
        except BaseException:
            self.close()
            raise

    def _open_artifact_folder(self, name: str) -> int:
        sfd = self.session_fd
        try:
            os.mkdir(name, 0o777, dir_fd=sfd)
        except FileExistsError:
            pass
        except OSError as exc:
            raise NotWritable(
                f"cannot write in the session folder {self.session} ({exc.strerror or exc}); "
                "make it writable to let the judge write judge.json",
                path=str(self.path),
            ) from None
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=sfd)
        except OSError as exc:
            kind = _kind_of(sfd, name)
            if kind == "a symbolic link" or exc.errno == errno.ELOOP:
                reason = (
                    f"{self.path} is a symbolic link; the judge writes its artifacts only "
                    "inside the session folder and will not follow it (remove the link)"
                )
            elif kind is not None and kind != "a folder":
                reason = (
                    f"{self.path} is {kind}, not a folder; the judge keeps its artifacts in a "
                    f"folder of that name (remove {self.path} and run again)"
                )
            else:
                reason = (
                    f"cannot open the artifact folder {self.path} ({exc.strerror or exc}); "
                    "check its permissions"
                )
            raise NotWritable(reason, path=str(self.path)) from None

    # -- lifetime ---------------------------------------------------------------

    @property
    def fd(self) -> int:
        if self._fd is None:
            raise ValueError("the artifact folder is closed")
        return self._fd

    @property
    def session_fd(self) -> int:
        if self._session_fd is None:
            raise ValueError("the artifact folder is closed")
        return self._session_fd

    def close(self) -> None:
        for attr in ("_fd", "_session_fd"):
            fd = getattr(self, attr)
            if fd is not None:
                os.close(fd)
                setattr(self, attr, None)

    def __enter__(self) -> ArtifactDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    def __truediv__(self, name: str) -> Path:
        """``artifacts / "run.json"``: the path, for messages and records."""
        return self.path / name

    # -- writing ----------------------------------------------------------------

    def _write_then_rename(self, name: str, content: bytes | BinaryIO, dst_fd: int) -> None:
        atomic_write(self.fd, name, content, dst_fd=dst_fd)

    def write(self, name: str, content: bytes | BinaryIO) -> None:
        """Replace the artifact ``name`` atomically (temp file, then rename). OSError on
        failure; nothing planted at ``name`` (a link included) is written through. Durable:
        once it returns, the new content and its name are on the disk. A folder planted at
        ``name`` (a rename cannot replace it) is moved aside first, as the samples' are."""
        if _kind_of(self.fd, name) == "a folder":
            _move_aside(self.fd, name, name)
        self._write_then_rename(name, content, self.fd)

    def publish(self, name: str, content: bytes) -> None:
        """Replace ``<session>/name`` atomically and durably: the temp file is made in the
        artifact folder (a killed run leaves its litter there), renamed into the session
        folder by descriptor."""
        self._write_then_rename(name, content, self.session_fd)

    def write_samples(self, folder: str, files: dict[str, bytes]) -> list[str]:
        """Replace the files of the artifact subfolder ``folder`` (``samples``) by ``files``,
        each written atomically and durably; its other ``.json`` files are removed. The
        subfolder is opened by descriptor without following a link. What the harness never
        writes there — a link or a file in place of the subfolder; a link, a folder or a
        special file at one of its ``.json`` names — is moved aside (renamed
        ``<name>.not-ours-<hex>``: never followed, written through or deleted); the names
        moved are returned, for the run to say."""
        moved: list[str] = []
        if _kind_of(self.fd, folder) not in (None, "a folder"):
            moved.append(_move_aside(self.fd, folder, folder))
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, 0o777, dir_fd=self.fd)
        sub = os.open(folder, _DIR_FLAGS, dir_fd=self.fd)
        try:
            for old in os.listdir(sub):
                if not old.endswith(".json"):
                    continue
                if _kind_of(sub, old) not in (None, "a regular file"):
                    moved.append(_move_aside(sub, old, f"{folder}/{old}"))
                elif old not in files:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(old, dir_fd=sub)
            for name, content in files.items():
                atomic_write(sub, name, content)
        finally:
            os.close(sub)
        return moved

    def copy_from_session(self, name: str, artifact: str) -> bool:
        """Copy the session's own ``name`` to the artifact ``artifact``, durably; False if
        it is not copied by rule (absent, a link, a hard link, a special file, too large).

        Only a regular file with one link, opened without following a link: a link
        planted as ``name`` would otherwise copy whatever it names into the artifacts.
        A fault of the disk (EIO reading it, ENOSPC or EIO writing the copy) raises
        OSError: the caller must not replace ``name`` without its copy.
        """
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            fd = os.open(name, flags, dir_fd=self.session_fd)
        except OSError as exc:
            if exc.errno in (errno.EIO, errno.ENOMEM):
                raise
            return False
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or st.st_size > COPY_CAP:
                return False
            # Asked for what it holds and a byte more (a file that grew is seen), then in
            # small reads: os.read allocates all it is asked for, and asking for the cap
            # made each copy take 16 MiB twice (a batch's peak memory, sessions judged before).
            chunks: list[bytes] = []
            got, want = 0, st.st_size + 1
            while got <= COPY_CAP:
                chunk = os.read(fd, min(want, COPY_CAP + 1 - got))
                if not chunk:
                    break
                chunks.append(chunk)
                got, want = got + len(chunk), _COPY_READ
            if got > COPY_CAP:
                return False
            data = b"".join(chunks)
        finally:
            os.close(fd)
        self.write(artifact, data)
        return True

    # -- the lock ---------------------------------------------------------------

    @contextlib.contextmanager
    def lock(
        self, timeout: float, name: str = LOCK_FILE, raise_what: str = "--lock-timeout"
    ) -> Iterator[None]:
        """Hold an exclusive flock on the artifact ``name``, waiting at most ``timeout`` s
        (``raise_what``: the option that set it, named in the error).

        The lock file is opened with ``O_NOFOLLOW`` relative to the artifact folder and
        without truncation; one that is not a regular file of one link (a hard link
        planted there may be any file) is refused before a byte is written. Only then is
        it emptied and given this process's id.
        """
        path = self.path / name
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            fd = os.open(name, flags, FILE_MODE, dir_fd=self.fd)
        except OSError as exc:
            why = "it is a symbolic link" if exc.errno == errno.ELOOP else exc.strerror or str(exc)
            raise WriteError(
                f"cannot open the run lock {path}: {why}; remove it and run again", path=str(path)
            ) from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise WriteError(
                    f"cannot use the run lock {path}: it is "
                    f"{kind_words(kind_of_mode(st.st_mode))}, not a regular file; "
                    "remove it and run again",
                    path=str(path),
                )
            if st.st_nlink != 1:
                raise WriteError(
                    f"cannot use the run lock {path}: it has {st.st_nlink} hard links, so it "
                    "may be a file outside the session; remove it and run again",
                    path=str(path),
                )
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise LockTimeout(
                            f"another judge run holds {path} (waited {timeout:g} s); "
                            f"wait for it to finish or raise {raise_what}",
                            path=str(path),
                        ) from None
                    time.sleep(0.05)
            try:
                with contextlib.suppress(OSError):  # the pid is for people; a full disk
                    os.ftruncate(fd, 0)  # must not keep the run from its receipt
                    os.write(fd, f"{os.getpid()}\n".encode())
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
