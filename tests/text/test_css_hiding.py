"""Text that no browser shows never matches a quote (issue 22 §6): CSS read by a tokenizer.

Each row hides SECRET in a way a browser honours; what is shown stays. Rows marked kept
show that the cascade is followed (a later or stronger rule shows the text again) and
what is not supported stays in (it errs toward keeping text, and is documented).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.text.document import to_document
from tests.support.tried import count


def plain(markup: str) -> str:
    doc = to_document(markup.encode("utf-8"), name="page.html", isolated=False)
    assert doc.kind == "html"
    return doc.plain


HIDDEN = [
    '<p style="display:/**/none">SECRET</p>',
    '<p style="display : none ; color: red">SECRET</p>',
    '<p style="\\64 isplay:none">SECRET</p>',
    '<p style="displ\\61 y:\\6e one">SECRET</p>',
    '<p style="DISPLAY:NONE">SECRET</p>',
    '<p style="visibility:collapse">SECRET</p>',
    '<p style="visibility:/* x */hidden">SECRET</p>',
    '<p style="content-visibility:hidden">SECRET</p>',
    '<p style="color:red;display:none!important">SECRET</p>',
    "<noembed>SECRET</noembed>",
    "<noframes>SECRET</noframes>",
    "<style>.h{display:none}</style><p class='x h'>SECRET</p>",
    "<style>#h{display:none}</style><div id='h'><p>SECRET</p></div>",
    "<style>h3{display:none}</style><h3>SECRET</h3>",
    "<style>DIV.a.b{visibility:hidden}</style><div class='b a'>SECRET</div>",
    "<style>.x, .h {display:none}</style><p class='h'>SECRET</p>",
    "<style>/* */ .h /* */ { display: /**/ none }</style><p class='h'>SECRET</p>",
    "<style>.\\68 {display:none}</style><p class='h'>SECRET</p>",
    "<body><style>.h{display:none}</style><p class='h'>SECRET</p></body>",
    "<style>.h{display:none !important}</style><p class='h' style='display:block'>SECRET</p>",
    "<style>.h{display:block} p.h{display:none}</style><p class='h'>SECRET</p>",
    "<div style='visibility:hidden'><p>SECRET</p><span>SECRET</span></div>",
    # a closed <details>: the browser renders its summary only (issue 31 §5)
    "<details><summary>s</summary>SECRET</details>",
    "<details><summary>s</summary><p>SECRET</p><details open>SECRET</details></details>",
    "<details title='x'>SECRET<summary>s</summary></details>",
]


@pytest.mark.parametrize("markup", HIDDEN)
def test_text_css_hides_is_dropped(markup: str) -> None:
    text = plain(markup + "<p>shown text</p>")
    assert "SECRET" not in text
    assert "shown text" in text


SHOWN = [
    # the cascade: a later rule of the same weight, an inline style, visibility regained
    "<style>.h{display:none} .h{display:block}</style><p class='h'>SHOWN</p>",
    "<style>.h{display:none}</style><p class='h' style='display:block'>SHOWN</p>",
    "<style>p.h{display:none} #i{display:block}</style><p class='h' id='i'>SHOWN</p>",
    "<div style='visibility:hidden'><p style='visibility:visible'>SHOWN</p></div>",
    "<style media='print'>.h{display:none}</style><p class='h'>SHOWN</p>",
    # an open <details> shows its content; a closed one its summary (issue 31 §5)
    "<details open><summary>s</summary>SHOWN</details>",
    "<details><summary>SHOWN</summary>hidden until opened</details>",
    # not supported (said in harness/text/css.py): combinators, attributes, @media
    "<style>div p{display:none}</style><div><p>SHOWN</p></div>",
    "<style>[data-x]{display:none}</style><p data-x>SHOWN</p>",
    "<style>@media screen{.h{display:none}}</style><p class='h'>SHOWN</p>",
    # a class that does not match (case matters for classes)
    "<style>.H{display:none}</style><p class='h'>SHOWN</p>",
]


@pytest.mark.parametrize("markup", SHOWN)
def test_text_css_shows_is_kept(markup: str) -> None:
    assert "SHOWN" in plain(markup)


_hide = st.sampled_from(
    [
        "display:none",
        "display:/**/none",
        "\\64 isplay:none",
        "visibility:hidden",
        "visibility:collapse",
        "content-visibility:hidden",
    ]
)
_name = st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True)


def _escaped(name: str, how: int) -> str:
    """``name`` as CSS may write it: plain, or its first letter as a hex escape."""
    if how == 0:
        return name
    return f"\\{ord(name[0]):x} {name[1:]}"


@given(
    declaration=_hide,
    name=_name,
    how=st.integers(0, 1),
    where=st.sampled_from(["class", "id", "inline"]),
    noise=st.sampled_from(["", "color:red;", "/* c */", "margin: 0 ;"]),
)
def test_any_hiding_spelling_on_a_class_id_or_inline_drops_the_text(
    declaration: str, name: str, how: int, where: str, noise: str
) -> None:
    count("css: generated hiding rule")
    if where == "inline":
        markup = f'<p style="{noise}{declaration}">SECRET</p>'
    else:
        selector = ("." if where == "class" else "#") + _escaped(name, how)
        markup = f"<style>{selector}{{{noise}{declaration}}}</style><p {where}='{name}'>SECRET</p>"
    text = plain(markup + "<p>shown text</p>")
    assert "SECRET" not in text and "shown text" in text


def test_an_html_page_whose_text_says_pdf_is_html() -> None:
    page = b"<html><body><p>%PDF-1.7 is the header of a PDF file</p></body></html>"
    doc = to_document(page, name="sources/s1.html", isolated=False)
    assert doc.kind == "html" and "%PDF-1.7 is the header" in doc.plain
    text = to_document(b"A note: %PDF-1.4 starts a PDF.", name="s1.txt", isolated=False)
    assert text.kind == "text"
    # the signature as the leading bytes still wins over a wrong type or extension
    assert to_document(b"\n%PDF-1.4\n...", name="s1.txt", isolated=False).kind == "pdf"
