"""Every spelling of an outside file, planted in every position, read by every reader.

A canary file outside the session must never reach anything the run produces: the
session problems, the first message and every tool result (the model's requests),
citations.json, run.json, the receipt, `show` (JSON and text), and the outside files
must be unchanged (content and mtime) afterwards.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.agent.fetch import StoredFetcher
from harness.agent.opening import first_message
from harness.agent.opening import listing as _listing
from harness.agent.read import read_tool
from harness.audit.checks import Snapshots
from harness.errors import ToolError
from harness.run import judge_session, session_digest
from harness.session.loader import load_session
from harness.session.show import show_document, show_session, summary_lines
from tests.support.fakes import GOOD_JUDGE, ScriptedModel, message, text, tool_use, write_judge
from tests.support.sessions import write_small_session
from tests.support.tried import count

CANARY = "CANARY-OUTSIDE-9d3b"
# An odd size, so that a listing or summary that sizes the outside file shows it.
CANARY_SIZE = 7919
SOURCE_URL = "https://example.org/aspirin"


def _environ_line() -> str:
    """A long line of this process's environment (what `/proc/self/environ` shows)."""
    lines = Path("/proc/self/environ").read_bytes().split(b"\0")
    return max(lines, key=len).decode("utf-8", "replace")


@dataclass(frozen=True)
class Outside:
    folder: Path
    file: Path  # a canary text file of CANARY_SIZE bytes
    finding: Path  # a valid finding whose claim text is the canary
    sources: Path  # a valid sources.json whose url is the canary
    findings_dir: Path  # a folder holding one canary finding
    sources_dir: Path  # a folder holding s1.txt, the canary

    def state(self) -> dict[str, tuple[bytes, int]]:
        return {
            str(p): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(self.folder.rglob("*"))
            if p.is_file()
        }


def make_outside(base: Path) -> Outside:
    folder = base / "outside"
    (folder / "findings").mkdir(parents=True)
    (folder / "sources").mkdir()
    body = f"{CANARY} aspirin secret ".ljust(CANARY_SIZE - 1, "x") + "\n"
    (folder / "canary.txt").write_text(body)
    finding = {
        "id": "sq9",
        "subQuestion": f"{CANARY} question",
        "claims": [{"id": "sq9-c1", "text": f"{CANARY} claim", "sourceIds": ["s1"]}],
    }
    (folder / "finding.json").write_text(json.dumps(finding))
    (folder / "findings" / "sq1.json").write_text(json.dumps(finding))
    sources = {"sources": [{"id": "s1", "url": f"https://{CANARY.lower()}.example/x"}]}
    (folder / "sources.json").write_text(json.dumps(sources))
    (folder / "sources" / "s1.txt").write_text(body)
    return Outside(
        folder,
        folder / "canary.txt",
        folder / "finding.json",
        folder / "sources.json",
        folder / "findings",
        folder / "sources",
    )


def _replace_with_link(entry: Path, target: Path, kind: str) -> None:
    if entry.is_dir() and not entry.is_symlink():
        entry.rename(entry.with_name(entry.name + ".moved"))
    else:
        entry.unlink(missing_ok=True)
    entry.parent.mkdir(parents=True, exist_ok=True)
    if kind == "symlink":
        entry.symlink_to(target, target_is_directory=target.is_dir())
    else:
        os.link(target, entry)


# (position in the session, which outside thing it leads to, link kinds that make sense)
PLANTS: list[tuple[str, str, tuple[str, ...]]] = [
    ("findings/sq2.json", "finding", ("symlink", "hardlink")),
    ("findings/sq1.json", "finding", ("symlink", "hardlink")),
    ("findings", "findings_dir", ("symlink",)),
    ("sources", "sources_dir", ("symlink",)),
    ("sources/s1.txt", "file", ("symlink", "hardlink")),
    ("sources.json", "sources", ("symlink", "hardlink")),
    ("trace.jsonl", "environ", ("symlink",)),
    ("trace.jsonl", "file", ("hardlink",)),
    ("answer.md", "file", ("symlink", "hardlink")),
    ("judge.json", "file", ("symlink", "hardlink")),
    (".judge/lock", "file", ("symlink", "hardlink")),
    (".judge/run.json", "file", ("symlink", "hardlink")),
    (".judge/citations.json", "file", ("symlink", "hardlink")),
    (".judge/previous-judge.json", "file", ("symlink", "hardlink")),
    (".judge", "folder", ("symlink",)),
]
CASES = [(pos, what, kind) for pos, what, kinds in PLANTS for kind in kinds]
# A planted lock stops the run before it starts: its own test below.
RUN_CASES = [case for case in CASES if case[0] != ".judge/lock"]


