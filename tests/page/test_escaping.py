"""Untrusted content stays text: a table of payloads, each planted in every place a page
shows session or web content, against what a browser's tokenizer then sees."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.page import build, load_page, render_session
from harness.page.render import csp
from harness.page.text import clean, safe_url
from tests.support.page_builders import MARKER, TEXT_PLACES, hostile_session, parse

PAYLOADS = {
    "script element": f"<script>{MARKER}</script>",
    "script, upper case": f"<SCRIPT SRC=//evil.example/x.js>{MARKER}</SCRIPT>",
    "event-handler attribute": f'<img src=x onerror="{MARKER}">',
    "svg onload": f"<svg/onload={MARKER}>",
    "attribute breakout (double quote)": f'" onmouseover="{MARKER}" x="',
    "attribute breakout (single quote)": f"' onfocus='{MARKER}' autofocus x='",
    "javascript: link": f'<a href="javascript:{MARKER}">click</a>',
    "style breakout": f"</style><script>{MARKER}</script><style>",
    "textarea breakout": f"</textarea><script>{MARKER}</script>",
    "title breakout": f"</title><script>{MARKER}</script>",
    "comment trick": f"--><script>{MARKER}</script><!--",
    "CDATA trick": f"<![CDATA[</p><script>{MARKER}</script>]]>",
    "iframe srcdoc": f'<iframe srcdoc="<script>{MARKER}</script>"></iframe>',
    "meta refresh": '<meta http-equiv="refresh" content="0;url=https://evil.example/">',
    "base href": '<base href="https://evil.example/">',
    "entity-encoded script": f"&lt;script&gt;{MARKER}&lt;/script&gt;",
    "template injection": "{{ 7*7 }}{% raw %}${7*7}",
    "bidi override": "invoice\u202egnp.exe",
    "bidi isolates": "a\u2066b\u2067c\u2068d\u2069e\u202ax\u202by\u202cz\u202d",
    "control characters": "nul\x00 bell\x07 esc\x1b[31m del\x7f c1\x85 ls\u2028ps\u2029",
}
ALLOWED_TAGS = {
    "button",  # the summary badges that filter (type=button, no form)
    "del",  # a near-miss quote against its passage, word by word
    "ins",
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "main",
    "header",
    "footer",
    "section",
    "h1",
    "h2",
    "h3",
    "p",
    "ul",
    "li",
    "dl",
    "dt",
    "dd",
    "strong",
    "em",
    "code",
    "span",
    "div",
    "blockquote",
    "q",
    "mark",
    "details",
    "summary",
    "article",
    "form",
    "fieldset",
    "legend",
    "label",
    "input",
    "select",
    "option",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "pre",
    "svg",
    "rect",
    "a",
    "script",
    "figure",
    "figcaption",
    "text",
}
BIDI = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def _render(tmp_path: Path, payload: str) -> str:
    folder = hostile_session(tmp_path / "sess", payload)
    return render_session(load_page(folder), nonce="n0nce")


def assert_inert(html: str) -> None:
    """What a browser would build from `html` can run, load or break nothing."""
    page = parse(html)
    tags = [t for t, _ in page.tags]
    assert set(tags) <= ALLOWED_TAGS, set(tags) - ALLOWED_TAGS
    assert tags.count("script") == 1 and tags.count("style") == 1
    for tag, attrs in page.tags:
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name, value)
            assert name not in ("src", "srcdoc", "formaction", "action", "style"), (tag, name)
        if tag in ("script", "style"):
            assert attrs == {"nonce": "n0nce"}
        if tag == "a":
            href = attrs["href"] or ""
            assert href.lower().startswith(("https://", "http://")), href
            assert attrs.get("rel") == "noopener noreferrer"
        if tag == "meta":
            assert set(attrs) <= {"charset", "http-equiv", "content", "name"}
            if "http-equiv" in attrs:
                assert attrs["http-equiv"] == "Content-Security-Policy"
                assert attrs["content"] == csp("n0nce")
    assert page.comments == ["doctype html"]  # no comment or CDATA section was opened
    text = "".join(page.text)
    assert not BIDI.search(text) and not CONTROL.search(text.replace("\n", "").replace("\t", ""))


@pytest.mark.parametrize("payload", list(PAYLOADS.values()), ids=list(PAYLOADS))
def test_payload_is_shown_as_text_in_every_place(tmp_path: Path, payload: str) -> None:
    html = _render(tmp_path, payload)
    assert_inert(html)
    text = "".join(parse(html).text)
    shown = clean(payload)
    # Every place shows the payload as text (some places show it twice, e.g. the passage).
    assert text.count(shown) >= len(TEXT_PLACES), (text.count(shown), len(TEXT_PLACES))
    if "<" in payload:
        assert payload not in html  # never emitted raw


@pytest.mark.parametrize(
    ("url", "link"),
    [
        ("https://example.org/a?b=1&c=2#d", True),
        ("http://example.org/", True),
        ("HTTPS://EXAMPLE.ORG/X", True),
        ('https://example.org/"onmouseover="x', True),  # a link, its quote escaped
        ("javascript:alert(1)", False),
        ("JaVaScRiPt:alert(1)", False),
        (" javascript:alert(1)", False),
        ("java\tscript:alert(1)", False),
        ("javascript&colon;alert(1)", False),
        ("data:text/html,<script>alert(1)</script>", False),
        ("data:image/svg+xml;base64,PHN2Zz4=", False),
        ("vbscript:msgbox(1)", False),
        ("file:///etc/passwd", False),
        ("//evil.example/x", False),
        ("/relative/path", False),
        ("https:evil.example", False),
        ("https://", False),
        ("https://exa\u202emple.org/", False),
        ("https://example.org/\x00", False),
        ("", False),
    ],
)
def test_only_http_urls_become_links(tmp_path: Path, url: str, link: bool) -> None:
    assert (safe_url(url) is not None) is link
    html = render_session(
        load_page(hostile_session(tmp_path / "s", "plain", url=url)), nonce="n0nce"
    )
    assert_inert(html)
    hrefs = [a.get("href") for t, a in parse(html).tags if t == "a"]
    assert (url in hrefs) is link  # the parser decodes &#34; back: the attribute held the URL
    if url and not link:
        assert clean(url) in "".join(parse(html).text)  # shown, as text


def test_each_page_has_its_own_nonce(tmp_path: Path) -> None:
    page = load_page(hostile_session(tmp_path / "s", "plain"))
    first, second = render_session(page), render_session(page)
    nonces = [re.search(r'<script nonce="([0-9a-f]{32})">', h) for h in (first, second)]
    assert nonces[0] and nonces[1] and nonces[0].group(1) != nonces[1].group(1)
    meta = [a for t, a in parse(first).tags if t == "meta" and "http-equiv" in a]
    assert f"script-src 'nonce-{nonces[0].group(1)}'" in (meta[0]["content"] or "")


def test_csp_allows_no_request() -> None:
    policy = csp("abc")
    assert policy.startswith("default-src 'none';")
    for directive in ("img-src 'none'", "connect-src 'none'", "font-src 'none'", "base-uri 'none'"):
        assert directive in policy
    assert "unsafe-inline" not in policy and "http" not in policy


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("abc\u202efed", "abc‹U+202E›fed"),
        ("\u2066x\u2069", "‹U+2066›x‹U+2069›"),
        ("a\u200fb", "a‹U+200F›b"),
        ("tab\tnew\nline", "tab\tnew\nline"),
        ("crlf\r\nend\rx", "crlf\nend\nx"),
        ("a\u2028b", "a\nb"),
        ("\x00\x1b\x7f\x9f", "‹U+0000›‹U+001B›‹U+007F›‹U+009F›"),
        ("\ufeffbom", "‹U+FEFF›bom"),
        ("emoji 🙂 and ü stay", "emoji 🙂 and ü stay"),
    ],
)
def test_clean_makes_controls_visible(text: str, shown: str) -> None:
    assert clean(text) == shown


def test_hostile_folder_name_and_index_stay_inert(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for name in ('<img src=x onerror=alert(1)>"', "javascript:alert(1)", "plain"):
        hostile_session(root / name, f"<script>{MARKER}</script>")
    written = build(root)
    html = written.path.read_text(encoding="utf-8")
    page = parse(html)
    assert {t for t, _ in page.tags} <= ALLOWED_TAGS
    hrefs = [a["href"] for t, a in page.tags if t == "a"]
    assert len(hrefs) == 3 and all(h and h.startswith("./") for h in hrefs)
    assert all(":" not in (h or "") and "<" not in (h or "") for h in hrefs)
    assert "<img" not in html and MARKER not in html
    assert "&lt;img src=x onerror=alert(1)&gt;&#34;" in html  # the name, as text
    for session_page in written.pages:
        assert_inert(
            session_page.read_text(encoding="utf-8").replace(
                re.search(r'nonce="([0-9a-f]+)"', session_page.read_text()).group(1),
                "n0nce",  # type: ignore[union-attr]
            )
        )


@pytest.mark.parametrize(
    "invisible", ["\u200b", "\u200c", "\u200d", "\u2060", "\u00ad", "\U000e0041", "\u2063"]
)
def test_a_name_with_an_invisible_character_reads_differently(invisible: str) -> None:
    """Issue 31 §5: zero-width, joiner, word-joiner, soft-hyphen and tag characters were
    printed raw, so five different session names looked the same on the index."""
    plain, hidden = "session-one", f"session{invisible}-one"
    assert clean(hidden) != clean(plain) and invisible not in clean(hidden)
    assert f"U+{ord(invisible):04X}" in clean(hidden)


def test_the_index_shows_look_alike_names_apart(tmp_path: Path) -> None:
    from tests.support.sessions import write_small_session

    names = ["twin", "t\u200bwin", "tw\u2060in", "twi\u00adn", "t\U000e0041win"]
    for name in names:
        write_small_session(tmp_path / "root" / name)
    index = build(tmp_path / "root", None, None)
    text = "".join(parse(index.path.read_text(encoding="utf-8")).text)
    for name in names:
        assert clean(name) in text
    assert len({clean(n) for n in names}) == len(names)
