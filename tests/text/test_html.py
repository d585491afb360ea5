"""HTML to text: visible text only, block structure, the two renderings."""

from __future__ import annotations

import pytest

from harness.text.document import to_document


def doc(markup: str) -> tuple[str, str]:
    d = to_document(markup.encode("utf-8"), name="page.html")
    assert d.kind == "html"
    return d.plain, d.marked


@pytest.mark.parametrize(
    ("markup", "plain", "marked"),
    [
        ("<p>a</p><p>b</p>", "a\nb", "a\n\nb"),
        ("<h2>T</h2>text", "T\ntext", "## T\n\ntext"),
        ("line<br>break", "line\nbreak", "line\n\nbreak"),
        ("<pre>  keep\n    this</pre>", "  keep\n    this", "  keep\n    this"),
        (
            "<table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table>",
            "A B\n1 2",
            "A | B\n1 | 2",
        ),
        ("<ul><li>one <b>two</b></li><li>three</li></ul>", "one two\nthree", "- one two\n- three"),
        ("<ol><li><p>para</p><p>more</p></li></ol>", "para\nmore", "- para\n\nmore"),
        ("<p>&lt;script&gt; &amp; &#169; &eacute;</p>", "<script> & © é", "<script> & © é"),
        ("<title>Page</title><p>body</p>", "body", "Title: Page\n\nbody"),
        ("<p>un<b>closed <i>tags</p>after", "unclosed tags\nafter", "unclosed tags\n\nafter"),
    ],
    ids=[
        "paragraphs", "heading", "br", "pre", "table", "list", "list-paragraphs", "entities",
        "title", "malformed",
    ],
)  # fmt: skip
def test_structure(markup: str, plain: str, marked: str) -> None:
    assert doc(markup) == (plain, marked)


@pytest.mark.parametrize(
    "markup",
    [
        "<div hidden><div>SECRET</div></div>shown",
        "<div hidden>SECRET<p>still hidden</div>shown",  # an implied </p> does not leak it
        '<span style="display: none">SECRET</span>shown',
        '<span style="DISPLAY:NONE">SECRET</span>shown',
        '<span style="visibility : hidden">SECRET</span>shown',
        '<div aria-hidden="true">SECRET</div>shown',
        '<input type="hidden" value="SECRET">shown',
        "<script>var SECRET = 1; if (a < b) {}</script>shown",
        "<style>.SECRET { color: red }</style>shown",
        "<template><p>SECRET</p></template>shown",
        "<head><title>t</title><meta name=x content=SECRET></head><body>shown",
        "<svg><text>SECRET</text></svg>shown",
        "<!-- SECRET -->shown",
        "<select><option>SECRET</option></select>shown",
        "<nav><a>SECRET</a></nav><p>" + "shown " * 200 + "</p>",
    ],
)
def test_hidden_content_is_dropped(markup: str) -> None:
    plain, marked = doc(markup)
    assert "SECRET" not in plain and "SECRET" not in marked
    assert "shown" in plain


def test_a_nav_that_swallows_the_page_is_kept() -> None:
    plain, _ = doc("<nav><a>Home</a><h1>Title</h1>" + "<p>" + "word " * 300 + "</p>")
    assert "Title" in plain and "word word" in plain


def test_a_quote_across_list_items_and_cells_is_one_line_of_words_in_plain() -> None:
    plain, marked = doc(
        "<p>Intro.</p><ul><li>Sea level rose</li><li>3.4 mm a year.</li></ul>"
        "<table><tr><td>Tide gauges</td><td>and satellites</td></tr></table>"
    )
    assert (
        " ".join(plain.split()) == "Intro. Sea level rose 3.4 mm a year. Tide gauges and satellites"
    )
    assert "- Sea level rose\n- 3.4 mm a year." in marked
    assert "Tide gauges | and satellites" in marked


def test_a_page_with_no_visible_text_is_a_problem() -> None:
    d = to_document(b"<html><body><script>render()</script></body></html>", name="app.html")
    assert d.problem is not None and "no visible text" in d.problem


def test_deep_nesting_does_not_recurse() -> None:
    d = to_document(("<div>" * 5000 + "deep" + "</div>" * 5000).encode(), name="d.html")
    assert d.plain == "deep"
