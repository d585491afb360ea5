"""Passages: offsets round-trip to the text, ids are stable, sizes are bounded."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.audit import passages as passages_module
from harness.audit.passages import (
    CLAIM_CHARS,
    MAX_CHARS,
    MAX_QUERY_TERMS,
    MAX_RANKED_CHARS,
    SourcePassage,
    narrow,
    rounded,
    select,
    split,
    tokens,
)

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


def _check(text: str, passages: list[SourcePassage], max_chars: int) -> None:
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


def test_short_paragraphs_pack_up_to_the_passage_size() -> None:
    text = "\n\n".join(f"Line {i} ends here." for i in range(40))
    passages = split("s", text, max_chars=200, min_chars=60)
    assert 1 < len(passages) <= len(text) // 200 + 2
    # Each passage but the last would overflow with the next paragraph added.
    for p, q in itertools.pairwise(passages):
        nxt = text[q.start :].split("\n", 1)[0].strip()
        assert len(p.text) <= 200 < q.start + len(nxt) - p.start


def test_one_sentence_paragraphs_pack_into_full_passages() -> None:
    sentences = [f"Sentence {i} tells of the river and its {i} dams." for i in range(60)]
    long = "\n".join(" ".join(sentences[i : i + 6]) for i in range(0, 60, 6))
    short = "\n".join(sentences)
    a, b = split("s", long), split("s", short)
    assert len(b) <= len(a)  # no more passages than the same text in long paragraphs
    assert sum(len(p.text) for p in b) / len(b) > 0.8 * MAX_CHARS


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


def test_headings_pack_only_while_a_passage_is_short() -> None:
    passages = split("s", CASES["many short"], max_chars=200, min_chars=60)
    assert 1 < len(passages) < 40
    assert all(len(p.text) < 60 + len("Heading 39") + 2 for p in passages)


def test_a_heading_starts_the_passage_of_the_text_it_heads() -> None:
    body = "The steps were designed with the essential elements of shared decisions. " * 3
    steps = "Step 1: Seek your patient's participation. Step 2: Help your patient explore."
    text = f"{body.strip()}\nEssential Steps of Shared Decisionmaking\n{steps}\nAbout\nMore."
    passages = split("s", text, max_chars=450)
    assert [p.text for p in passages] == [
        body.strip(),
        f"Essential Steps of Shared Decisionmaking\n{steps}\nAbout\nMore.",
    ]


def test_a_run_without_sentence_ends_is_cut_at_a_word_boundary() -> None:
    text = " ".join(f"word{i}" for i in range(400))
    passages = split("s", text, max_chars=100)
    assert len(passages) > 1
    for p in passages:
        assert p.text.split() == text[p.start : p.end].split()
        assert (p.start == 0 or text[p.start - 1] == " ") and (
            p.end == len(text) or text[p.end] == " "
        )


_SENTENCES = st.lists(
    st.text(alphabet=st.sampled_from("abc de"), min_size=1, max_size=120).map(
        lambda s: s.strip() or "x"
    ),
    min_size=1,
    max_size=30,
)


@given(_SENTENCES, st.integers(min_value=0, max_value=3))
def test_a_passage_ends_at_a_sentence_end_when_one_is_in_reach(
    bodies: list[str], breaks: int
) -> None:
    sentences = [b + "." for b in bodies]
    # Some sentences start a paragraph of their own.
    text = "".join(
        (("\n" if i % (breaks + 2) == 0 else " ") if i else "") + s for i, s in enumerate(sentences)
    )
    passages = split("s", text, max_chars=150, min_chars=40)
    _check(text, passages, 150)
    longest = max(len(s) for s in sentences)
    if longest <= 150:  # every sentence fits a passage: none is ever cut
        for p in passages:
            assert p.text.endswith(".")


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("Spain1986", ["spain", "1986"]),
        ("the 4th edition", ["4", "edit"]),
        ("Exports rose to 900,000 tonnes", ["export", "rose", "900000", "tonn"]),
        ("Running runners ran", ["run", "runner", "ran"]),
        ("It was the best of times", ["best", "time"]),
        ("Straße über Ölfelder", ["strass", "über", "ölfelder"]),  # words kept whole
        ("v2.5 API_key", ["v", "2.5", "api", "key"]),
    ],
)
def test_ranking_terms_are_stemmed_without_stop_words_and_numbers_apart(
    text: str, terms: list[str]
) -> None:
    assert tokens(text) == terms


def _doc() -> tuple[str, list[str]]:
    paras = [f"Filler paragraph number {i} about nothing in particular." for i in range(30)]
    paras[7] = "The dam on the Volta river was completed in 1965 by the government."
    paras[22] = "Cocoa exports from Ghana rose to 900,000 tonnes."
    return "\n\n".join(paras), paras


def test_narrow_keeps_relevant_passages_in_document_order() -> None:
    text, paras = _doc()
    passages = split("s2", text, max_chars=70, min_chars=0)
    found = narrow(
        passages, ["Ghana's cocoa exports rose", "the Volta dam was completed"], 70, neighbours=0
    )
    assert [p.text for p in found.passages] == [paras[7], paras[22]]
    assert [p.index for p in found.passages] == [8, 23]  # ids keep their place in the document
    assert [[p.text for p in own] for own in found.by_query] == [[paras[22]], [paras[7]]]


def test_each_claim_has_its_own_budget_whatever_else_cites_the_source() -> None:
    text, paras = _doc()
    passages = split("s2", text, max_chars=70, min_chars=0)
    claims = ["Ghana's cocoa exports rose", "the Volta dam was completed"]
    others = [f"filler paragraph number {i}" for i in (2, 12, 17, 27)]
    alone = narrow(passages, claims[:1], 300)
    crowded = narrow(passages, [*others, claims[0], *others], 300)
    assert crowded.by_query[len(others)] == alone.by_query[0]
    assert paras[22] in [p.text for p in alone.by_query[0]]
    for found in (alone, crowded):
        for own in found.by_query:
            assert sum(len(p.text) for p in own) <= 300
        assert {p.index for own in found.by_query for p in own} == {p.index for p in found.passages}


def test_a_kept_passage_brings_its_neighbours_within_the_budget() -> None:
    text, _ = _doc()
    passages = split("s2", text, max_chars=70, min_chars=0)
    found = narrow(passages, ["the Volta dam was completed"], 3 * 70, neighbours=1)
    assert [p.index for p in found.by_query[0]] == [7, 8, 9]


def test_narrow_without_a_usable_query_keeps_the_first() -> None:
    passages = split("s", "\n\n".join(f"Para {i}." for i in range(9)), max_chars=10, min_chars=0)
    found = narrow(passages, ["—"], 21, neighbours=0)  # three of 7 characters
    assert [p.index for p in found.passages] == [1, 2, 3]
    assert narrow(passages, ["para"], 1000).passages == passages
    with pytest.raises(ValueError):
        narrow(passages, ["x"], 0)


@pytest.mark.parametrize(
    ("text", "ranges"),
    [
        ("About 4,700 students attend it.", [(4650, 4750)]),
        ("roughly 75 thousand in 1820", [(74500, 75500)]),
        ("more than 12,000 people", [(12000, 13000)]),
        ("nearly 2,500 homes", [(2400, 2500)]),
        ("2.1 million visitors", [(2050000, 2150000)]),
        ("over 1,000 people, 4,651 students, in 1820", []),  # one significant digit; exact
    ],
)
def test_a_rounded_number_stands_for_the_range_it_rounds(
    text: str, ranges: list[tuple[float, float]]
) -> None:
    assert rounded(text) == [(float(a), float(b)) for a, b in ranges]


def _town() -> tuple[list[SourcePassage], list[str]]:
    paras = [f"The town recorded a new guildhall number {i} in the old quarter." for i in range(20)]
    paras[2] = "A museum opened in 1875 near the market."
    paras[4] = "The population figures show the population of the district grew."
    paras[6] = "A mill was built in 1875 by the river."
    paras[9] = "Enrolment at the college, chartered in 1899, stands at 4,651."
    paras[13] = "The mayor of the town is elected by the council of the town."
    paras[16] = "Since 1875 the council has been chaired by Lindqvist, a schoolteacher."
    paras[18] = "The Lindqvist family sold the brewery."
    return split("s3", "\n".join(paras), max_chars=80, min_chars=0), paras


def test_a_rounded_number_finds_the_number_it_rounds() -> None:
    passages, paras = _town()
    claim = "About 4,700 students attend the university in the town."
    found = narrow(passages, [claim], 80, neighbours=0)
    assert [p.text for p in found.by_query[0]] == [paras[9]]


def test_a_claims_numbers_and_names_outweigh_its_topic_words() -> None:
    passages, paras = _town()
    claim = "The population figures show that Greta Lindqvist became mayor of the town in 1875."
    found = narrow(passages, [claim], 80, neighbours=0)
    assert [p.text for p in found.by_query[0]] == [paras[16]]
    # Unweighted, the claim's topic words win.
    plain = narrow(passages, [claim], 80, neighbours=0, specific_weight=1.0)
    assert [p.text for p in plain.by_query[0]] == [paras[4]]
    # A name another claim citing the source uses too is their shared topic: not weighted
    # (its number still is, but alone it no longer outweighs the topic words here).
    shared = narrow(passages, [claim, "Lindqvist sold the brewery."], 80, neighbours=0)
    assert [p.text for p in shared.by_query[0]] == [paras[4]]


def _counted(monkeypatch: pytest.MonkeyPatch, name: str, measure: Callable[..., int]) -> list[int]:
    """The `measure` of each call to harness.audit.passages' `name`, which still runs."""
    real = getattr(passages_module, name)
    seen: list[int] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        seen.append(measure(*args, **kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(passages_module, name, counted)
    return seen


def _hostile() -> tuple[str, str]:
    rng = random.Random(22)
    words = [f"w{i}" for i in range(5000)]
    paras: list[str] = []
    size = 0
    while size < 8 * 1024 * 1024:
        paras.append(f"{rng.choice(words)} {rng.choice(words)}.")
        size += len(paras[-1]) + 1
    return "\n".join(paras), " ".join(rng.choice(words) for _ in range(4000))


def test_a_huge_claim_against_8_mib_of_tiny_paragraphs_is_bounded_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text, claim = _hostile()
    split_sizes = _counted(monkeypatch, "split", lambda source_id, text, **_: len(text))
    found = select("s1", text, [claim], names=["c1"])
    # Main took 42-45 s here (issue #22), 0.3 s now: the time is bench/bench_retrieval.py's
    # (hostile) to measure. Here, the work: one split of the ranked 2 MiB, not of all 8.
    assert split_sizes == [MAX_RANKED_CHARS]
    assert found.passages and all(p.end <= MAX_RANKED_CHARS for p in found.passages)
    assert sum(len(p.text) for p in found.by_query[0]) <= CLAIM_CHARS
    assert any("only the first 2,097,152 of" in n for n in found.notes)
    assert any(n.startswith(f"c1: only its {MAX_QUERY_TERMS} rarest of") for n in found.notes)


def test_claims_stating_rounded_numbers_against_8_mib_of_numbers_are_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(32)
    text = "\n".join(
        " ".join(f"{rng.randrange(100000):,}" for _ in range(6)) + "." for _ in range(200000)
    )
    claims = [f"About {rng.randrange(10, 99)},{rng.randrange(1, 9)}00 of them." for _ in range(50)]
    pools = _counted(monkeypatch, "_numbers", lambda pool, *_: len(pool))
    found = select("s1", text, claims)
    # Measured 1.2 s (bench/bench_retrieval.py, hostile): its time is the bench's. Here, the
    # work: the passages' numbers are gathered in one pass for all 50 claims, not one each.
    assert len(pools) == 1, pools
    for own in found.by_query:
        assert own and sum(len(p.text) for p in own) <= CLAIM_CHARS


def test_nothing_is_said_when_nothing_is_cut() -> None:
    text, _ = _doc()
    assert select("s2", text, ["the Volta dam"]).notes == []
