"""Passages: offsets round-trip to the text, ids are stable, sizes are bounded."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.audit.passages import Passage, narrow, split

CASES = {
    "empty": "",
    "blank": " \n\n \t\n",
    "one sentence": "The river rose 3 metres in 2019.",
    "paragraphs": "First para. It has two sentences.\n\nSecond para here.\n\n\nThird one!",
    "unicode": "Ça va — très bien… Ünïcödé straße. 東京は大きい。大阪も大きい。\n\n😀 emoji line.",
    "crlf": "Line one.\r\n\r\nLine two is here.\r\n",
    "giant paragraph": " ".join(["word"] * 2000),
    "giant token": "x" * 5000,
    "many short": "\n\n".join(f"Heading {i}" for i in range(40)),
}


def _check(text: str, passages: list[Passage], max_chars: int) -> None:
    for p in passages:
        assert text[p.start : p.end] == p.text
        assert p.text == p.text.strip() and p.text
        assert len(p.text) <= max_chars
    starts = [p.start for p in passages]
    assert starts == sorted(starts)
    assert all(a.end <= b.start for a, b in itertools.pairwise(passages))
    assert [p.index for p in passages] == list(range(1, len(passages) + 1))
    # Nothing but white space is left between passages.
    covered = "".join(text[a.end : b.start] for a, b in itertools.pairwise(passages))
    assert not covered.strip()


@pytest.mark.parametrize("name", list(CASES))
def test_offsets_round_trip(name: str) -> None:
    text = CASES[name]
    passages = split("s4", text, max_chars=300)
    _check(text, passages, 300)
    if not text.strip():
        assert passages == []
    else:
        assert passages
        # Every non-space character of the text is in exactly one passage.
        assert "".join("".join(p.text.split()) for p in passages) == "".join(text.split())


def test_giant_paragraph_is_bounded() -> None:
    passages = split("s1", CASES["giant paragraph"], max_chars=300)
    assert len(passages) >= 2000 * 5 // 300
    assert all(len(p.text) <= 300 for p in passages)


def test_ids_are_stable_and_derived_from_source_and_order() -> None:
    text = CASES["paragraphs"]
    a = split("s4", text, max_chars=20, min_chars=0)
    b = split("s4", text, max_chars=20, min_chars=0)
    assert [p.id for p in a] == [p.id for p in b] == [f"s4:p{i}" for i in range(1, len(a) + 1)]
    assert a[0].text == "First para."


def test_short_paragraphs_pack_until_min_chars() -> None:
    passages = split("s", CASES["many short"], max_chars=200, min_chars=60)
    assert 1 < len(passages) < 40
    assert all(len(p.text) <= 200 for p in passages)


def test_sentences_split_at_the_bound() -> None:
    text = "Alpha beta gamma. Delta epsilon zeta. Eta theta iota."
    passages = split("s", text, max_chars=40, min_chars=0)
    assert [p.text for p in passages] == [
        "Alpha beta gamma. Delta epsilon zeta.",
        "Eta theta iota.",
    ]


@given(st.text(alphabet=st.sampled_from("ab .\n!é東 \t"), max_size=400))
def test_round_trip_property(text: str) -> None:
    _check(text, split("s", text, max_chars=50, min_chars=10), 50)


def test_narrow_keeps_relevant_passages_in_document_order() -> None:
    paras = [f"Filler paragraph number {i} about nothing in particular." for i in range(30)]
    paras[7] = "The dam on the Volta river was completed in 1965 by the government."
    paras[22] = "Cocoa exports from Ghana rose to 900,000 tonnes."
    text = "\n\n".join(paras)
    passages = split("s2", text, max_chars=120, min_chars=0)
    kept = narrow(passages, ["Ghana's cocoa exports rose", "the Volta dam was completed"], 2)
    assert [p.text for p in kept] == [paras[7], paras[22]]
    assert [p.index for p in kept] == [8, 23]  # ids keep their place in the whole document


def test_narrow_without_a_usable_query_keeps_the_first() -> None:
    passages = split("s", "\n\n".join(f"Para {i}." for i in range(9)), max_chars=10, min_chars=0)
    assert [p.index for p in narrow(passages, ["—"], 3)] == [1, 2, 3]
    assert narrow(passages, ["x"], 100) == passages
    with pytest.raises(ValueError):
        narrow(passages, ["x"], 0)
