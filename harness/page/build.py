"""`judge report SESSION|ROOT`: decide which page, build it, write it atomically.

A folder holding a session's own files (findings/, sources.json, answer.md or trace.jsonl:
`harness.session.discover`) gets its own page, by default `SESSION/.judge/report.html`. A
folder holding sessions gets an index over exactly the sessions `judge batch ROOT` judges
(not hidden, not links), by default `ROOT/report.html`, and each session's page is
rendered anew and written beside its artifacts: the index writes and links only pages it
rendered. A `.judge/report.html` found in a session is the session's content (from the
web, like the rest of it), whatever its mtime says: it is replaced, never kept or linked.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from markupsafe import Markup

from harness.audit.report import SERIOUS
from harness.errors import UsageError, WriteError
from harness.fs.names import ARTIFACT_DIR, PAGE_FILE
from harness.page.inputs import SessionPage, load_page
from harness.page.render import IndexRow, render_index, render_session
from harness.session.discover import discover, holds_session_files, not_a_session
from harness.session.file_problems import summary

PAGE_NAME = PAGE_FILE
INDEX_NAME = PAGE_FILE  # the root's index page: the name of a session's page


@dataclass(slots=True)
class Written:
    kind: str  # "session" or "index"
    path: Path
    pages: list[Path] = field(default_factory=list)  # session pages (re)written by an index
    failed: list[str] = field(default_factory=list)


def write_atomic(path: Path, text: str) -> None:
    """Temp file in the same folder, then rename: a reader never sees half a page."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise WriteError(
            f"cannot write {path} ({exc.strerror or exc}); make its folder writable or pass -o"
        ) from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)  # a page to be read, not a secret
        os.replace(tmp, path)
    except OSError as exc:
        raise WriteError(f"cannot write {path} ({exc.strerror or exc})") from exc
    finally:
        with contextlib.suppress(OSError):
            Path(tmp).unlink(missing_ok=True)


def default_page(folder: Path) -> Path:
    artifacts = folder / ARTIFACT_DIR
    if artifacts.is_symlink():
        raise WriteError(
            f"{artifacts} is a symbolic link; the page is written only inside the session "
            "(remove the link, or pass -o FILE)"
        )
    try:
        artifacts.mkdir(exist_ok=True)
    except OSError as exc:
        raise WriteError(
            f"cannot create {artifacts} ({exc.strerror or exc}); make the session writable "
            "or pass -o FILE"
        ) from exc
    return artifacts / PAGE_NAME


def write_session_page(folder: Path, output: Path | None = None) -> tuple[Path, SessionPage]:
    page = load_page(folder)
    target = output if output is not None else default_page(folder)
    write_atomic(target, render_session(page))
    return target, page


def _row(folder: Path, page: SessionPage, href: str | None) -> IndexRow:
    agreement = page.agreement
    serious = sum(
        1 for f in page.findings for c in f.claims if any(p.check in SERIOUS for p in c.problems)
    )
    return IndexRow(
        name=folder.name,
        href=href,
        scores=page.judge.scores if page.judge.valid else {},
        # As `--merge-results` says it: a session with no run.json is not judged yet.
        outcome=page.run.outcome or ("not-judged" if page.run.absent else ""),
        claims=page.claims,
        verdicts=page.verdicts,
        with_problems=serious,
        audited=("offline" if page.audit.offline else "model") if page.audit.shown else "",
        files=summary(page.session_problems),
        compared=agreement is not None and bool(agreement.why),
        disagrees=agreement is not None and agreement.disagrees,
        why=agreement.why if agreement else "",
        versus=(
            f"{agreement.judge} vs {agreement.expected}"
            if agreement is not None and agreement.expected is not None
            else ""
        ),
    )


def write_index(root: Path, output: Path | None = None, agreement: Markup | None = None) -> Written:
    folders = discover(root)  # the sessions `judge batch ROOT` judges, by the same rule
    if not folders:
        # Every SESSION-taking command's message, and what `judge report` also takes.
        why = not_a_session(root) or f"{root} holds no session folder"
        raise UsageError(
            f"{why}; `judge report` also takes a folder of sessions, but this is neither a "
            "session nor a folder of sessions"
        )
    target = output if output is not None else root / INDEX_NAME
    result = Written("index", target)
    rows: list[IndexRow] = []
    for folder in folders:
        page = load_page(folder)
        href: str | None = None
        problem: str | None = None
        try:
            path = default_page(folder)
            write_atomic(path, render_session(page))  # this page, just rendered
            result.pages.append(path)
            href = "./" + quote(Path(os.path.relpath(path, target.parent)).as_posix())
        except WriteError as exc:
            problem = exc.message
            result.failed.append(exc.message)
        row = _row(folder, page, href)
        row.problem = problem
        rows.append(row)
    write_atomic(target, render_index(root.name or str(root), rows, agreement=agreement))
    return result


def build(folder: Path, output: Path | None = None, agreement: Markup | None = None) -> Written:
    """The page for a session folder, or the index for a folder of sessions (with the
    agreement section, when given)."""
    if holds_session_files(folder):
        if agreement is not None:
            raise UsageError(
                f"{folder} is one session; --labels goes with a folder of sessions (ROOT)"
            )
        path, _ = write_session_page(folder, output)
        return Written("session", path)
    return write_index(folder, output, agreement)
