"""Opening input files without ever blocking on them.

`open()` on a FIFO waits for a writer, for ever; a device such as /dev/zero never ends.
A session folder is the pipeline's leftovers, so the loader, the judge.json check and
the session digest open files through `open_regular`: non-blocking, and only regular
files (a directory raises IsADirectoryError as before, anything else NotRegularFile).
"""

from __future__ import annotations

import errno
import io
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO


class NotRegularFile(OSError):
    """A FIFO, socket or device where a file was expected."""


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words for an error message."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISLNK(mode):
        return "a symlink"
    return "a special file"


def open_regular(path: Path | str, *, follow_symlinks: bool = True) -> BinaryIO:
    """Open `path` for binary reading if it is a regular file.

    With `follow_symlinks=False` a symlink as the last component is refused
    (NotRegularFile) instead of followed: the run reads the session's own judge.json
    this way, so a link planted there cannot show it a file from outside the session.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags if follow_symlinks else flags | os.O_NOFOLLOW)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_symlinks:
            raise NotRegularFile(
                errno.ELOOP, "is a symbolic link, which is not followed", str(path)
            ) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
        if not stat.S_ISREG(mode):
            raise NotRegularFile(errno.EINVAL, f"is {kind_of(mode)}, not a regular file", str(path))
        # O_NONBLOCK changes nothing for a regular file's reads.
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def replace_atomically(path: Path, content: bytes | BinaryIO) -> None:
    """Write an artifact via a new temp file beside it, then rename over `path`.

    mkstemp creates the temp file (O_EXCL), and the rename replaces whatever entry is at
    `path`: nothing planted in the artifact folder, a link included, is written through.
    """
    source = io.BytesIO(content) if isinstance(content, bytes) else content
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            shutil.copyfileobj(source, handle)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
