"""`judge batch` and `judge cite` in a real terminal: tmux at 60, 80 and 120 columns.

Each command runs in a detached tmux pane of the given size (a private server on its own socket),
its stdout to a file, and writes a marker once done; the test polls the pane for the
marker, then reads the whole pane with wrapped lines joined (`capture-pane -J`), so a line
the terminal had to wrap shows as one line wider than the pane.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from rich.cells import cell_len

from tests.support.paths import FIXTURES, REPO

SESSIONS = ["clean", "dangling-citations", "wrong-types", "empty-findings", "no-answer", "large"]
MARK = "JUDGE-TERMINAL-TEST-DONE"
TMUX = shutil.which("tmux") or "tmux"  # apt-get install tmux (.ci/run installs it)


def _tmux(socket: Path, *args: str) -> str:
    done = subprocess.run(
        [TMUX, "-S", str(socket), "-f", "/dev/null", *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout


def _in_terminal(tmp_path: Path, script: str, width: int, timeout: float = 240) -> list[str]:
    """The pane's lines (wrapped lines joined, trailing blanks cut) once `script` is done."""
    run = tmp_path / f"run-{width}.sh"
    run.write_text(f"#!/bin/sh\n{script}\necho {MARK} $?\n")
    run.chmod(0o755)
    # A server of its own, on a socket of its own (`-S`: like `-L NAME`, but the socket
    # file lives in tmp_path and goes with it, where a killed server leaves it behind).
    socket = tmp_path / f"tmux-{uuid.uuid4().hex[:8]}.sock"
    env = f"env -u COLUMNS -u LINES PYTHONPATH={shlex.quote(str(REPO))} TERM=xterm-256color"
    try:
        _tmux(socket, "new-session", "-d", "-x", str(width), "-y", "50", f"{env} {run}")
        _tmux(socket, "set-option", "-g", "remain-on-exit", "on")
        _tmux(socket, "set-option", "-g", "history-limit", "10000")
        deadline = time.monotonic() + timeout
        while True:
            pane = _tmux(socket, "capture-pane", "-p", "-J", "-S", "-")
            if re.search(rf"^{MARK} \d+", pane, re.M):
                break
            if time.monotonic() > deadline:
                pytest.fail(f"not done within {timeout} s at {width} columns:\n{pane}")
            time.sleep(0.5)
        assert re.search(rf"^{MARK} 0$", pane, re.M), pane
        size = _tmux(socket, "display-message", "-p", "#{pane_width}").strip()
        assert size == str(width)  # the pane really is that wide
    finally:
        subprocess.run([TMUX, "-S", str(socket), "kill-server"], capture_output=True, timeout=30)
        socket.unlink(missing_ok=True)
    return [line.rstrip() for line in pane.splitlines() if MARK not in line]


@pytest.mark.parametrize("width", [60, 80, 120])
def test_batch_and_cite_fit_a_real_terminal(tmp_path: Path, width: int) -> None:
    root = tmp_path / "root"
    for name in SESSIONS:
        shutil.copytree(FIXTURES / name, root / name, symlinks=True)
    shutil.copytree(FIXTURES / "quote-not-in-source", tmp_path / "cited")
    python = shlex.quote(sys.executable)
    script = "\n".join(
        [
            f"cd {shlex.quote(str(tmp_path))}",
            f"{python} -m harness batch root --replay-dir {shlex.quote(str(FIXTURES / 'replays'))}"
            " --fetch stored > batch.jsonl || exit $?",
            f"{python} -m harness cite cited --offline || exit $?",
        ]
    )
    lines = _in_terminal(tmp_path, script, width)
    text = "\n".join(lines)
    too_wide = [line for line in lines if cell_len(line) > width]
    assert not too_wide, f"{len(too_wide)} line(s) wider than {width} columns:\n{text}"
    # The progress line: done/total and the elapsed time, at every width.
    bar = [line for line in lines if re.search(r"\b6/6 (sessions )?done\b", line)]
    assert bar and all(re.search(r"\b\d+:\d\d\b", line) for line in bar), text
    # A replayed request is not a paid one.
    summary = " ".join(text.split())
    assert re.search(r"0 requests paid, [\d,]+ replayed \(not sent\)", summary), text
    # The table: each session's name whole, on one line, beside its outcome.
    for name in SESSIONS:
        rows = [line for line in lines if re.match(rf"[│ ]*{re.escape(name)}\s+[│ ]*\S", line)]
        assert len(rows) == 1, (name, text)
    # judge cite: one line starts each claim's row.
    for claim in ("sq1-c1", "sq1-c3", "sq2-c1", "sq3-c3"):
        assert sum(line.startswith(f"  {claim} ") for line in lines) == 1, (claim, text)
    assert "96.9% of its words" in summary
    assert len((tmp_path / "batch.jsonl").read_text().splitlines()) == len(SESSIONS)
