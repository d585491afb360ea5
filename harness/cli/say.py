"""The two ways a command speaks: a human line on stderr, one JSON document on stdout.

Every line a person reads goes through `err` (redacted, controls and bidi shown escaped, one
line kept one line); every document on stdout through `emit_json` (redacted, ASCII-safe).
"""

from __future__ import annotations

from typing import Any

import click


def err(message: str) -> None:
    """Every human line: redacted, and control characters, bidi overrides and line
    separators from the session or the model shown escaped (one line stays one line)."""
    from harness.redact import redact
    from harness.text.terminal import one_line

    click.echo(one_line(redact(message)), err=True)


def emit_json(document: Any, indent: int | None = None) -> None:
    """JSON on stdout: redacted and ASCII-safe, so no byte of it acts on a terminal."""
    from harness.redact import artifact_text

    click.echo(artifact_text(document, indent=indent))


__all__ = ["emit_json", "err"]
