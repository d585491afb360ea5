"""The deterministic checks, as tables: one row per rule, and the snapshot store's limits."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from harness.audit.checks import (
    Checker,
    Snapshots,
    check_dangling,
    check_no_quote,
    check_quote_sources,
    check_quotes_in_sources,
    contains,
    normalise,
)
from harness.session.loader import load_session
from harness.session.models import Claim


def claim(
    text: str = "A claim.", quotes: list[tuple[str, str]] | None = None, **extra: Any
) -> Claim:
    data: dict[str, Any] = {"id": "c1", "text": text, "sourceIds": ["s1"], **extra}
    data["quotes"] = [{"sourceId": sid, "text": t} for sid, t in (quotes or [])]
    return Claim.model_validate(data)


# -- normalisation -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "quote", "found"),
    [
        ("The rate rose.", "The rate rose.", True),
        ("The Rate  ROSE\n sharply.", "the rate rose sharply", True),
        ("it \u201cworked\u201d well", 'it "worked" well', True),
        ("children\u2019s health", "children's health", True),
        ("from 1970\u20131989", "from 1970-1989", True),
        ("from 1970 \u2014 1989", "from 1970 - 1989", True),
        ("wait\u2026 then", "wait... then", True),
        ("the first part, a middle, and the end.", "the first part ... the end", True),
        ("the first part, a middle, and the end.", "the first part [...] the end", True),
        ("the end comes first. the first part", "the first part ... the end", False),
        ("rate of only 2%.Another obstacle", "rate of only 2%.", True),
        ("\ufb01nancial", "financial", True),  # NFKC folds the ligature
        ("soft\u00adhyphen", "softhyphen", True),
        ("The rate rose.", "The rate fell.", False),
        ("abc", "", True),  # nothing to look for
    ],
)
def test_contains_after_normalising(text: str, quote: str, found: bool) -> None:
    assert contains(normalise(text), normalise(quote)) is found


# -- dangling_source, no_quote, quote_source_not_cited ------------------------------------


@pytest.mark.parametrize(
    ("source_ids", "quotes", "known", "missing"),
    [
        (["s1"], [("s1", "q")], {"s1"}, []),
        (["s1", "s99"], [("s1", "q")], {"s1"}, ["s99"]),
        (["s1"], [("s3", "q")], {"s1"}, ["s3"]),  # a quote's source counts too
        (["s2", "s1"], [("s2", "q")], {"s3"}, ["s2", "s1"]),
        (["s99"], [], None, []),  # no sources.json: nothing to dangle from
    ],
)
def test_dangling_source(
    source_ids: list[str], quotes: list[tuple[str, str]], known: set[str] | None, missing: list[str]
) -> None:
    problems = check_dangling(claim(quotes=quotes, sourceIds=source_ids), known)
    assert (problems[0].sourceIds if problems else []) == missing
    assert all(p.check == "dangling_source" for p in problems)


@pytest.mark.parametrize(
    ("quotes", "flagged"),
    [
        ([], "the claim has no quote"),
        ([("s1", "  "), ("s1", "")], "every quote of the claim is blank"),
        ([("s1", ""), ("s1", "text")], None),
        ([("s1", "text")], None),
    ],
)
def test_no_quote(quotes: list[tuple[str, str]], flagged: str | None) -> None:
    problems = check_no_quote(claim(quotes=quotes))
    assert (problems[0].detail if problems else None) == flagged


@pytest.mark.parametrize(
    ("source_ids", "quotes", "flagged"),
    [
        (["s1"], [("s1", "a")], []),
        (["s1"], [("s1", "a"), ("s2", "b")], [1]),
        ([], [("s1", "a")], [0]),
        (["s1", "s2"], [("s2", "a"), ("s1", "b")], []),
    ],
)
def test_quote_source_not_cited(
    source_ids: list[str], quotes: list[tuple[str, str]], flagged: list[int]
) -> None:
    problems = check_quote_sources(claim(quotes=quotes, sourceIds=source_ids))
    assert [p.quote for p in problems] == flagged
    assert all(p.check == "quote_source_not_cited" for p in problems)


# -- quote_not_in_source ------------------------------------------------------------------

S1 = (
    "Studying 111 countries from 1970 to 1989, the researchers found that industrialized "
    "nations had a growth rate of 2.3% per year per capita, while developing countries with "
    "open trade policies had a rate of 4.5%. Another major obstacle is income."
)
S2 = "Remaining trade barriers were concentrated in agricultural products and manufactures."


def session_with(tmp_path: Path, snapshots: dict[str, str | bytes]) -> Path:
    folder = tmp_path / "sess"
    (folder / "findings").mkdir(parents=True)
    (folder / "sources").mkdir()
    for name, body in snapshots.items():
        target = folder / "sources" / name
        if isinstance(body, bytes):
            target.write_bytes(body)
        else:
            target.write_text(body, encoding="utf-8")
    ids = sorted({n.split(".")[0] for n in snapshots} | {"s1", "s2"})
    sources = {"sources": [{"id": i, "url": f"https://example.org/{i}"} for i in ids]}
    (folder / "sources.json").write_text(json.dumps(sources))
    finding = {"id": "sq1", "subQuestion": "q", "claims": []}
    (folder / "findings" / "sq1.json").write_text(json.dumps(finding))
    return folder


@pytest.mark.parametrize(
    ("quote", "source", "flagged", "similar", "found_in"),
    [
        ("developing countries with open trade policies had a rate of 4.5%", "s1", False, 0, None),
        ("Developing  countries with OPEN trade policies", "s1", False, 0, None),
        ("Studying 111 countries ... had a rate of 4.5%.", "s1", False, 0, None),
        # one word changed: close, but not in the source
        (
            "developing countries with closed trade policies had a rate of 4.5%",
            "s1",
            True,
            85,
            None,
        ),
        ("Independent auditors reviewed every figure in this report.", "s1", True, 0, None),
        # a real passage of s2 credited to s1
        ("trade barriers were concentrated in agricultural products", "s1", True, 0, ["s2"]),
        ("anything at all", "s9", False, 0, None),  # no snapshot: nothing to check against
    ],
)
def test_quote_not_in_source(
    tmp_path: Path,
    quote: str,
    source: str,
    flagged: bool,
    similar: float,
    found_in: list[str] | None,
) -> None:
    session = load_session(session_with(tmp_path, {"s1.txt": S1, "s2.txt": S2}))
    problems = check_quotes_in_sources(claim(quotes=[(source, quote)]), Snapshots(session))
    assert bool(problems) is flagged
    if problems:
        p = problems[0]
        assert p.check == "quote_not_in_source" and p.quote == 0
        assert p.similarity is not None and p.similarity >= similar
        assert p.foundIn == found_in
        assert "sources/s1.txt" in p.detail
        if similar:
            assert p.nearest and "trade policies" in p.nearest
            assert f"{p.similarity:g}%" in p.detail


def test_html_snapshot_is_read_as_text(tmp_path: Path) -> None:
    page = (
        "<html><head><script>var x = 1;</script></head>"
        "<body><p>Aspirin <b>reduces</b> fever.</p></body></html>"
    )
    session = load_session(session_with(tmp_path, {"s1.html": page}))
    snapshots = Snapshots(session)
    assert check_quotes_in_sources(claim(quotes=[("s1", "Aspirin reduces fever")]), snapshots) == []
    assert check_quotes_in_sources(claim(quotes=[("s1", "var x = 1")]), snapshots)


def test_a_source_with_two_snapshots_is_read_from_the_preferred_one(tmp_path: Path) -> None:
    # One answer for every reader: the .txt counts (as WebFetch shows it), the .html is
    # reported by the loader and not silently merged in.
    session = load_session(
        session_with(tmp_path, {"s1.txt": "alpha beta", "s1.html": "<p>gamma</p>"})
    )
    snapshots = Snapshots(session)
    assert check_quotes_in_sources(claim(quotes=[("s1", "alpha beta")]), snapshots) == []
    assert check_quotes_in_sources(claim(quotes=[("s1", "gamma")]), snapshots)
    assert [p.code for p in session.problems] == ["ambiguous_snapshot"]


@pytest.mark.parametrize(
    ("name", "body", "why"),
    [
        ("s1.pdf", b"%PDF-1.7\x00\x00binary", "the PDF is damaged"),
        ("s1.pdf", b"", "is empty"),
        ("s1.bin", b"\x89PNG\r\n\x1a\n\x00\x00\x00", "a PNG image"),
    ],
    ids=["broken-pdf", "empty-pdf", "png"],
)
def test_a_snapshot_that_cannot_become_text_is_a_problem(
    tmp_path: Path, name: str, body: bytes, why: str
) -> None:
    session = load_session(session_with(tmp_path, {name: body}))
    [problem] = check_quotes_in_sources(claim(quotes=[("s1", "some text")]), Snapshots(session))
    assert problem.check == "source_unreadable" and problem.sourceIds == ["s1"]
    assert why in problem.detail and f"sources/{name}" in problem.detail
    assert any(p.code == "snapshot_unreadable" for p in session.problems)


def test_an_empty_text_snapshot_holds_nothing(tmp_path: Path) -> None:
    session = load_session(session_with(tmp_path, {"s1.txt": b""}))
    [problem] = check_quotes_in_sources(claim(quotes=[("s1", "some text")]), Snapshots(session))
    assert problem.check == "quote_not_in_source"


def test_non_utf8_snapshot_is_read_as_windows_1252(tmp_path: Path) -> None:
    session = load_session(session_with(tmp_path, {"s1.txt": "caf\u00e9 au lait".encode("cp1252")}))
    assert not check_quotes_in_sources(claim(quotes=[("s1", "café au lait")]), Snapshots(session))


def test_snapshot_linking_out_of_the_session_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("top secret text")
    folder = session_with(tmp_path, {})
    os.symlink(outside, folder / "sources" / "s1.txt")
    session = load_session(folder)
    snapshots = Snapshots(session)
    assert snapshots.get("s1") is None
    assert check_quotes_in_sources(claim(quotes=[("s1", "other words")]), snapshots) == []


def test_snapshots_are_read_once_and_capped(tmp_path: Path) -> None:
    session = load_session(session_with(tmp_path, {"s1.txt": "word " * 1000}))
    snapshots = Snapshots(session, file_cap=100)
    first = snapshots.get("s1")
    assert first is not None and first.truncated and len(first.text) <= 100
    assert snapshots.get("s1") is first
    problems = check_quotes_in_sources(claim(quotes=[("s1", "not there")]), snapshots)
    assert "first" in problems[0].detail  # says only part of the snapshot was read


def test_checker_runs_every_check_in_order(tmp_path: Path) -> None:
    folder = session_with(tmp_path, {"s1.txt": S1})
    session = load_session(folder)
    c = claim(
        "Growth was 9% in s1.",
        [("s1", "fabricated words"), ("s7", "other")],
        sourceIds=["s1"],
    )
    problems, hints = Checker(session).review(c)
    # s7 has no stored text: 9% might be in it, so the number is a hint, not a problem
    assert [p.check for p in problems] == [
        "dangling_source",
        "quote_not_in_source",
        "quote_source_not_cited",
    ]
    assert [(h.check, h.numbers) for h in hints] == [("number_mismatch", ["9"])]
    assert Checker(session).check(c) == problems
    only_s1 = claim("Growth was 9% in s1.", [("s1", "fabricated words")], sourceIds=["s1", "s7"])
    assert [p.check for p in Checker(session).check(only_s1)] == [
        "dangling_source",
        "quote_not_in_source",
        "number_mismatch",
    ]
