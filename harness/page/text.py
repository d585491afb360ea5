"""Untrusted text made safe to *show*: bidi overrides and control characters neutralised,
and the one rule for which URLs may become links.

Escaping for HTML is the template engine's job (autoescape); this module deals with what
escaping cannot: characters that are valid in HTML text yet change how the text around
them reads (a right-to-left override turns `exe.txt` into `txt.exe`), and URL schemes.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

# Bidi embeddings/overrides (U+202A-U+202E), isolates (U+2066-U+2069) and the marks that
# also reorder text (LRM, RLM, ALM). Shown as a visible code point, never obeyed.
_BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
# C0 controls but tab and newline, DEL, C1 controls, line/paragraph separators (they end
# a JavaScript string literal in old engines), BOM/zero-width no-break space, and
# interlinear annotation and object-replacement characters.
# Characters that show nothing yet make two strings differ (zero-width space, joiners, word
# joiner and invisible operators, soft hyphen, Mongolian vowel separator, tag characters):
# five session names that look alike on the index must not be five different strings that
# look the same.
_INVISIBLE = "\u00ad\u180e\u200b-\u200d\u2060-\u2064\U000e0000-\U000e007f"
_CONTROL = "\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufff9-\ufffb" + _BIDI + _INVISIBLE
_UNSAFE = re.compile(f"[{_CONTROL}]")
_NEWLINES = re.compile(r"\r\n?")


def _visible(match: re.Match[str]) -> str:
    char = match.group(0)
    if char in "\u2028\u2029":
        return "\n"
    return f"\u2039U+{ord(char):04X}\u203a"  # ‹U+202E›


def clean(text: str) -> str:
    """`text` with every bidi control, control and invisible character replaced by a
    visible `‹U+XXXX›` (line and paragraph separators become newlines; CR LF becomes LF)."""
    # Every character either substitution replaces is one str.isprintable() refuses (a
    # control, a format character, a separator but the space), so most text, printable
    # throughout, is returned as it is without the two passes.
    if text.isprintable():
        return text
    return _UNSAFE.sub(_visible, _NEWLINES.sub("\n", text))


def safe_url(url: object) -> str | None:
    """`url` if it may be a link: an absolute http(s) URL with a host and no whitespace
    or control character; None otherwise (`javascript:`, `data:`, relative, `//host`)."""
    if not isinstance(url, str) or not url or len(url) > 4096:
        return None
    if _UNSAFE.search(url) or url.split() != [url]:  # [url] only when it holds no space
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    # urlsplit lower-cases the scheme it returns; the link must start with it as written.
    if not url.lower().startswith(("http://", "https://")):
        return None
    return url
