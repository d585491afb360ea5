"""How wide a command's text on stderr may be: a terminal's width, or wide for a log file."""

from __future__ import annotations

import os
import shutil
import sys


def stderr_width() -> int | None:
    """`COLUMNS` when it is set to a width; else the terminal's width when stderr is one;
    else None: a pipe or a log file, which is read wide (nothing is folded)."""
    value = os.environ.get("COLUMNS", "")
    if value.isdigit() and int(value) > 0:
        return int(value)
    try:
        if not sys.stderr.isatty():
            return None
    except (AttributeError, ValueError):  # closed, or no file behind it
        return None
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns or None
    except (AttributeError, OSError, ValueError):
        return shutil.get_terminal_size().columns


__all__ = ["stderr_width"]
