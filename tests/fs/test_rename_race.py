"""A session folder swapped with a symbolic link while the model Reads (issue 22 §6).

``renameat2(RENAME_EXCHANGE)`` swaps the folder and a link atomically, over and over,
while Read runs: ``os.path.realpath`` then sees a link whose ``readlink`` finds a folder
and raises ``EINVAL``, which ended ``judge run`` with "internal error: OSError: [Errno
22]". Every such race must end in a refused read (a ToolError), never a fault, and never
show the file the link leads to.
"""

from __future__ import annotations

import ctypes
import errno
import os
import sys
import threading
from pathlib import Path

import pytest

from harness.agent.read import read_tool
from harness.errors import ToolError
from harness.fs import confined
from harness.fs.confined import Refused, SessionReader, real_path

AT_FDCWD = -100
RENAME_EXCHANGE = 2


def _exchange(libc: ctypes.CDLL, a: Path, b: Path) -> None:
    if libc.renameat2(AT_FDCWD, bytes(a), AT_FDCWD, bytes(b), RENAME_EXCHANGE) != 0:
        raise OSError(ctypes.get_errno(), "renameat2")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux's")
def test_reads_while_the_folder_is_exchanged_with_a_link_are_refused_or_read(
    tmp_path: Path,
) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    session = tmp_path / "sess"
    (session / "findings").mkdir(parents=True)
    (session / "findings" / "sq1.json").write_text('{"id": "sq1"}\n')
    outside = tmp_path / "outside"
    (outside / "findings").mkdir(parents=True)
    (outside / "findings" / "sq1.json").write_text("OUTSIDE-SECRET\n")
    link = tmp_path / "link"
    link.symlink_to(outside)
    reader = SessionReader(session)
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            _exchange(libc, session, link)

    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    faults: list[str] = []
    refused = read = 0
    try:
        for _ in range(1500):
            for path in ("findings/sq1.json", "findings", "."):
                try:
                    out = read_tool(session, path, reader=reader)
                except ToolError:
                    refused += 1
                    continue
                except Exception as exc:  # the bug: OSError from realpath
                    faults.append(f"{type(exc).__name__}: {exc}")
                    continue
                read += 1
                assert "OUTSIDE-SECRET" not in out
    finally:
        stop.set()
        swapper.join()
        reader.close()
    assert not faults, faults[:3]
    assert read and refused  # both happened: the race was really run


def test_realpath_failing_mid_swap_is_a_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The seam: realpath raising EINVAL every time is a Refused (and Read's refusal)."""

    def racing(path: object) -> str:
        raise OSError(errno.EINVAL, "Invalid argument", str(path))

    monkeypatch.setattr(confined.os.path, "realpath", racing)
    monkeypatch.setattr(confined, "_opened_path", lambda path: None)  # no /proc answer
    with pytest.raises(Refused) as caught:
        real_path("/tmp/sess")
    assert "kept changing while its path was resolved" in caught.value.reason
    with pytest.raises(ToolError) as tool:
        read_tool("/tmp/sess", "findings/sq1.json")
    assert tool.value.message.startswith("refused: the path kept changing")


def test_realpath_failing_once_is_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.path.realpath
    calls = {"n": 0}

    def once(path: str) -> str:
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError(errno.EINVAL, "Invalid argument", path)
        return real(path)

    monkeypatch.setattr(confined.os.path, "realpath", once)
    monkeypatch.setattr(confined, "_opened_path", lambda path: None)  # no /proc answer
    assert real_path("/tmp") == real("/tmp")
    assert calls["n"] == 2