def plant(sess: Path, outside: Outside, position: str, what: str, kind: str) -> None:
    target = {
        "finding": outside.finding,
        "findings_dir": outside.findings_dir,
        "sources_dir": outside.sources_dir,
        "file": outside.file,
        "sources": outside.sources,
        "folder": outside.folder,
        "environ": Path("/proc/self/environ"),
    }[what]
    _replace_with_link(sess / position, target, kind)


def _model() -> ScriptedModel:
    """Reads every planted position, fetches the stored source, lists, then writes."""
    reads = [
        tool_use("Read", {"file_path": p})
        for p in (
            "findings",
            "findings/sq1.json",
            "findings/sq2.json",
            "sources",
            "sources/s1.txt",
            "sources.json",
            "trace.jsonl",
            "answer.md",
            "judge.json",
            ".",
        )
    ]
    fetch = tool_use("WebFetch", {"url": SOURCE_URL})
    return ScriptedModel(
        [message(*reads, fetch), message(write_judge()), message(text("done"))],
        repeat_last=True,
    )


def _leaks(blob: str, environ_line: str) -> list[str]:
    found = [CANARY] if CANARY in blob or CANARY.lower() in blob else []
    if f"{CANARY_SIZE:,} bytes" in blob or f"{CANARY_SIZE} bytes" in blob:
        found.append("the outside file's size")
    if environ_line and environ_line in blob:
        found.append("a line of the process environment")
    return found


def _everything_the_run_produced(sess: Path, model: ScriptedModel, receipt: str) -> str:
    parts = [json.dumps(model.requests), receipt]
    judge_dir = sess / ".judge"
    if judge_dir.is_dir() and not judge_dir.is_symlink():
        for name in ("run.json", "citations.json", "previous-judge.json"):
            path = judge_dir / name
            if path.is_file() and not path.is_symlink() and path.stat().st_nlink == 1:
                parts.append(path.read_text(errors="replace"))
    session, check = show_session(sess)
    parts.append(json.dumps(show_document(session, check)))
    parts.append("\n".join(summary_lines(session, check)))
    return "\n".join(parts)


@pytest.mark.session_may_change  # the plant replaces a session file by a link on purpose
@pytest.mark.parametrize(("position", "what", "kind"), RUN_CASES)
def test_an_outside_file_in_any_position_never_reaches_the_run(
    tmp_path: Path, position: str, what: str, kind: str
) -> None:
    sess = write_small_session(tmp_path / "sess")
    (sess / ".judge").mkdir()
    (sess / "judge.json").write_text(json.dumps(GOOD_JUDGE))
    outside = make_outside(tmp_path)
    plant(sess, outside, position, what, kind)
    before = outside.state()
    environ = _environ_line()
    model = _model()
    result = judge_session(sess, client=model, fetch="stored")
    produced = _everything_the_run_produced(sess, model, result.receipt.line())
    assert _leaks(produced, environ) == []
    assert outside.state() == before  # content and mtime of every outside file
    if position == ".judge":
        assert result.outcome == "not-written" and "symbolic link" in result.reason
    else:
        assert result.receipt.wroteJudge or result.outcome == "kept-previous"


@pytest.mark.session_may_change
@pytest.mark.parametrize("kind", ["symlink", "hardlink"])
def test_a_planted_lock_stops_the_run_and_writes_nothing_outside(tmp_path: Path, kind: str) -> None:
    sess = write_small_session(tmp_path / "sess")
    (sess / ".judge").mkdir()
    outside = make_outside(tmp_path)
    plant(sess, outside, ".judge/lock", "file", kind)
    before = outside.state()
    from harness.errors import WriteError

    with pytest.raises(WriteError, match="run lock") as caught:
        judge_session(sess, client=_model(), fetch="stored")
    assert ("symbolic link" if kind == "symlink" else "2 hard links") in caught.value.message
    assert "remove it" in caught.value.message
    assert outside.state() == before


