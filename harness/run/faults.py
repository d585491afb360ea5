"""A fault of the disk ends the run with its receipt, never an internal error."""

from __future__ import annotations

import errno

DISK_FAULTS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exhausted",
    errno.EIO: "the disk reported an I/O error",
    errno.EROFS: "the file system is read-only",
}


def is_disk_fault(exc: OSError) -> bool:
    return exc.errno in DISK_FAULTS


def fault_words(exc: OSError) -> str:
    """`the disk is full (No space left on device) while writing PATH`."""
    what = DISK_FAULTS.get(exc.errno or 0, "it could not be written")
    where = f" while writing {exc.filename}" if exc.filename else ""
    return f"{what} ({exc.strerror or exc}){where}"


__all__ = ["DISK_FAULTS", "fault_words", "is_disk_fault"]
