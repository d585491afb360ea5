"""Human output neutralises what a session or a model could use against a terminal.

Escape sequences (title changes, OSC 52 clipboard writes, line erases), C1 controls
(U+0085 NEL, U+009B CSI), DEL, bidi overrides and U+2028/U+2029 in claim text, file
names, the session folder's name or the judge's note are shown escaped on stderr; stdout
JSON stays JSON (ASCII-safe).
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from harness.cli import cli
from harness.text.terminal import one_line, printable
from tests.support.fakes import GOOD_JUDGE
from tests.support.sessions import write_small_session
from tests.support.tried import count

HOSTILE = [
    "\x1b]0;owned\x07",  # window title
    "\x1b]52;c;ZXZpbA==\x07",  # OSC 52: write the clipboard
    "\x1b[2K\r",  # erase the line
    "\x9b31m",  # C1 CSI
    "\x85",  # NEL
    "\x7f",  # DEL
    "\u202e",  # right-to-left override
    "\u2066",  # left-to-right isolate
    "\u2028",
    "\u2029",
    "\x00",
]
# A file name may hold anything but NUL and "/".
IN_NAMES = "".join(h for h in HOSTILE if h != "\x00")


def _raw_in(output: str) -> list[str]:
    bad = []
    for ch in output:
        if ch in "\n\t":
            continue
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs"):
            bad.append(ch)
    return bad


def test_printable_shows_each_hostile_sequence_escaped() -> None:
    for sequence in HOSTILE:
        shown = printable("a" + sequence + "b")
        assert _raw_in(shown) == [], repr(shown)
        assert shown.startswith("a") and shown.endswith("b")
        assert "\\" in shown
    assert printable("\x1b]0;t\x07") == "\\x1b]0;t\\x07"
    assert printable("a\u2028b") == "a\\u2028b"
    assert printable("line\nnext\ttab") == "line\nnext\ttab"  # kept by default
    assert one_line("line\nforged: ok\r") == "line\\nforged: ok\\r"
    assert printable("café ünïcode 日本") == "café ünïcode 日本"  # text stays readable


@given(st.text())
def test_printable_never_lets_a_control_character_through(value: str) -> None:
    count("terminal: printable")
    shown = one_line(value)
    assert _raw_in(shown) == []
    assert "\n" not in shown
    shown.encode("utf-8")  # no lone surrogate either: it can always be written


def _hostile_session(tmp_path: Path) -> Path:
    evil = "".join(HOSTILE)
    folder = write_small_session(tmp_path / f"sess{IN_NAMES}name")
    path = folder / "findings" / "sq1.json"
    finding = json.loads(path.read_text())
    finding["claims"][0]["id"] = f"sq1-c1{evil}"
    finding["claims"][0]["text"] = f"Aspirin {evil} reduces fever."
    finding["claims"][0]["sourceIds"] = [f"s9{evil}"]  # dangling: named in the problems
    path.write_text(json.dumps(finding))
    (folder / "findings" / f"sq2{IN_NAMES}.json").write_text("{not json")
    (folder / "judge.json").write_text(json.dumps({**GOOD_JUDGE, "note": f"note {evil}"}))
    return folder


def test_show_and_cite_print_nothing_raw(tmp_path: Path) -> None:
    folder = _hostile_session(tmp_path)
    for args in (["show", str(folder)], ["cite", str(folder), "--offline"]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code in (0, 1), result.output
        assert _raw_in(result.stderr) == [], (args, sorted(set(_raw_in(result.stderr))))
        assert "\\x1b" in result.stderr  # shown, not dropped
        if result.stdout.strip():
            assert result.stdout.isascii()
    for args in (["show", str(folder), "--json"], ["cite", str(folder), "--offline", "--json"]):
        result = CliRunner().invoke(cli, args)
        assert result.stdout.isascii() and _raw_in(result.stdout.rstrip("\n")) == []
        document = json.loads(result.stdout)
        assert "\x1b" in document["sessionId"]  # the JSON holds the text as it is


def test_validate_prints_a_hostile_file_name_escaped(tmp_path: Path) -> None:
    target = tmp_path / "judge\x1b]0;x\x07.json"
    target.write_text("{}")
    result = CliRunner().invoke(cli, ["validate", str(target)])
    assert result.exit_code == 1
    assert _raw_in(result.stderr) == [] and "\\x1b]0;x\\x07" in result.stderr


def test_clicks_own_errors_show_what_was_typed_escaped(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["run", str(tmp_path), "--fetch", "x\x1b[2K\u2028"])
    assert result.exit_code == 2
    assert "run [OPTIONS] SESSION" in result.stderr  # still click's usage and hint
    assert _raw_in(result.stderr) == [] and "x\\x1b[2K\\u2028" in result.stderr


def test_a_missing_session_gets_its_receipt_and_an_escaped_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "nope\x1b]0;x\x07")])
    assert result.exit_code == 2
    (line,) = result.stdout.splitlines()
    assert json.loads(line)["wroteJudge"] is False and line.isascii()
    assert _raw_in(result.stderr) == [] and "nope\\x1b]0;x\\x07" in result.stderr


@pytest.mark.parametrize(
    "name",
    [
        "sess\nforged: ok",  # newline
        "sess\x1b]0;owned\x07",  # ESC: a window title
        "sess\u202egpj.exe",  # bidi override
        "sess\x9b31m\x85",  # C1: CSI and NEL
        "sess\u200bname\u2060",  # zero-width space and word joiner
        "sess\tcol",  # tab
    ],
)
def test_a_hostile_name_prints_the_same_in_run_and_batch(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`judge run`'s summary lines go through `_err`; `judge batch`'s rows through the
    table's cell: one escaper, so one name reads the same in both."""
    from harness.cli.batch_widths import _cell
    from harness.cli.main import _err

    _err(name)
    shown_by_run = capsys.readouterr().err.removesuffix("\n")
    shown_by_batch = _cell("session", name, compact=False)
    assert shown_by_run == shown_by_batch == one_line(name)
    assert _raw_in(shown_by_run) == [] and "\n" not in shown_by_run and "\t" not in shown_by_run
