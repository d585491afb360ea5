"""Issue 31 §5: outputs stay where they belong and say the same thing.

Every output path a command is told to write is refused inside a session (judge writes only
judge.json and .judge/ there); a labels file names a session by the one rule batch and
report use; a page's path on stdout is escaped like every other line; a `--json` command
stopped by a signal still prints its one JSON object.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cli.main import cli
from tests.support.paths import REPO
from tests.support.tried import count


def small_session(folder: Path) -> Path:
    (folder / "findings").mkdir(parents=True)
    finding = {"id": "sq1", "subQuestion": "q", "claims": [{"id": "c1", "text": "A claim."}]}
    (folder / "findings" / "sq1.json").write_text(json.dumps(finding), encoding="utf-8")
    (folder / "sources.json").write_text(json.dumps({"sources": []}), encoding="utf-8")
    return folder


def labels_file(path: Path, sessions: list[str]) -> Path:
    lines = [
        {"kind": "rating", "session": s, "rater": f"r{i}", "scores": {"completeness": 3}}
        for i, s in enumerate(sessions)
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("command", "target"),
    [
        (["agree", "{labels}", "--root", "{root}", "--html", "{root}/s1/judge.json"],
         "s1/judge.json"),
        (["agree", "{labels}", "--root", "{root}", "--html", "{root}/s1/findings/x.html"],
         "s1/findings/x.html"),
        (["report", "{root}", "-o", "{root}/s1/findings/sq9.json"], "s1/findings/sq9.json"),
        (["report", "{root}/s1", "-o", "{root}/s1/answer.md"], "s1/answer.md"),
        (["report", "{root}/s1", "-o", "{root}/s1/.judge/run.json"], "s1/.judge/run.json"),
    ],
)  # fmt: skip
def test_an_output_inside_a_session_is_refused_and_nothing_is_written(
    tmp_path: Path, command: list[str], target: str
) -> None:
    root = tmp_path / "root"
    session = small_session(root / "s1")
    (session / "judge.json").write_text('{"kept": true}', encoding="utf-8")
    (session / "answer.md").write_text("the answer\n", encoding="utf-8")
    labels = labels_file(tmp_path / "labels.jsonl", ["s1"])
    before = {p: p.read_bytes() for p in session.rglob("*") if p.is_file()}
    args = [a.format(root=root, labels=labels) for a in command]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert "is inside the session s1" in result.stderr
    after = {p: p.read_bytes() for p in session.rglob("*") if p.is_file()}
    assert after == before  # nothing replaced, nothing added
    assert not (root / target).exists() or (root / target) in before


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _socket(path: Path) -> None:
    import socket

    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    sock.close()  # the socket file stays


def _link(path: Path) -> None:
    path.with_name("target.html").write_text("kept", encoding="utf-8")
    path.symlink_to("target.html")  # as /dev/stdout is a link


@pytest.mark.parametrize("make", [_fifo, _socket, _link], ids=["fifo", "socket", "link"])
@pytest.mark.parametrize(
    "command",
    [
        ["agree", "{labels}", "--root", "{root}", "--html", "{out}"],
        ["report", "{root}", "-o", "{out}"],
        ["compare", "{root}", "{root}", "--html", "{out}"],
        ["batch", "{root}", "--results", "{out}.csv"],
        ["batch", "{root}", "--merge-results", "{out}.jsonl"],
    ],
    ids=["agree", "report", "compare", "batch-results", "merge-results"],
)
def test_an_output_that_is_not_a_regular_file_is_refused_not_replaced(
    tmp_path: Path, command: list[str], make: Any
) -> None:
    """Every output is written by a rename over its path: a FIFO, a socket, a device
    (/dev/full, as a user may name it) or a link (/dev/stdout) would be replaced by a
    regular file, not written to.
    Each command refuses it first, names the option and the fix, and leaves it as it was."""
    root = tmp_path / "root"
    small_session(root / "s1")
    labels = labels_file(tmp_path / "labels.jsonl", ["s1"])
    out = tmp_path / "out"
    args = [a.format(root=root, labels=labels, out=out) for a in command]
    special = Path(args[-1])
    make(special)
    kind = os.lstat(special).st_mode
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert f"{special} is a" in result.stderr and args[-2] in result.stderr
    if make is _link:
        assert "is a symbolic link (to " in result.stderr
        assert "name the file itself" in result.stderr
        assert special.with_name("target.html").read_text(encoding="utf-8") == "kept"
    else:
        assert "not a regular file" in result.stderr and "name a regular file" in result.stderr
    assert os.lstat(special).st_mode == kind  # still the FIFO, socket or link it was
    assert not (root / "s1" / "judge.json").exists()  # refused before anything was judged


def test_one_session_however_a_label_spells_it(tmp_path: Path) -> None:
    root = tmp_path / "root"
    small_session(root / "s1")
    outside = small_session(tmp_path / "elsewhere")
    (root / "linked").symlink_to(outside, target_is_directory=True)
    labels = labels_file(tmp_path / "labels.jsonl", ["s1", "./s1", "s1/", "s1//.", "linked"])
    result = CliRunner().invoke(cli, ["agree", str(labels), "--root", str(root), "--json"])
    document = json.loads(result.stdout)
    coverage = document["coverage"]
    assert coverage["labelledSessions"] == 2  # s1 once, and the link
    assert coverage["missing"] == ["linked"]  # a link out of ROOT is not followed


def test_the_page_path_on_stdout_is_escaped(tmp_path: Path) -> None:
    name = "s\x1b]52;c;aGk=\x07\x1b]0;title\x07"  # OSC 52 (clipboard) and a window title
    session = small_session(tmp_path / name)
    result = CliRunner().invoke(cli, ["report", str(session)])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "\\x1b]52" in result.stdout


def test_agree_json_with_a_missing_file_prints_one_error_object(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["agree", str(tmp_path / "nope.jsonl"), "--json"])
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["code"] == "usage"


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_json_command_stopped_by_a_signal_prints_one_json_object(
    tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    fifo = tmp_path / "labels.fifo"
    os.mkfifo(fifo)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "agree", str(fifo), "--root", str(tmp_path), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        # Opening the FIFO to write succeeds once judge has opened it to read: it is then
        # past its start-up (the signal handlers are in place) and waiting for a line.
        deadline = time.monotonic() + 60
        while True:
            try:
                writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline
                time.sleep(0.05)
        # One signal, one thread to receive it: the labels are read before NumPy's thread
        # pool exists (a signal delivered to one of its threads left this read blocked).
        assert len(os.listdir(f"/proc/{proc.pid}/task")) == 1
        proc.send_signal(sig)
        try:
            out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            # CPython runs a signal's handler between bytecodes. A signal landing after the
            # last check and before read() starts leaves the read blocked with the handler
            # pending, until a second signal interrupts it (1 run in 8 beside a CPU hog).
            # A person presses Ctrl-C again; so does this test. A second signal while the
            # first is being handled is ignored: still one object, still this exit code.
            proc.send_signal(sig)
            out, err = proc.communicate(timeout=60)
        os.close(writer)
    finally:
        proc.kill()
    assert proc.returncode == code, err
    document = json.loads(out)  # exactly one JSON object
    assert document["error"]["code"] == "interrupted"


# -- issue 31 §4: nothing crashes on a name or a path -------------------------------------


def test_a_session_named_with_250_bytes_gets_its_line_in_a_replayed_batch(tmp_path: Path) -> None:
    root = tmp_path / "root"
    small_session(root / ("q" * 250))
    replays = tmp_path / "replays"
    replays.mkdir()
    result = CliRunner().invoke(cli, ["batch", str(root), "--replay-dir", str(replays), "-q"])
    assert "internal error" not in result.stderr
    (line,) = [json.loads(x) for x in result.stdout.splitlines()]
    assert line["session"] == "q" * 250 and "no replay for this session" in line["note"]


@pytest.mark.parametrize("command", [["show"], ["cite", "--offline"], ["report"], ["run"]])
def test_a_session_beyond_the_path_limit_is_a_usage_error_not_a_crash(
    tmp_path: Path, command: list[str]
) -> None:
    back = os.open(".", os.O_RDONLY)
    try:
        os.chdir(tmp_path)
        for _ in range(22):  # 22 x 201 bytes: past PATH_MAX (4,096) from the root
            os.mkdir("d" * 200)
            os.chdir("d" * 200)
        small_session(Path("sess"))
        result = CliRunner().invoke(cli, [command[0], "sess", *command[1:]])
    finally:
        os.fchdir(back)
        os.close(back)
    assert result.exit_code == 2, result.output
    assert "too long for this system" in result.stderr and "internal error" not in result.stderr
    if command == ["run"]:
        assert json.loads(result.stdout)["wroteJudge"] is False  # the receipt, as ever


NAME = st.text(
    alphabet=st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)),
    min_size=1,
    max_size=120,
).filter(lambda n: not n.startswith(".") and 0 < len(n.encode("utf-8")) <= 250)


@settings(
    max_examples=15,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(name=NAME)
def test_any_session_name_gets_a_line_and_an_escaped_page(
    tmp_path_factory: pytest.TempPathFactory, name: str
) -> None:
    """Issue 31 §4: any name a file system holds (up to 250 bytes, controls, bidi, emoji)
    gets its batch line and its index row; nothing ends in an internal error, and nothing
    is printed raw to a terminal."""
    count("session name through batch and report")
    root = tmp_path_factory.mktemp("names") / "root"
    small_session(root / name)
    replays = root.parent / "replays"
    replays.mkdir()
    batch = CliRunner().invoke(cli, ["batch", str(root), "--replay-dir", str(replays), "-q"])
    assert "internal error" not in batch.stderr
    (line,) = [json.loads(x) for x in batch.stdout.splitlines()]
    assert line["session"] == name and batch.stdout.isascii()
    report = CliRunner().invoke(cli, ["report", str(root)])
    assert report.exit_code == 0, report.output
    assert "\x1b" not in report.stdout + report.stderr
