"""The page's quote marks and text cleaning, made quicker, give what the plain forms gave.

`quote_spans` finds a quote whole in its passage by a string search and folds words as one
string, and `clean` returns printable text untouched; each is checked here against the
plain form it replaced, kept below as the reference, on generated text (case, punctuation,
words of punctuation alone, any space character, repeats, quotes past the passage's end)
and on every code point for the character facts the quicker forms rest on.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from harness.page import inputs, load_page, render_session
from harness.page import render as page_render
from harness.page.inputs import SPAN_RUN, _folded_text, quote_spans
from harness.page.text import _NEWLINES, _UNSAFE, _visible, clean, safe_url
from tests.support.page_builders import judged_fixture
from tests.support.tried import count

_WORD = re.compile(r"\S+")
_FOLD = re.compile(r"[\W_]+")


def _folded(word: str) -> str:
    """A word folded as the page once folded each, by a casefold and a substitution (what
    is no letter or digit dropped): the reference `_folded_text` is held to."""
    return _FOLD.sub("", word.casefold())


def reference_quote_spans(
    passage: str, quote: str, folds: dict[str, str] | None = None
) -> list[tuple[int, int]]:
    """quote_spans as it was: every quote through difflib's matcher, word by word (it kept
    no folded text, so `folds` is not used)."""
    found = list(_WORD.finditer(passage))
    want = [_folded(w) for w in _WORD.findall(quote)]
    words = inputs.SPAN_WORDS
    if not found or not want or len(found) > words or len(want) > words:
        return []
    have = [_folded(m.group(0)) for m in found]
    least = min(SPAN_RUN, len(want), len(have))
    spans: list[tuple[int, int]] = []
    matcher = difflib.SequenceMatcher(None, want, have, autojunk=False)
    for _, j, size in matcher.get_matching_blocks():
        if size >= least and size:
            spans.append((found[j].start(), found[j + size - 1].end()))
    return spans


def reference_clean(text: str) -> str:
    return _UNSAFE.sub(_visible, _NEWLINES.sub("\n", text))


# Few distinct words, so runs repeat and the matcher's choice between equal runs matters;
# each in forms that fold alike ("Rate", "rate,", "RATE") and some that fold to nothing.
_STEMS = ["the", "rate", "fell", "45", "in_2020", "ß", "straße", "İstanbul", "naïve", "中文"]
_MARKS = ["", ",", ".", "'", "\u201c", "\u2014", "%", "_", "(", "\u00ad"]
_SPACES = [" ", " ", " ", "  ", "\n", "\t", "\u00a0", "\u2028", "\x1c", "\u3000"]


@st.composite
def _word(draw: st.DrawFn) -> str:
    if draw(st.integers(0, 9)) == 0:  # a word of punctuation alone
        return draw(st.sampled_from(["\u2014", "-", "&", "...", "_", "\u2022"]))
    stem = draw(st.sampled_from(_STEMS))
    stem = draw(st.sampled_from([stem, stem.upper(), stem.title()]))
    return draw(st.sampled_from(_MARKS)) + stem + draw(st.sampled_from(_MARKS))


@st.composite
def _text(draw: st.DrawFn, words: list[str]) -> str:
    out = draw(st.sampled_from(["", " ", "\n"]))
    for word in words:
        out += word + draw(st.sampled_from(_SPACES))
    return out if draw(st.booleans()) else out.rstrip()


@st.composite
def _passage_and_quote(draw: st.DrawFn) -> tuple[str, str]:
    passage = draw(st.lists(_word(), min_size=0, max_size=40))
    # A quote: a run of the passage (whole, or running past either end), changed here and
    # there, or words of its own.
    lo = draw(st.integers(0, len(passage)))
    hi = draw(st.integers(lo, len(passage)))
    quote = list(passage[lo:hi])
    if draw(st.booleans()):
        quote = draw(st.lists(_word(), max_size=6)) + quote + draw(st.lists(_word(), max_size=6))
    for _ in range(draw(st.integers(0, 3))):
        if quote:
            quote[draw(st.integers(0, len(quote) - 1))] = draw(_word())
    if draw(st.integers(0, 3)) == 0:  # runs of the passage, in any order, words between
        quote = []
        for _ in range(draw(st.integers(1, 4))):
            lo = draw(st.integers(0, len(passage)))
            quote += passage[lo : draw(st.integers(lo, len(passage)))]
            quote += draw(st.lists(_word(), max_size=2))
    if draw(st.integers(0, 5)) == 0:
        quote = draw(st.lists(_word(), max_size=30))
    return draw(_text(passage)), draw(_text(quote))


@given(pair=_passage_and_quote())
# Runs of exactly SPAN_RUN words beside the longest, and a run as long as the range it is in.
@example(pair=("a b c d X e f g h i", "a b c d e f g h i"))
@example(pair=("e f g h i X a b c d", "e f g h i a b c d"))
@example(pair=("a b c d e", "a b c d x a b c d e"))
def test_quote_spans_are_the_matchers_spans(pair: tuple[str, str]) -> None:
    count("page: quote spans vs the matcher's")
    passage, quote = pair
    assert quote_spans(passage, quote) == reference_quote_spans(passage, quote)


@given(pairs=st.lists(_passage_and_quote(), max_size=5))
def test_a_page_keeps_each_text_it_folded_under_that_text(
    pairs: list[tuple[str, str]],
) -> None:
    count("page: quote spans with the page's folded texts")
    folds: dict[str, str] = {}
    for passage, quote in pairs + pairs[::-1]:
        assert quote_spans(passage, quote, folds) == reference_quote_spans(passage, quote)
    texts = {t for pair in pairs for t in pair}
    assert set(folds) <= texts and all(folds[t] == _folded_text(t) for t in folds)
    assert {p for p, q in pairs if p.strip() and q.strip()} <= set(folds)


@given(pair=_passage_and_quote())
def test_quote_spans_past_the_word_limit_are_none_as_before(
    pair: tuple[str, str],
) -> None:
    count("page: quote spans vs the matcher's, past SPAN_WORDS")
    passage, quote = pair
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(inputs, "SPAN_WORDS", 6)
        assert quote_spans(passage, quote) == reference_quote_spans(passage, quote)


@given(text=st.text(max_size=80))
def test_a_text_folds_as_one_string_as_it_does_word_by_word(text: str) -> None:
    count("page: folded as one string vs word by word")
    assert _folded_text(text) == "\n".join(_folded(w) for w in _WORD.findall(text))


def test_the_character_facts_the_quick_forms_rest_on_hold_for_every_code_point() -> None:
    chars = [chr(c) for c in range(0x110000)]
    everything = "".join(chars)
    # str.split() and `_WORD` part words alike: both on what str.isspace() calls a space.
    assert [c for c in chars if bool(re.fullmatch(r"\s", c)) != c.isspace()] == []
    # `_FOLD` drops what is no letter or digit: [\W_] is what str.isalnum() refuses.
    assert [c for c in chars if bool(re.fullmatch(r"[\W_]", c)) == c.isalnum()] == []
    # casefold goes a character at a time, and no character but the newline folds into one.
    assert everything.casefold() == "".join(c.casefold() for c in chars)
    assert [c for c in chars if "\n" in c.casefold()] == ["\n"]
    # Everything `clean` replaces is something str.isprintable() refuses.
    assert [c for c in chars if _UNSAFE.match(c) and c.isprintable()] == []
    assert not "\r".isprintable()


@given(text=st.text(max_size=60))
def test_clean_is_what_its_two_substitutions_give(text: str) -> None:
    count("page: clean vs its substitutions")
    assert clean(text) == reference_clean(text)


@given(url=st.text(alphabet=st.sampled_from([*"htps:/a.b", " ", "\t", "\u00a0", "\u3000"])))
def test_a_url_with_any_space_is_never_a_link(url: str) -> None:
    count("page: a URL with a space")
    if any(c.isspace() for c in url):
        assert safe_url(url) is None
    elif safe_url(url) is not None:
        assert url.startswith(("http://", "https://"))


def test_a_quote_is_found_in_a_passage_past_the_word_limit_no_more() -> None:
    passage = " ".join(f"word{i}" for i in range(inputs.SPAN_WORDS + 1))
    assert quote_spans(passage, "word1 word2 word3 word4") == []
    shorter = passage.rsplit(" ", 1)[0]
    assert quote_spans(shorter, "word1 word2 word3 word4") == [(6, 29)]


_GENERATED = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")


@pytest.mark.parametrize("name", ["showcase", "shared-source"])
def test_the_page_is_the_one_the_plain_forms_draw(name: str, tmp_path: Path) -> None:
    """A judged fixture's page, byte for byte, with the reference forms put back."""
    folder = judged_fixture(name, tmp_path)
    html = render_session(load_page(folder), nonce="0" * 32)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(inputs, "quote_spans", reference_quote_spans)
        patch.setattr(page_render, "clean", reference_clean)
        plain = render_session(load_page(folder), nonce="0" * 32)
    assert "<mark>" in html
    assert _GENERATED.sub("", html) == _GENERATED.sub("", plain)
