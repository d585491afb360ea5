"""The pure-Python work is bounded too (issue 22 §2, §6): the loader, the number checks
and the deterministic checks stop at the run's deadline or at caps, and say so."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from harness.audit import numbers
from harness.audit.checks import Checker, check_numbers
from harness.audit.numbers import MAX_CLAIM_NUMBERS, Evidence
from harness.clock import Deadline
from harness.session import loader
from harness.session.loader import LoadLimits, load_session
from harness.session.models import Claim


def _session(folder: Path, claims: list[dict[str, Any]], source: str | bytes) -> Path:
    (folder / "findings").mkdir(parents=True)
    (folder / "sources").mkdir()
    finding = {"id": "sq1", "subQuestion": "q", "claims": claims}
    (folder / "findings" / "sq1.json").write_text(json.dumps(finding))
    sources = {"sources": [{"id": "s1", "url": "https://example.org/a"}]}
    (folder / "sources.json").write_text(json.dumps(sources))
    data = source.encode() if isinstance(source, str) else source
    (folder / "sources" / "s1.txt").write_bytes(data)
    return folder


def _claim(i: int, text: str, quote: str) -> dict[str, Any]:
    return {
        "id": f"c{i}",
        "text": text,
        "sourceIds": ["s1"],
        "quotes": [{"sourceId": "s1", "text": quote}],
    }


def test_a_number_problem_against_a_cut_source_says_the_text_was_cut(tmp_path: Path) -> None:
    """The number is past the 8 MiB cap: the problem says the text read was cut."""
    filler = ("Filler sentence about the trial. " * 40 + "\n\n").encode()
    body = filler * (8 * 1024 * 1024 // len(filler) + 2) + b"It enrolled 12,345 patients.\n"
    claims = [_claim(1, "The trial enrolled 12,345 patients.", "Filler sentence about the trial.")]
    session = load_session(_session(tmp_path / "s", claims, body))
    with Checker(session) as checker:
        problems = [p for p in checker.check(session.findings[0].claims[0])]
    (mismatch,) = [p for p in problems if p.check == "number_mismatch"]
    assert mismatch.numbers == ["12,345"]
    assert "the text read was cut" in mismatch.detail
    assert "bytes cap" in mismatch.detail and "may be in the part not read" in mismatch.detail


def test_an_uncut_source_says_nothing_of_cuts(tmp_path: Path) -> None:
    claims = [_claim(1, "The trial enrolled 12,345 patients.", "The trial enrolled patients.")]
    session = load_session(_session(tmp_path / "s", claims, "The trial enrolled patients.\n"))
    with Checker(session) as checker:
        (mismatch,) = [p for p in checker.check(session.findings[0].claims[0])]
    assert "cut" not in mismatch.detail


def test_a_claim_with_thousands_of_numbers_is_checked_for_the_first_ones_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = " ".join(f"{n} cases" for n in range(1000, 1300))
    claim = Claim.model_validate(
        {"id": "c1", "text": text, "sourceIds": ["s1"], "quotes": [{"sourceId": "s1", "text": "x"}]}
    )
    long_source = Evidence("tiny paragraph with 12 and 34.\n" * 300_000)
    read: list[int] = []  # the length of each text read for its digit forms
    digit_forms = numbers._digit_forms

    def counted(text: str, deadline: Any) -> set[str]:
        read.append(len(text))
        return digit_forms(text, deadline)

    monkeypatch.setattr(numbers, "_digit_forms", counted)
    problems, hints = check_numbers(claim, lambda sid: long_source)
    # The work, not the time (a loaded machine's): the 9 MB source is read once for all the
    # numbers checked, not once per number.
    assert read.count(len(long_source.text)) == 1, read
    (problem,) = problems
    assert len(problem.numbers or []) == MAX_CLAIM_NUMBERS
    assert f"only the first {MAX_CLAIM_NUMBERS} were checked" in problem.detail
    assert any("300 numbers" in h.detail and "not a problem" in h.detail for h in hints)


def test_the_loader_caps_the_claims_it_loads_and_says_so(tmp_path: Path) -> None:
    claims = [_claim(i, f"Claim {i}.", "q") for i in range(300)]
    folder = _session(tmp_path / "s", claims, "q\n")
    session = load_session(folder, limits=LoadLimits(claims=120))
    assert len(session.findings[0].claims) == 120
    (problem,) = [p for p in session.problems if p.code == "too_large"]
    assert "holds 300 claims; only the first 120 were loaded" in problem.reason
    assert "cap of 120 claims" in problem.reason


def test_the_loader_stops_loading_claims_at_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claims = [_claim(i, f"Claim {i}.", "q") for i in range(2000)]
    folder = _session(tmp_path / "s", claims, "q\n")
    assert len(load_session(folder, deadline=Deadline.after(60)).findings[0].claims) == 2000
    real = loader._load_claim
    deadline = Deadline()  # set going at the first claim: the files' reading is not timed

    def slow(*args: Any) -> Any:  # 256 claims take 1.3 s: past a 0.5 s deadline
        if deadline.at is None:
            deadline.at = time.monotonic() + 0.5
        time.sleep(0.005)
        return real(*args)

    monkeypatch.setattr(loader, "_load_claim", slow)
    late = load_session(folder, deadline=deadline)
    # Stopped at the first reading of the clock past the deadline, not after all 2,000: a
    # loaded machine only makes the 256 take longer.
    assert len(late.findings[0].claims) == 256  # the clock is read every 256 claims
    (problem,) = [p for p in late.problems if p.pointer == "/claims"]
    assert problem.code == "too_large"
    assert "holds 2,000 claims; only the first 256 were loaded" in problem.reason
    assert "before the run's time limit was reached" in problem.reason


def test_checks_past_the_deadline_say_each_quote_was_not_checked(tmp_path: Path) -> None:
    claims = [
        _claim(i, f"In 2001 there were {i} cases.", f"there were {i} cases") for i in range(50)
    ]
    session = load_session(_session(tmp_path / "s", claims, "there were 3 cases\n"))
    with Checker(session, deadline=Deadline(time.monotonic() - 1)) as checker:
        reviews = [checker.review(c) for _, c in session.claims]
    assert checker.late == 50
    for problems, hints in reviews:
        (late,) = [p for p in problems if p.check == "source_unreadable"]
        assert "the run's time limit was reached" in late.detail
        assert not hints
    with Checker(session, deadline=Deadline(time.monotonic() + 600)) as checker:
        problems, _ = checker.review(session.findings[0].claims[7])
    assert checker.late == 0
    assert {p.check for p in problems} == {"quote_not_in_source", "number_mismatch"}


def test_a_quote_searched_in_the_other_sources_asks_each_source_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A quote missing from its own source is looked for in the others (was it taken from
    one the claim does not cite?). A first piece that occurs a million times there ("a …
    zzz" against a source of "a a a …") costs one look per source, not one per occurrence."""
    from harness.audit import checks

    folder = _session(tmp_path / "s", [], "The trial enrolled patients.\n")
    (folder / "sources" / "s2.txt").write_text("a " * 500_000 + "\n")
    (folder / "sources" / "s3.txt").write_text("a b zzz\n")
    sources = {"sources": [{"id": f"s{i}", "url": f"https://example.org/{i}"} for i in (1, 2, 3)]}
    (folder / "sources.json").write_text(json.dumps(sources))
    asked: list[str] = []
    holds = checks.Snapshot.holds

    def counted(self: Any, quote: Any) -> bool:
        asked.append(self.source_id)
        return holds(self, quote)

    monkeypatch.setattr(checks.Snapshot, "holds", counted)
    session = load_session(folder)
    snapshots = checks.Snapshots(session)
    assert snapshots.holding(["a", "zzz"], but="s1") == ["s3"]
    assert sorted(asked) == ["s2", "s3"]  # was 500,000 looks at s2
