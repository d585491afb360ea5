"""Static hostile content is survived: every run exits 0, 1 or 2 with one receipt line
and no traceback, whatever names, depths, numbers or escapes the session holds.

Each case here ended a run (or `validate`/`show`) with exit 1, no stdout and a traceback
before: names that are not UTF-8 or that `str.isdigit` mistakes for digits, a folder
nested deeper than the recursion limit, an integer too long for `int()`, a lone
surrogate escape in a note or a claim.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness.agent.fetch import DisabledFetcher
from harness.agent.tools import ToolBox
from harness.cli import cli
from tests.support.apiserver import Reply, judge_responder, serve_with_env
from tests.support.fakes import GOOD_JUDGE, message, text, write_judge

KEY = "sk-ant-static-" + "0123456789" * 4
HUGE = "9" * 5000  # more digits than int() converts (4,300)


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    yield from serve_with_env(monkeypatch, KEY)


def run_cli(session: Path, *extra: str) -> Any:
    args = ["run", str(session), "--fetch", "off", "--no-cite", "--timeout", "5", *extra]
    return CliRunner().invoke(cli, args)


def assert_survived(result: Any, codes: tuple[int, ...] = (0,)) -> dict[str, Any]:
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert result.exit_code in codes, (result.exit_code, result.stdout, result.stderr)
    lines = result.stdout.splitlines()
    assert len(lines) == 1, result.stdout
    receipt: dict[str, Any] = json.loads(lines[0])
    assert set(receipt) == {"wroteJudge", "upToDate", "note"}
    return receipt


def test_finding_names_that_look_like_digits(api: Any, small_session: Path) -> None:
    api()
    finding = (small_session / "findings" / "sq1.json").read_text()
    for name in ("²1.json", "sq①.json", "sq٣.json", "sq2.json"):
        (small_session / "findings" / name).write_text(finding.replace("sq1-c1", name))
    receipt = assert_survived(run_cli(small_session))
    assert receipt["wroteJudge"] is True


def test_file_names_that_are_not_utf8(api: Any, small_session: Path) -> None:
    api()
    finding = (small_session / "findings" / "sq1.json").read_bytes()
    root = os.fsencode(small_session)
    for where in (b"findings/sq\xff.json", b"\xfe\xfe.txt", b"sources/s\x80.txt"):
        with open(os.path.join(root, where), "wb") as handle:
            handle.write(finding)
    os.mkdir(os.path.join(root, b"dir\xc3"))
    result = run_cli(small_session)
    assert_survived(result)
    record = (small_session / ".judge" / "run.json").read_bytes()
    record.decode("ascii")  # the names are escaped in the record, not raw bytes
    json.loads(record)


def _remove_deep(top: Path) -> None:
    """Remove a chain top/d/d/... one level at a time (rmtree recurses, as walk did)."""
    while (top / "d").exists():
        if (top / "d" / "d").exists():
            os.rename(top / "d" / "d", top / "next")
        for leftover in (top / "d").iterdir():
            leftover.unlink()
        os.rmdir(top / "d")
        if (top / "next").exists():
            os.rename(top / "next", top / "d")


# The suite's own byte-identity guard walks with Path.rglob, which recurses too: this
# test checks the session's top-level files itself.
@pytest.mark.session_may_change
def test_folders_nested_deeper_than_the_recursion_limit(
    api: Any, small_session: Path, request: pytest.FixtureRequest
) -> None:
    api()
    deep = small_session / "deep"
    request.addfinalizer(lambda: _remove_deep(deep))
    path = os.fspath(deep)
    os.mkdir(path)
    fd = os.open(path, os.O_RDONLY)
    try:
        for _ in range(1200):  # a path this long cannot be named at once: walk down by fd
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        with open(os.open("leaf.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as f:
            f.write("deep\n")
    finally:
        os.close(fd)
    before = {p: p.read_bytes() for p in small_session.glob("[!.]*/*.*")}
    result = run_cli(small_session)
    assert json.loads(assert_survived(result)["note"] and result.stdout)["wroteJudge"]
    assert {p: p.read_bytes() for p in small_session.glob("[!.]*/*.*")} == before
    record = json.loads((small_session / ".judge" / "run.json").read_text())
    assert record["sessionDigest"].startswith("sha256:")


def test_huge_integers_in_session_files(api: Any, small_session: Path) -> None:
    api()
    finding = json.loads((small_session / "findings" / "sq1.json").read_text())
    raw = json.dumps(finding)[:-1] + f', "extra": {HUGE}' + "}"
    (small_session / "findings" / "sq2.json").write_text(raw)
    (small_session / "trace.jsonl").write_text('{"tool": "search", "n": ' + HUGE + "}\n")
    sources = (small_session / "sources.json").read_text()
    (small_session / "sources.json").write_text(sources[:-1] + f', "n": {HUGE}' + "}")
    receipt = assert_survived(run_cli(small_session))
    assert receipt["wroteJudge"] is True
    record = json.loads((small_session / ".judge" / "run.json").read_text())
    problems = json.dumps(record["sessionSummary"])
    assert record["outcome"]["kind"] == "model-written", problems


def _huge_judge() -> str:
    doc = json.dumps(GOOD_JUDGE)
    return doc.replace('"factualAccuracy": 4', f'"factualAccuracy": {HUGE}')


@pytest.mark.parametrize("command", ["validate", "show"])
def test_a_judge_json_with_a_huge_integer_is_invalid_with_a_pointer(
    small_session: Path, command: str
) -> None:
    (small_session / "judge.json").write_text(_huge_judge())
    target = small_session / "judge.json" if command == "validate" else small_session
    result = CliRunner().invoke(cli, [command, str(target), "--json"])
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    errors = document["errors"]
    assert any(
        e["pointer"] == "/scores/factualAccuracy" and "5,000 digits" in e["found"] for e in errors
    ), errors


def test_the_write_tool_refuses_a_huge_integer(small_session: Path) -> None:
    tools = ToolBox(session_dir=small_session, session_id="s", fetcher=DisabledFetcher())
    out, is_error = tools.run("Write", {"file_path": "judge.json", "content": _huge_judge()})
    assert is_error and "/scores/factualAccuracy" in out and "4,300 digits" in out
    assert not (small_session / "judge.json").exists()


LONE = '"note": "bad \\ud800 note"'


def test_a_judge_json_with_a_lone_surrogate_is_invalid_with_a_pointer(
    small_session: Path,
) -> None:
    doc = json.dumps(GOOD_JUDGE)
    doc = doc.replace(f'"note": {json.dumps(GOOD_JUDGE["note"])}', LONE)
    (small_session / "judge.json").write_text(doc)
    result = CliRunner().invoke(cli, ["validate", str(small_session / "judge.json"), "--json"])
    assert result.exit_code == 1
    errors = json.loads(result.stdout)["errors"]
    assert any(e["pointer"] == "/note" and "surrogate" in e["found"] for e in errors), errors


def test_a_judge_that_writes_a_lone_surrogate_is_refused_and_the_run_survives(
    api: Any, small_session: Path
) -> None:
    doc = json.dumps(GOOD_JUDGE).replace(f'"note": {json.dumps(GOOD_JUDGE["note"])}', LONE)
    api([Reply(message(write_judge(raw=doc)))])  # then the obedient judge repairs it
    result = run_cli(small_session)
    receipt = assert_survived(result)
    assert receipt["wroteJudge"] is True
    record = json.loads((small_session / ".judge" / "run.json").read_text())
    assert record["writes"]["refused"] == 1
    assert "surrogate" in json.dumps(record["formatErrors"])
    json.loads((small_session / "judge.json").read_text())


def test_a_lone_surrogate_in_a_claim_reaches_every_writer_safely(
    api: Any, small_session: Path
) -> None:
    server = api()
    path = small_session / "findings" / "sq1.json"
    raw = path.read_text().replace("Aspirin reduces fever.", "Aspirin \\ud800 reduces fever.")
    path.write_text(raw)
    result = CliRunner().invoke(
        cli, ["run", str(small_session), "--fetch", "off", "--timeout", "5"]
    )
    # the citation audit has no cite client here: it runs live against the loopback API
    receipt = assert_survived(result)
    assert receipt["wroteJudge"] is True
    for name in ("run.json", "citations.json"):
        json.loads((small_session / ".judge" / name).read_bytes())
    assert server.requests


def test_a_final_text_with_line_separators_keeps_the_receipt_one_line(
    api: Any, small_session: Path
) -> None:
    note = "a\u2028b\u0085c\u2029d\x1b]0;title\x07 \ud800"
    api(
        [
            Reply(judge_responder),
            Reply(message(write_judge({**GOOD_JUDGE, "note": note.replace("\ud800", "")}))),
            Reply(message(text("done"))),
        ]
    )
    result = run_cli(small_session)
    receipt = assert_survived(result)
    assert result.stdout.isascii()
    assert "\u2028" not in result.stdout and "\x85" not in result.stdout
    assert "\x1b" not in result.stderr and "\u2028" not in result.stderr
    assert "\\x1b" in result.stderr and "\\u2028" in result.stderr
    assert receipt["wroteJudge"] is True


def test_a_lone_surrogate_in_a_finding_is_a_problem_with_its_pointer(tmp_path: Path) -> None:
    """pydantic refuses a lone surrogate in a str field: the loader used to crash on a
    finding id of `\\ud800` (found by tests/adversarial/test_hostile_trees.py)."""
    from harness.session.loader import load_session

    folder = tmp_path / "s"
    (folder / "findings").mkdir(parents=True)
    raw = '{"id": "sq\\ud800", "claims": [{"id": "c1", "text": "t\\udfff", "sourceIds": []}]}'
    (folder / "findings" / "sq1.json").write_text(raw)
    session = load_session(folder)
    (finding,) = session.findings
    assert finding.id == "sq\ufffd" and finding.claims[0].text == "t\ufffd"
    pointers = {p.pointer for p in session.problems if "surrogate" in p.reason}
    assert pointers == {"/id", "/claims/0/text"}


def _run_then_plant(small_session: Path, artifact: str) -> None:
    """A judge.json, and `artifact` saved holding a 5,000-digit number."""
    (small_session / "judge.json").write_text(json.dumps(GOOD_JUDGE))
    (small_session / ".judge").mkdir(exist_ok=True)
    (small_session / ".judge" / artifact).write_text('{"version": "x", "n": ' + HUGE + "}")


@pytest.mark.parametrize("artifact", ["citations.json", "run.json"])
@pytest.mark.parametrize("command", ["show", "report"])
def test_a_saved_artifact_with_a_huge_integer_is_a_problem_not_a_crash(
    small_session: Path, artifact: str, command: str
) -> None:
    _run_then_plant(small_session, artifact)
    result = CliRunner().invoke(cli, [command, str(small_session)])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert result.exit_code == 0, (result.exit_code, result.output)
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    if command == "report":
        page = (small_session / ".judge" / "report.html").read_text()
        assert f".judge/{artifact} is not valid JSON" in page
    elif artifact == "citations.json":
        assert ".judge/citations.json is not valid JSON" in result.output


def test_a_replay_file_with_a_huge_integer_is_a_clear_error(small_session: Path) -> None:
    replay = small_session.parent / "huge.jsonl"
    replay.write_text('{"type": "message", "n": ' + HUGE + "}\n")
    result = CliRunner().invoke(
        cli, ["run", str(small_session), "--replay", str(replay), "--no-cite", "--fetch", "off"]
    )
    assert "Traceback" not in result.stderr
    assert result.exit_code in (1, 2), result.output
    assert "huge.jsonl" in result.output and "5000 digits" in result.output
