"""Removing trees that `shutil.rmtree` cannot: the hostile tests make folders 1,200 deep.

Python 3.11's `shutil.rmtree` recurses once per level, so a 1,200-deep tree raises
RecursionError, and pytest's own clean-up of old temporary folders (which uses it) would
then fail a later run. This walks down by file descriptor and back up, without recursion.
"""

from __future__ import annotations

import os
from pathlib import Path

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove_tree(path: Path) -> None:
    """Delete `path` and everything under it (links are removed, never followed)."""
    try:
        parent = os.open(path.parent, _DIR)
    except FileNotFoundError:
        return
    stack: list[tuple[int, str, int | None]] = [(parent, path.name, None)]
    try:
        while stack:
            above, name, fd = stack[-1]
            if fd is None:
                try:
                    fd = os.open(name, _DIR, dir_fd=above)
                except NotADirectoryError:
                    os.unlink(name, dir_fd=above)
                    stack.pop()
                    continue
                except FileNotFoundError:
                    stack.pop()
                    continue
                stack[-1] = (above, name, fd)
            sub = None
            with os.scandir(fd) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        sub = entry.name
                        break
                    os.unlink(entry.name, dir_fd=fd)
            if sub is not None:
                stack.append((fd, sub, None))
                continue
            os.close(fd)
            os.rmdir(name, dir_fd=above)
            stack.pop()
    finally:
        for _, _, fd in stack:
            if fd is not None:
                os.close(fd)
        os.close(parent)
