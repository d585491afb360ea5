"""Untrusted text made safe for a person's terminal.

Claim texts, file names, the session folder's name and the judge's note come from the
session or the model. Printed raw, an escape sequence in them can retitle the window,
write the clipboard (OSC 52), erase lines or forge a status line; a bidi override can make
a line read differently from what it holds. `printable` shows every such character as a
visible escape (`\\x1b`, `\\u2028`, `\\U000e0041`) instead, so what a person reads is what
the text holds. JSON on stdout needs none of this: it is written ASCII-safe.

The one escaper for a terminal. The page (harness.page.text) shows the same characters as
`‹U+202E›` in HTML the template engine escapes: a browser, not a terminal, so a different
job. A name inside a model's prompt keeps its line (harness.text.untrusted): a third.
"""

from __future__ import annotations

import unicodedata

# Unicode general categories that a terminal may act on, or that hide or reorder text:
# Cc (C0, DEL, C1 incl. U+0085), Cf (bidi overrides and isolates, zero-width characters,
# tag characters), Cs (lone surrogates: cannot even be encoded), Zl/Zp (U+2028/U+2029),
# Co/Cn (private use, unassigned).
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp", "Co", "Cn"})


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _unsafe(ch: str, keep: str) -> bool:
    if ch in keep:
        return False
    if " " <= ch <= "~":  # printable ASCII: the common case, decided without a lookup
        return False
    return unicodedata.category(ch) in _UNSAFE_CATEGORIES


def printable(text: str, *, keep: str = "\n\t") -> str:
    """`text` with every control, format, separator, surrogate, private-use or unassigned
    character shown as a visible escape. `keep` lists the characters left as they are
    (newline and tab by default; pass `keep=""` for a value that must stay on one line)."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(_escape(ch) if _unsafe(ch, keep) else ch for ch in text)


def one_line(text: object) -> str:
    """`printable` for a value that must not start a new line (nor tab out of a column):
    every line a person reads that holds a name, a note or a reason (`judge run`'s summary,
    `judge batch`'s rows and live view, `judge cite`'s table, `judge show`). Not a str?
    Its `str()`."""
    return printable(str(text), keep="")


__all__ = ["one_line", "printable"]
