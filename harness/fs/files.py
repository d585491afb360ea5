"""Opening input files without ever blocking on them.

`open()` on a FIFO waits for a writer, for ever; a device such as /dev/zero never ends.
The files an operator names (`judge validate FILE`, a replay) are opened through
`open_regular`: non-blocking, and only regular files (a directory raises
IsADirectoryError as before, anything else NotRegularFile). The session and its
artifacts are never opened here: `harness.fs.confined` reads them.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from harness.fs.confined import kind_of_mode, kind_words


class NotRegularFile(OSError):
    """A FIFO, socket or device where a file was expected."""


def open_regular(path: Path | str) -> BinaryIO:
    """Open `path` for binary reading if it is a regular file (an operator's file, such as
    `judge validate FILE` or a replay: the session and its artifacts are read through
    `harness.fs.confined` only)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
        if not stat.S_ISREG(mode):
            raise NotRegularFile(
                errno.EINVAL, f"is {kind_words(kind_of_mode(mode))}, not a regular file", str(path)
            )
        # O_NONBLOCK changes nothing for a regular file's reads.
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def replace_atomically(path: Path, content: bytes | BinaryIO) -> None:
    """Write an artifact via a new temp file beside it, then rename over `path`, durably
    (:func:`harness.fs.artifacts.atomic_write`: write, fsync, rename, fsync the folder).

    The temp file is created O_EXCL in the folder opened without following a link, and
    the rename replaces whatever entry is at `path`: nothing planted there, a link
    included, is written through. OSError (ENOSPC, EIO, …) propagates.
    """
    from harness.fs.artifacts import atomic_write

    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        atomic_write(fd, path.name, content)
    finally:
        os.close(fd)
