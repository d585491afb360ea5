"""Ranking and number checks stop at the audit's deadline, and say so (issue 22 §2).

No wall-clock assertion: the clock the audit's loops read (`harness.clock._now`) is
driven by the test, so the deadline passes after a given number of readings, and the
assertions are about what stopped, what the claims concerned got and what `cuts` says.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness import clock
from harness.audit import audit_session
from harness.audit.checks import Checker
from harness.audit.numbers import Evidence, absent, numbers
from harness.audit.passages import select, split
from harness.cite import ScriptedClient
from harness.clock import Deadline, OutOfTime
from harness.session.loader import load_session

FAR = 10.0**9  # a reading of the clock past any deadline


class Clock:
    """The audit's clock: real time, until `after` readings have been made; then far on."""

    def __init__(self, after: int | None = None) -> None:
        self.after = after
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        now = time.monotonic()
        return FAR if self.after is not None and self.reads > self.after else now


@pytest.fixture
def drive(monkeypatch: pytest.MonkeyPatch) -> Callable[[int | None], Clock]:
    def install(after: int | None) -> Clock:
        fake = Clock(after)
        monkeypatch.setattr(clock, "_now", fake)
        return fake

    return install


def tiny_paragraphs(chars: int, seed: int = 7) -> str:
    """Paragraphs of one or two short words each: the most passages, the most work."""
    rng = random.Random(seed)
    words = ["".join(rng.choice("abcdefghijklmnop") for _ in range(4)) for _ in range(4000)]
    out: list[str] = []
    size = 0
    while size < chars:
        paragraph = f"{rng.choice(words)} {rng.choice(words)}."
        out.append(paragraph)
        size += len(paragraph) + 1
    return "\n".join(out)


def long_claim(words: int, seed: int = 8) -> str:
    rng = random.Random(seed)
    return " ".join("".join(rng.choice("abcdefghijklmnop") for _ in range(4)) for _ in range(words))


TEXT = tiny_paragraphs(600_000)
CLAIM = long_claim(4000)


# -- ranking --------------------------------------------------------------------------


def test_ranking_reads_the_clock_inside_its_loops(drive: Callable[[int | None], Clock]) -> None:
    """Unbounded by time, the ranking reads the clock many times: in the loops, not once."""
    fake = drive(None)
    found = select("s1", TEXT, [CLAIM] * 3, deadline=Deadline(time.monotonic() + 3600))
    assert found.passages and all(found.by_query)
    assert fake.reads > 100  # every few hundred paragraphs and passages, and each query


@pytest.mark.parametrize("after", [0, 1, 7, 40, 150])
def test_ranking_stops_where_the_deadline_passes(
    drive: Callable[[int | None], Clock], after: int
) -> None:
    fake = drive(after)
    with pytest.raises(OutOfTime):
        select("s1", TEXT, [CLAIM] * 3, deadline=Deadline(time.monotonic() + 3600))
    assert fake.reads == after + 1  # stopped at the first reading past it, nothing more


def test_many_claims_are_ranked_each_under_the_clock(drive: Callable[[int | None], Clock]) -> None:
    """A thousand claims citing one source: the clock is read before each one's ranking."""
    pieces = split("s1", TEXT[:20_000])
    fake = drive(None)
    select(
        "s1",
        TEXT[:20_000],
        [CLAIM[: 40 * (i + 1)] for i in range(1000)],
        deadline=Deadline(FAR - 1),
    )
    assert fake.reads >= 2 * 1000  # scoring, then taking passages, per claim
    assert pieces  # the text is passages, not nothing


def test_split_stops_at_the_deadline(drive: Callable[[int | None], Clock]) -> None:
    drive(3)
    with pytest.raises(OutOfTime):
        split("s1", TEXT, deadline=Deadline(time.monotonic() + 3600))


def test_no_deadline_ranks_as_before(drive: Callable[[int | None], Clock]) -> None:
    fake = drive(0)  # past every deadline: never read without one
    assert select("s1", TEXT[:50_000], [CLAIM]).passages
    assert fake.reads == 0


