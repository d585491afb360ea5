"""Documents: kind selection, the plain/marked renderings, block offsets, never raising."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.text.document import KINDS, Limits, to_document
from tests.support.pdfs import make_pdf
from tests.support.tried import count

SAMPLES = {
    "text": (b"First paragraph\nwraps here.\n\n\nSecond  paragraph.\n", "note.txt", None),
    "markdown": (
        b"# Title\n\nSome *text*.\n\n- item one\n- item two\n1. first\n> quoted\n\n"
        b"| a | b |\n|---|---|\n| 1 | 2 |\n",
        "readme.md",
        None,
    ),
    "json": (b'{"claim": "verified",\n "n": 3}', "data.json", None),
    "html": (
        b"<h1>H</h1><p>Para <b>one</b>.</p><ul><li>x</li><li>y</li></ul>"
        b"<table><tr><td>c1</td><td>c2</td></tr></table>",
        "page",
        "text/html; charset=utf-8",
    ),
    "pdf": (make_pdf(["Page one text.", "Page two text."]), "doc", None),
}


@pytest.mark.parametrize("kind", list(SAMPLES))
def test_every_block_offset_slices_plain_exactly(kind: str) -> None:
    data, name, ctype = SAMPLES[kind]
    d = to_document(data, name=name, content_type=ctype)
    assert d.kind == kind and d.problem is None
    assert d.blocks and "\n".join(d.plain[s:e] for s, e in d.blocks) == d.plain
    for start, end in d.blocks:
        block = d.plain[start:end]
        assert block and block == " ".join(block.split())  # whitespace folded in a block
        assert "\n" not in block


def test_markdown_markers_stay_out_of_plain() -> None:
    data, name, _ = SAMPLES["markdown"]
    d = to_document(data, name=name)
    assert d.plain.splitlines() == [
        "Title", "Some *text*.", "item one", "item two", "first", "quoted", "a b", "1 2",
    ]  # fmt: skip
    assert d.marked.startswith("# Title")


@pytest.mark.parametrize(
    ("data", "name", "ctype", "kind"),
    [
        (b"<!doctype html><html><p>x", "s1", None, "html"),
        (b"<p>x</p>", "s1.html", None, "html"),
        (b"<p>x</p>", "https://example.com/a.htm?q=1", None, "html"),
        (b"<p>x</p>", "s1.txt", None, "text"),
        (b"<html><p>x", "s1.txt", "text/html", "html"),
        (b"{}", "x", "application/json; charset=utf-8", "json"),
        (b"# x", "x.markdown", None, "markdown"),
        (b"%PDF-1.4 ...", "x.txt", "text/plain", "pdf"),
        (b"plain", "https://example.com/", None, "text"),
    ],
)
def test_kind_is_chosen_by_signature_type_extension_then_sniffing(
    data: bytes, name: str, ctype: str | None, kind: str
) -> None:
    assert to_document(data, name=name, content_type=ctype).kind == kind


def test_the_byte_cap_is_said_and_a_split_character_is_not_an_error() -> None:
    d = to_document("é".encode() * 10, name="x.txt", limits=Limits(max_bytes=5))
    assert d.plain == "éé"
    assert d.cuts == ("bytes cap: only the first 5 of 20 bytes read",)
    told = to_document(b"abc", name="x.txt", truncated=True)
    assert told.cuts == ("bytes cap: only the first 3 bytes read",)


def test_binary_cannot_become_text() -> None:
    d = to_document(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", name="s1.txt")
    assert d.problem == "is a PNG image, not text" and d.plain == ""


@given(
    data=st.binary(max_size=3000),
    ctype=st.one_of(
        st.none(),
        st.text(max_size=40),
        st.sampled_from(
            ["text/html; charset=rot13", "application/pdf", "text/plain; charset=utf-16",
             "application/json", "text/html; charset=\x00", "text/markdown"]
        ),
    ),
    name=st.sampled_from(["s.txt", "s.html", "s.pdf", "s.md", "s.json", "s", "http://x/y.pdf"]),
    prefix=st.sampled_from([b"", b"%PDF-1.7\n", b"<html>", b"\xef\xbb\xbf", b"\xff\xfe"]),
)  # fmt: skip
def test_to_document_never_raises(data: bytes, ctype: str | None, name: str, prefix: bytes) -> None:
    count("to_document never raises")
    d = to_document(prefix + data, name=name, content_type=ctype, limits=Limits(max_pages=3))
    assert d.kind in KINDS
    assert (d.problem is None) or isinstance(d.problem, str)
    assert "\n".join(d.plain[s:e] for s, e in d.blocks) == d.plain
    assert not d.problem or not d.problem.startswith("could not be turned into text")
