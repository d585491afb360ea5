"""The page's text cleaning, made quicker, gives what its plain form gave.

`clean` returns printable text untouched, and `safe_url` finds a space by str.split();
each is checked against the plain form it replaced, on generated text and on every code
point for the character fact the quick form rests on.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from harness.page.text import _NEWLINES, _UNSAFE, _visible, clean, safe_url
from tests.support.tried import count


def reference_clean(text: str) -> str:
    return _UNSAFE.sub(_visible, _NEWLINES.sub("\n", text))


def test_everything_clean_replaces_is_refused_by_isprintable() -> None:
    chars = [chr(c) for c in range(0x110000)]
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