# -- number forms ---------------------------------------------------------------------

NUMBERS = "".join(
    f"In {1900 + i % 120} there were {i * 37:,} cases, {i % 97}.5% on 2003-06-{10 + i % 18}"
    " (in June, or Jan.).\n"
    for i in range(20_000)
)


@pytest.mark.parametrize("reading", ["plain", "digits", "months"])
def test_number_forms_stop_at_the_deadline_and_keep_nothing(
    drive: Callable[[int | None], Clock], reading: str
) -> None:
    whole = getattr(Evidence(NUMBERS), reading)()
    fake = drive(2)
    evidence = Evidence(NUMBERS, deadline=Deadline(time.monotonic() + 3600))
    with pytest.raises(OutOfTime):
        getattr(evidence, reading)()
    assert fake.reads == 3
    fake.after = None  # time again: read from the start, never from a half-kept set
    assert getattr(evidence, reading)() == whole


def test_a_long_texts_spellings_stop_at_the_deadline(drive: Callable[[int | None], Clock]) -> None:
    """`one` inside a million `phone`s: each occurrence a step of a Python loop."""
    text = "phone " * 200_000
    wanted = numbers("It had 1 line.")
    assert absent(wanted, [Evidence(text)]) == wanted
    fake = drive(5)
    with pytest.raises(OutOfTime):
        absent(wanted, [Evidence(text, deadline=Deadline(time.monotonic() + 3600))])
    assert fake.reads == 6


# -- through the audit -----------------------------------------------------------------


def write(folder: Path, claims: list[dict[str, Any]], docs: dict[str, str]) -> Path:
    (folder / "findings").mkdir(parents=True)
    (folder / "sources").mkdir()
    finding = {"id": "sq1", "subQuestion": "q", "claims": claims}
    (folder / "findings" / "sq1.json").write_text(json.dumps(finding), encoding="utf-8")
    listed = {"sources": [{"id": s, "url": f"https://example.org/{s}"} for s in sorted(docs)]}
    (folder / "sources.json").write_text(json.dumps(listed), encoding="utf-8")
    for sid, text in docs.items():
        (folder / "sources" / f"{sid}.txt").write_text(text, encoding="utf-8")
    return folder


def claim(cid: str, text: str, quote: str, source: str) -> dict[str, Any]:
    return {
        "id": cid,
        "text": text,
        "sourceIds": [source],
        "quotes": [{"sourceId": source, "text": quote}],
    }


SMALL = "Aspirin is used to reduce fever and pain. It was first made in 1897.\n"


def supports() -> ScriptedClient:
    return ScriptedClient(lambda request: dict.fromkeys(request["questions"], 0.95))


def test_a_claim_whose_source_was_not_ranked_in_time_is_an_error_and_the_cut_is_said(
    tmp_path: Path, drive: Callable[[int | None], Clock]
) -> None:
    """On main: ranked whatever the time, and judged supported."""
    first = TEXT.split("\n", 1)[0]
    claims = [
        claim("c1", "Aspirin reduces fever.", "Aspirin is used to reduce fever", "s1"),
        claim("c2", CLAIM, first, "s2"),
    ]
    session = load_session(write(tmp_path / "s", claims, {"s1": SMALL, "s2": TEXT}))
    client = supports()
    fake = drive(60)  # past the small source's ranking, inside the big one's
    report = audit_session(session, client=client, against="sources", max_seconds=3600)
    assert fake.reads > 60
    by_id = {c.claimId: c for c in report.claims}
    assert by_id["c1"].verdict == "supported"  # ranked before the deadline, judged
    late = by_id["c2"]
    assert late.verdict == "error" and late.requests == 0 and not late.passages
    assert late.error is not None and late.error.kind == "time_limit"
    assert "not judged against s2" in late.error.message
    assert "while its passages were being ranked" in late.error.message
    assert late.quoteOverlap is None  # nothing was looked for
    asked = {k for r in client.requests for k in r["questions"]}
    assert asked and not any("c2" in k for k in asked)  # s2 was never sent
    assert report.cuts is not None
    (ranking,) = [c for c in report.cuts if "ranking" in c]
    assert "the citation audit's time limit was reached while ranking s2's passages" in ranking
    assert "1 cited source(s) (s2) were not judged" in ranking
    assert "the 1 claim(s) citing them" in ranking
    assert report.totals.verdicts.error == 1


