"""The one decoding rule: BOMs, declared charsets (and hostile ones), UTF-8, fallbacks, binary."""

from __future__ import annotations

import codecs

import pytest

from harness.text.decode import TEXT_CODECS, binary_kind, declared_charset, decode, safe_codec

HOSTILE = [
    "rot13", "rot_13", "hex", "hex_codec", "base64", "base64_codec", "idna", "punycode",
    "undefined", "uu", "uu_codec", "zlib", "zlib_codec", "bz2", "bz2_codec", "quopri",
    "unicode_escape", "raw_unicode_escape", "string_escape", "mbcs", "charmap", "oem",
    "", "   ", "no-such-codec", "utf-8\x00", "x" * 200, "\u00e9t\u00e9", "../../etc",
]  # fmt: skip


@pytest.mark.parametrize("label", HOSTILE)
def test_hostile_or_unknown_declared_codecs_are_never_used(label: str) -> None:
    assert safe_codec(label) is None
    body = b"plain caf\xc3\xa9 text"
    got = decode(body, content_type_charset=label)
    assert (got.text, got.encoding) == ("plain café text", "utf-8")
    meta = b'<html><head><meta charset="' + label.encode("utf-8", "replace") + b'"></head>ok'
    assert decode(meta, html=True).encoding == "utf-8"


@pytest.mark.parametrize(
    ("label", "codec"),
    [
        ("utf-8", "utf-8"),
        ("UTF8", "utf-8"),
        ("windows-1252", "cp1252"),
        ("iso-8859-1", "cp1252"),  # WHATWG: latin-1 labels mean windows-1252
        ("us-ascii", "cp1252"),
        ("Shift_JIS", "shift_jis"),
        ("koi8-r", "koi8-r"),
        ("gb2312", "gb2312"),
        ('"utf-8"', "utf-8"),
    ],
)
def test_real_text_codecs_are_allowed(label: str, codec: str) -> None:
    assert safe_codec(label) == codec
    assert codec in TEXT_CODECS


@pytest.mark.parametrize(
    ("data", "text", "encoding", "kwargs"),
    [
        (codecs.BOM_UTF8 + "café".encode(), "café", "utf-8", {}),
        (codecs.BOM_UTF16_LE + "café".encode("utf-16-le"), "café", "utf-16-le", {}),
        (codecs.BOM_UTF16_BE + "café".encode("utf-16-be"), "café", "utf-16-be", {}),
        (codecs.BOM_UTF32_LE + "café".encode("utf-32-le"), "café", "utf-32-le", {}),
        (codecs.BOM_UTF32_BE + "café".encode("utf-32-be"), "café", "utf-32-be", {}),
        # the BOM wins over a declared charset
        (codecs.BOM_UTF8 + "café".encode(), "café", "utf-8", {"content_type_charset": "cp1251"}),
        ("naïve “quotes”".encode("cp1252"), "naïve “quotes”", "cp1252", {}),
        ("Привет".encode("koi8-r"), "Привет", "koi8-r", {"content_type_charset": "koi8-r"}),
        (b'<meta charset="windows-1251">' + "Мир".encode("cp1251"), "Мир", "cp1251",
         {"html": True}),
        (b'<?xml version="1.0" encoding="iso-8859-15"?><a>\xa4</a>', "€", "iso8859-15", {}),
        # declared, but the bytes are valid UTF-8 and not valid in it: UTF-8 wins
        ("日本".encode(), "日本", "utf-8", {"content_type_charset": "ascii"}),
        # a UTF-16 label inside the document cannot be right (it was read as ASCII)
        (b'<meta charset="utf-16"><p>hi', "hi", "utf-8", {"html": True}),
        ("BOM-less UTF-16 text here".encode("utf-16-le"), "BOM-less", "utf-16-le", {}),
        (b"\x81\x8d\x8f caf\xe9", "caf", "latin-1", {}),  # not even cp1252
        (b"text with a NUL\x00 and a bell\x07", "NUL  and a bell ", "utf-8", {}),
        ("é".encode()[:1], "", "utf-8", {"final": False}),  # a cap split a character
    ],
    ids=[
        "bom-utf8", "bom-utf16le", "bom-utf16be", "bom-utf32le", "bom-utf32be", "bom-wins",
        "cp1252", "declared-koi8", "meta-charset", "xml-decl", "utf8-over-bad-declared",
        "meta-utf16", "bomless-utf16", "latin1", "nul-bearing", "cut-character",
    ],
)  # fmt: skip
def test_decoding_rule(data: bytes, text: str, encoding: str, kwargs: dict[str, object]) -> None:
    got = decode(data, **kwargs)  # type: ignore[arg-type]
    assert text in got.text
    assert got.encoding == encoding
    assert "\ufffd" not in got.text and "\x00" not in got.text


def test_declared_charset_is_read_from_the_start_only() -> None:
    assert declared_charset(b"<meta http-equiv=content-type content='text/html; charset=koi8-r'>")
    assert declared_charset(b" " * 5000 + b'<meta charset="koi8-r">') is None


@pytest.mark.parametrize(
    ("data", "what"),
    [
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * 20, "a PNG image"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", "a JPEG image"),
        (b"PK\x03\x04\x14\x00", "a ZIP archive"),
        (b"\x1f\x8b\x08\x00", "gzip"),
        (b"\x7fELF\x02\x01", "an ELF executable"),
        (bytes(range(256)) * 8, "control bytes"),
        (b"\x00" * 500 + b"abc", "NUL bytes"),
    ],
)
def test_binary_by_signature_or_ratio(data: bytes, what: str) -> None:
    found = binary_kind(data)
    assert found is not None and what in found


@pytest.mark.parametrize(
    "data",
    [
        b"%PDF-1.7\n\x00\x01\x02 binary streams",  # a PDF is read, not refused as binary
        b"slide one\x00\x00slide two\x00" * 50,  # a converted deck: NUL padding, still text
        "UTF-16 without BOM".encode("utf-16-le"),
        "café".encode("cp1252"),
        b"",
    ],
    ids=["pdf", "nul-padding", "utf16", "cp1252", "empty"],
)
def test_not_binary(data: bytes) -> None:
    assert binary_kind(data) is None


def test_the_written_out_codec_names_are_what_codecs_lookup_gives() -> None:
    import codecs

    from harness.text.decode import _TEXT_CODEC_LABELS, TEXT_CODECS

    assert {codecs.lookup(label).name for label in _TEXT_CODEC_LABELS.split()} == TEXT_CODECS
