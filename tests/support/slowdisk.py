"""`judge` as a subprocess on a slow disk, for the kill tests.

    python tests/support/slowdisk.py SECONDS run SESSION [options]

Runs the `judge` command line exactly as `python -m harness` does, except that every
write to a file opened through `open()` / `os.fdopen()` / `Path.open()` lands in two
halves with SECONDS of sleep in between, as a slow or busy disk would. A SIGKILL sent
at a random moment then has a real chance of landing in the middle of writing
judge.json, which is what the atomic writer must survive.
"""

from __future__ import annotations

import builtins
import io
import sys
import time
from typing import Any


class _SlowFile:
    def __init__(self, inner: Any, pause: float) -> None:
        self._inner = inner
        self._pause = pause

    def write(self, data: Any) -> int:
        half = len(data) // 2
        if half:
            self._inner.write(data[:half])
            self._inner.flush()
            time.sleep(self._pause)
        self._inner.write(data[half:])
        return len(data)

    def __enter__(self) -> _SlowFile:
        self._inner.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._inner.__exit__(*exc)

    def __iter__(self) -> Any:
        return iter(self._inner)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def slow_writes(pause: float) -> None:
    real_open = io.open

    def slow_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        handle = real_open(file, mode, *args, **kwargs)
        if any(flag in mode for flag in "wax+"):
            return _SlowFile(handle, pause)
        return handle

    io.open = slow_open  # type: ignore[assignment]
    builtins.open = slow_open


def main() -> None:
    pause = float(sys.argv[1])
    slow_writes(pause)
    from harness.cli.main import cli

    cli(args=sys.argv[2:], prog_name="judge")


if __name__ == "__main__":
    main()
