"""Strict `{{name}}` placeholder rendering for judge briefs.

A placeholder is `{{name}}` with no spaces. Known names must all be filled;
a name the harness has no value for is left exactly as written and reported,
so the operator sees it rather than the model seeing a silent blank.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import TemplateError
from harness.text.untrusted import escape_controls

PLACEHOLDER = re.compile(r"\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}")
# Things that look meant as placeholders but are not: spaces or odd characters inside.
NEAR_MISS = re.compile(r"\{\{(?![A-Za-z_][A-Za-z0-9_]*\}\})([^{}\n]{1,64})\}\}")
KNOWN = ("sessionId", "sessionDir", "cli")
MAX_TEMPLATE_BYTES = 1024 * 1024


@dataclass(slots=True)
class Rendered:
    text: str
    unknown: list[str] = field(default_factory=list)
    near_misses: list[str] = field(default_factory=list)
    template_digest: str = ""

    def warnings(self) -> list[str]:
        notes = [
            f"warning: no value for placeholder {{{{{name}}}}}; left as written"
            for name in self.unknown
        ]
        notes += [
            f"warning: {{{{{text}}}}} is not a placeholder (write {{{{name}}}} with no spaces); "
            "left as written"
            for text in self.near_misses
        ]
        return notes


def render(template: str, values: dict[str, str]) -> Rendered:
    """Fill every `{{name}}` found in `values`, in one pass (values are not re-scanned)."""
    for name in KNOWN:
        if name in values and not values[name].strip():
            raise TemplateError(f"the value for {{{{{name}}}}} is empty; give a non-empty value")
    unknown: list[str] = []

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in values:
            return values[name]
        if name not in unknown:
            unknown.append(name)
        return match.group(0)

    text = PLACEHOLDER.sub(substitute, template)
    near = list(dict.fromkeys(m.group(1) for m in NEAR_MISS.finditer(template)))
    digest = hashlib.sha256(template.encode("utf-8")).hexdigest()
    return Rendered(text, unknown, near, digest)


def read_template(path: Path) -> str:
    """Read a brief template, with errors that name the file and the fix."""
    try:
        with path.open("rb") as handle:
            blob = handle.read(MAX_TEMPLATE_BYTES + 1)
    except FileNotFoundError as exc:
        raise TemplateError(f"brief template {path} does not exist; check --brief") from exc
    except IsADirectoryError as exc:
        raise TemplateError(f"brief template {path} is a directory; pass a file") from exc
    except OSError as exc:
        raise TemplateError(f"cannot read brief template {path}: {exc.strerror}") from exc
    if len(blob) > MAX_TEMPLATE_BYTES:
        raise TemplateError(f"brief template {path} is larger than 1 MiB; is it the right file?")
    try:
        return blob.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TemplateError(
            f"brief template {path} is not UTF-8 (bad byte at offset {exc.start}); save it as UTF-8"
        ) from exc


def render_for_session(
    template_path: Path, session_id: str, session_dir: Path, cli: str = "judge"
) -> Rendered:
    # The folder's name is the pipeline's (often made from the question): escaped, so no
    # name can start a line of the brief or end a block; the operator's --cli is not.
    values = {
        "sessionId": escape_controls(session_id),
        "sessionDir": escape_controls(str(session_dir)),
        "cli": cli,
    }
    return render(read_template(template_path), values)