def test_sources_after_the_deadline_are_not_ranked_at_all(
    tmp_path: Path, drive: Callable[[int | None], Clock]
) -> None:
    claims = [
        claim(f"c{i}", f"Aspirin reduces fever {i}.", "Aspirin is used", f"s{i}") for i in range(8)
    ]
    docs = {f"s{i}": SMALL for i in range(8)}
    session = load_session(write(tmp_path / "s", claims, docs))
    client = supports()
    drive(0)
    report = audit_session(session, client=client, against="sources", max_seconds=3600)
    assert client.requests == []
    assert {c.verdict for c in report.claims} == {"error"}
    assert all(c.error is not None and c.error.kind == "time_limit" for c in report.claims)
    assert all(
        "before its passages were ranked" in (c.error.message if c.error else "")
        for c in report.claims
    )
    assert report.cuts is not None
    assert any(
        "before ranking: 8 cited source(s) (s0, s1, s2, s3, s4 and 3 more)" in c
        for c in report.cuts
    )
    # The deterministic checks, past the same clock, say each quote was left unchecked.
    assert any("deterministic checks" in c and "8 claim(s)" in c for c in report.cuts)


def test_a_number_check_stopped_by_the_deadline_leaves_the_claim_unchecked_and_says_so(
    tmp_path: Path, drive: Callable[[int | None], Clock]
) -> None:
    """On main: the number forms of the whole source were read, whatever the time."""
    claims = [
        claim("c1", "It had 987654321 cases in 1901.", "In 1901 there were", "s1"),
        claim("c2", "It had 5 cases.", "there were", "s1"),
    ]
    session = load_session(write(tmp_path / "s", claims, {"s1": NUMBERS}))
    fake = drive(10)
    with Checker(session, deadline=Deadline(time.monotonic() + 3600)) as checker:
        first, _ = checker.review(session.findings[0].claims[0])
        second, _ = checker.review(session.findings[0].claims[1])
    assert fake.reads > 10
    (late,) = [p for p in first if p.check == "source_unreadable"]
    assert "was reached while its numbers were being looked for" in late.detail
    assert not [p for p in first if p.check == "number_mismatch"]  # nothing half read
    (after,) = [p for p in second if p.check == "source_unreadable"]
    assert "before this claim's turn" in after.detail
    assert checker.late == 2 and checker.stopped == "c1"
    (cut,) = checker.cuts()
    assert "the run's time limit was reached during the deterministic checks" in cut
    assert "the number check of claim c1 stopped midway" in cut
    assert "2 claim(s) had their quotes and numbers left unchecked" in cut


def test_the_audit_report_says_the_number_check_was_cut(
    tmp_path: Path, drive: Callable[[int | None], Clock]
) -> None:
    claims = [claim("c1", "It had 987654321 cases in 1901.", "In 1901 there were", "s1")]
    folder = write(tmp_path / "s", claims, {"s1": NUMBERS})
    deadline = Deadline(time.monotonic() + 3600)
    session = load_session(folder)
    assert session.texts is not None
    session.texts.deadline = deadline  # the run's, as the loader sets it in a run
    drive(3)
    report = audit_session(session, offline=True)
    (result,) = report.claims
    assert "source_unreadable" in {p.check for p in result.problems}
    assert result.verdict == "unchecked"
    assert report.cuts is not None and any("number check of claim c1" in c for c in report.cuts)
