"""A run reads the last run's record and the judge.json it finds once each.

The up-to-date rule, the copy kept as previous-judge.json and the check of whose bytes a
sealed record vouches for all answer from the one read the run makes of each at its
start, under its lock: two reads of one file are two answers that a swap between them can
make disagree. Counted at the session reader, through which every read of a session's
file goes.
"""

from __future__ import annotations

from collections import Counter
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
