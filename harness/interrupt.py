"""Ctrl-C and SIGTERM: a receipt and an exit code, never a traceback.

`install()` (called first thing by `python -m harness` and by the `judge` entry point)
makes SIGINT and SIGTERM raise `Interrupted` in the main thread. It is a BaseException,
so neither click (which turns KeyboardInterrupt into "Aborted!") nor any `except
Exception` swallows it. A run catches it, records `interrupted` in run.json atomically and
returns; the command line prints the receipt and exits 130 (SIGINT) or 143 (SIGTERM).
A second signal while that cleanup runs is remembered, not raised: the cleanup finishes.

A handler runs wherever the main thread is, and some code cannot raise: a weakref's
callback (the import system's lock of a module, dropped as an import ends) or a
`__del__`. Python reports an exception there as "ignored" and goes on, so a Ctrl-C that
landed there would be lost and the run would go on waiting for the API. `install()` also
takes such an `Interrupted` from `sys.unraisablehook` and signals the main thread again,
so it is raised where the main thread next runs Python code that can raise.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
from collections.abc import Iterator
from types import FrameType
from typing import Any

EXIT_SIGINT = 130
EXIT_SIGTERM = 143
_NAMES = {signal.SIGINT: "SIGINT", signal.SIGTERM: "SIGTERM"}


class Interrupted(BaseException):
    """The process was asked to stop (SIGINT or SIGTERM)."""

    def __init__(self, signum: int = signal.SIGINT) -> None:
        self.signum = signum
        self.name = _NAMES.get(signal.Signals(signum), f"signal {signum}")
        super().__init__(f"interrupted by {self.name}")

    @property
    def exit_code(self) -> int:
        return EXIT_SIGTERM if self.signum == signal.SIGTERM else EXIT_SIGINT


_raised = threading.Event()


_held: list[int] = []  # signals that arrived inside `deferred()`, main thread only
_depth = 0


def _handler(signum: int, frame: FrameType | None) -> None:
    if _raised.is_set():
        return  # already stopping: let the cleanup (run.json, the receipt) finish
    if _depth:
        _held.append(signum)  # raised when the bookkeeping in progress is done
        return
    if _in_hook:  # raising here would be lost as well: delivered again after the hook
        _again(signum)
        return
    _raised.set()
    raise Interrupted(signum)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Bookkeeping that must not stop half-way (main thread): a signal arriving inside is
    raised as `Interrupted` when the block ends, not in the middle of it."""
    global _depth
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if not _depth and _held and not _raised.is_set():
            signum = _held[0]
            _held.clear()
            _raised.set()
            raise Interrupted(signum)


def requested() -> bool:
    """Has a SIGINT or SIGTERM been raised (any thread may ask: a wait on another process
    looks at it so that a signal ends the wait at once)."""
    return _raised.is_set()


def install() -> None:
    """Route SIGINT and SIGTERM to `Interrupted` (main thread only; else a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _handler)
    if sys.unraisablehook is not _unraisable:
        global _next_hook
        _next_hook = sys.unraisablehook
        sys.unraisablehook = _unraisable


_next_hook: Any = sys.__unraisablehook__
_in_hook = False  # the main thread is in `_unraisable`: a handler there could not raise


def _unraisable(unraisable: Any) -> None:
    """An `Interrupted` raised where Python cannot raise (see the module) is not printed as
    "ignored" but signalled to the main thread again, once this hook has returned; anything
    else goes to the hook that was there before."""
    global _in_hook
    exc = unraisable.exc_value
    if not isinstance(exc, Interrupted):
        _next_hook(unraisable)
        return
    _in_hook = True
    try:
        _raised.clear()  # it was not raised after all
        _again(exc.signum)
    finally:
        _in_hook = False


def _again(signum: int) -> None:
    main = threading.main_thread().ident
    if main is not None:
        threading.Thread(
            target=_send, args=(main, signum), name="judge-signal", daemon=True
        ).start()


def _send(main: int, signum: int) -> None:
    """Signal the main thread once it is out of the hook. It holds the GIL from there to
    its return (no call in between lets this thread run), so the signal lands after."""
    while _in_hook:
        time.sleep(0.001)
    signal.pthread_kill(main, signum)


def within(exc: BaseException) -> Interrupted | None:
    """The interrupt an exception stands for, if any: a signal that landed while Python
    was creating a class (an import) comes out as a RuntimeError "Error calling
    __set_name__ ..." whose cause is our `Interrupted`."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, Interrupted | KeyboardInterrupt):
            return as_interrupted(current)
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def as_interrupted(exc: BaseException) -> Interrupted:
    """A KeyboardInterrupt (a Ctrl-C before `install` ran) as an `Interrupted`."""
    return exc if isinstance(exc, Interrupted) else Interrupted(signal.SIGINT)


__all__ = [
    "EXIT_SIGINT",
    "EXIT_SIGTERM",
    "Interrupted",
    "as_interrupted",
    "deferred",
    "install",
    "requested",
    "stopped",
    "within",
]


def _is_run(argv: list[str]) -> bool:
    command = next((a for a in argv if not a.startswith("-")), None)
    return command == "run"


def stopped(exc: BaseException, argv: list[str]) -> int:
    """Say that the process stopped before (or outside) a run, and return its exit code:
    `judge run` still prints its one-line receipt."""
    import json
    import sys

    it = as_interrupted(exc)
    if _is_run(argv):
        note = f"{it} before the run started; nothing was written"
        sys.stdout.write(json.dumps({"wroteJudge": False, "upToDate": False, "note": note}) + "\n")
    sys.stderr.write(f"judge: {it}\n")
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    return it.exit_code
