"""A run reads the last run's record and the judge.json it finds once each.

The up-to-date rule, the copy kept as previous-judge.json and the check of whose bytes a
sealed record vouches for all answer from the one read the run makes of each at its
start, under its lock: two reads of one file are two answers that a swap between them can
make disagree. Counted at the session reader, through which every read of a session's
file goes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.fs.confined import SessionReader
from harness.run import judge_session
from tests.support.fakes import GOOD_JUDGE, ScriptedModel, message, text, write_judge

WATCHED = ("run.json", "judge.json", "citations.json")


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many times each watched file name was read through the session reader."""
    counted: Counter[str] = Counter()
    real = SessionReader.read_bytes

    def counting(self: SessionReader, rel: str, *args: Any, **kwargs: Any) -> Any:
        name = rel.rsplit("/", 1)[-1]
        if name in WATCHED:
            counted[name] += 1
        return real(self, rel, *args, **kwargs)

    monkeypatch.setattr(SessionReader, "read_bytes", counting)
    return counted


def _judged(folder: Path) -> None:
    model = ScriptedModel([message(write_judge(GOOD_JUDGE)), message(text("Done."))])
    assert judge_session(folder, client=model, fetch="off", cite=False).outcome == "model-written"


def test_an_up_to_date_run_reads_each_file_once(small_session: Path, reads: Counter[str]) -> None:
    _judged(small_session)
    reads.clear()
    model = ScriptedModel([])
    result = judge_session(small_session, client=model, fetch="off", cite=False)
    assert result.outcome == "up-to-date"
    assert model.requests == []
    assert reads == Counter({"run.json": 1, "judge.json": 1})


@pytest.mark.parametrize("force", [True, False])
def test_a_run_reads_each_file_once_before_its_first_request(
    small_session: Path, reads: Counter[str], force: bool
) -> None:
    _judged(small_session)
    if not force:  # the session changed: not up to date, judged again
        (small_session / "answer.md").write_text("A changed answer.\n")
    reads.clear()
    before_first: list[Counter[str]] = []

    def first(params: dict[str, Any]) -> dict[str, Any]:
        before_first.append(Counter(reads))
        return message(write_judge(GOOD_JUDGE))

    model = ScriptedModel([first, message(text("Done."))])
    result = judge_session(small_session, client=model, fetch="off", cite=False, force=force)
    assert result.outcome == "model-written"
    assert before_first == [Counter({"run.json": 1, "judge.json": 1})]
    # After it: the write tool's check of what the model wrote, the loop's at its end
    # and the settling's of what the run leaves; run.json is not read again.
    assert reads["run.json"] == 1


# -- the session's own files: one reader, each file read once -----------------------------

SESSION_FILES = ("answer.md", "findings/sq1.json", "sources.json", "sources/s1.txt")


@pytest.fixture
def file_opens(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, str]]:
    """Each file of the session opened through a session reader: (which reader, its name)."""
    opened: list[tuple[int, str]] = []
    real = SessionReader.open

    def counting(self: SessionReader, rel: str, *args: Any, **kwargs: Any) -> Any:
        fd, entry = real(self, rel, *args, **kwargs)
        if entry.kind == "file":
            opened.append((id(self), entry.rel))
        return fd, entry

    monkeypatch.setattr(SessionReader, "open", counting)
    return opened


@pytest.mark.parametrize("judged", [False, True])
def test_a_run_reads_the_session_once_through_one_reader(
    small_session: Path, file_opens: list[tuple[int, str]], judged: bool
) -> None:
    """Loading the session and naming it by its digest read each file once, through one
    reader: the digest is of the bytes the run judged (not of a second read that a change
    in between could make differ), and no file costs two opens and two reads."""
    if judged:
        _judged(small_session)
        (small_session / "answer.md").write_text("A changed answer.\n")
    file_opens.clear()
    before_first: list[list[tuple[int, str]]] = []

    def first(params: dict[str, Any]) -> dict[str, Any]:
        before_first.append(list(file_opens))
        return message(write_judge(GOOD_JUDGE))

    model = ScriptedModel([first, message(text("Done."))])
    result = judge_session(small_session, client=model, fetch="off", cite=False)
    assert result.outcome == "model-written"
    [seen] = before_first
    session_reads = [(reader, rel) for reader, rel in seen if rel in SESSION_FILES]
    assert sorted(rel for _, rel in session_reads) == sorted(SESSION_FILES)
    assert len({reader for reader, _ in session_reads}) == 1


def _rewrite_finding(folder: Path) -> None:
    finding = folder / "findings" / "sq1.json"
    finding.write_bytes(finding.read_bytes().replace(b"fever", b"FEVER"))


def _add_finding(folder: Path) -> None:
    text = (folder / "findings" / "sq1.json").read_text()
    (folder / "findings" / "sq2.json").write_text(text.replace('"sq1', '"sq2'))


@pytest.mark.session_may_change  # the pipeline's change, during the run, on purpose
@pytest.mark.parametrize("change", [_rewrite_finding, _add_finding])
def test_a_session_changed_while_the_run_reads_it_is_judged_again(
    small_session: Path, monkeypatch: pytest.MonkeyPatch, change: Callable[[Path], None]
) -> None:
    """The pipeline rewrites a finding, or adds one, after the run loaded the session and
    before it hashed it. The run judged the session as it loaded it, so its judgment is
    not up to date for the changed one: the next run judges again. (Hashed from a second
    read, the digest would name the changed session, and the next run would reuse the
    judgment of the old one as up to date.)"""
    import harness.run.prepare as prepare

    real = prepare.render_for_session

    def changed_meanwhile(*args: Any, **kwargs: Any) -> Any:  # between load and digest
        change(small_session)
        return real(*args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(prepare, "render_for_session", changed_meanwhile)
        _judged(small_session)
    model = ScriptedModel([message(write_judge(GOOD_JUDGE)), message(text("Done."))])
    result = judge_session(small_session, client=model, fetch="off", cite=False)
    assert result.outcome == "model-written"
    assert len(model.requests) == 2
