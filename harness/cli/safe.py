"""Human output never carries a terminal escape: control characters are shown, not sent.

Session names, notes and reasons come from the session or the model. Printed raw, an ESC
could retitle the window, write the clipboard (OSC 52), erase lines or forge a status
line. `safe` replaces every control, format and line/paragraph-separator character
(Unicode categories Cc, Cf, Zl, Zp: C0, DEL, C1, bidi overrides, U+2028...) with a
visible escape such as `\\x1b` or `\\u202e`. stdout JSON is escaped by `json.dumps`.
"""

from __future__ import annotations

import unicodedata

_UNSAFE = {"Cc", "Cf", "Zl", "Zp", "Cs"}


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe(text: object) -> str:
    value = str(text)
    if value.isprintable():  # the common case, at C speed
        return value
    return "".join(_escape(c) if unicodedata.category(c) in _UNSAFE else c for c in value)


__all__ = ["safe"]