# -- each reader on its own, for the same plants ---------------------------------------

READERS = ["loader", "listing", "digest", "first-message", "read", "fetch", "snapshots", "show"]


def _run_reader(name: str, sess: Path) -> str:
    if name == "loader":
        session = load_session(sess)
        return json.dumps([p.as_dict() for p in session.problems]) + repr(session.findings)
    if name == "listing":
        return _listing(sess)
    if name == "digest":
        return session_digest(sess)
    if name == "first-message":
        return first_message(load_session(sess), "judge", None)
    if name == "read":
        out = []
        for path in ("findings", "findings/sq1.json", "findings/sq2.json", "sources/s1.txt"):
            try:
                out.append(read_tool(sess, path))
            except ToolError as exc:
                out.append(exc.message)
        return "\n".join(out)
    if name == "fetch":
        try:
            return StoredFetcher(sess, {"s1": SOURCE_URL}).fetch(SOURCE_URL)
        except ToolError as exc:
            return exc.message
    if name == "snapshots":
        with Snapshots(load_session(sess)) as snapshots:
            got = snapshots.get("s1")
        return repr(got)
    session, check = show_session(sess)
    return json.dumps(show_document(session, check)) + "\n".join(summary_lines(session, check))


@settings(max_examples=120)
@given(
    case=st.sampled_from([c for c in CASES if not c[0].startswith(".judge")]),
    reader=st.sampled_from(READERS),
)
def test_property_no_reader_shows_an_outside_byte(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[str, str, str], reader: str
) -> None:
    count("fs: outside plants x readers")
    base = tmp_path_factory.mktemp("plant", numbered=True)
    sess = write_small_session(base / "sess")
    outside = make_outside(base)
    plant(sess, outside, *case)
    before = outside.state()
    produced = _run_reader(reader, sess)
    assert _leaks(produced, _environ_line()) == [], (case, reader)
    assert outside.state() == before


def test_the_own_files_are_still_read(tmp_path: Path) -> None:
    """The refusals are not blanket: the session's own files reach every reader."""
    sess = write_small_session(tmp_path / "sess")
    assert "sq1.json" in _run_reader("listing", sess)
    assert "Aspirin is used to reduce fever" in _run_reader("fetch", sess)
    assert "aspirin is used to reduce fever" in _run_reader("snapshots", sess)  # normalised
    assert "Aspirin reduces fever." in _run_reader("read", sess)
    assert len(load_session(sess).findings) == 1


def test_a_hard_linked_file_is_named_as_the_problem(tmp_path: Path) -> None:
    sess = write_small_session(tmp_path / "sess")
    outside = make_outside(tmp_path)
    plant(sess, outside, "findings/sq2.json", "finding", "hardlink")
    problems = load_session(sess).problems
    assert [(p.file, p.code) for p in problems] == [("findings/sq2.json", "unreadable")]
    assert "2 hard links" in problems[0].reason and "not the session's own" in problems[0].reason
    with pytest.raises(ToolError, match="hard links"):
        read_tool(sess, "findings/sq2.json")


@pytest.mark.parametrize("raw", [b"\xb21.json", b"bad\xff.json", "²1.json".encode()])
def test_odd_finding_names_are_read_and_shown_escaped(tmp_path: Path, raw: bytes) -> None:
    """Names that are not UTF-8, or that look like digits to str.isdigit, crash nothing."""
    sess = write_small_session(tmp_path / "sess")
    body = (sess / "findings" / "sq1.json").read_text().replace('"sq1', '"odd')
    with open(os.fsencode(str(sess / "findings")) + b"/" + raw, "w") as handle:
        handle.write(body)
    session = load_session(sess)
    assert sorted(f.id for f in session.findings) == ["odd", "sq1"]
    shown = raw.decode("utf-8", "backslashreplace")
    assert f"findings/{shown}" in session.finding_paths
    assert f"findings/{shown}" in first_message(session, "judge", None)
    assert session_digest(sess).startswith("sha256:")
    json.dumps(show_document(*show_session(sess)))  # encodable: no lone surrogate inside
