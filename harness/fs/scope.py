"""Path scoping for the agent's Read and Write tools.

The model names paths; this module decides which of them lie inside the session
directory. Containment is judged on the *real* path (``..`` and every symlink
resolved, the way the kernel would walk it), never on the text, and files are then
opened by walking that real path one component at a time with ``O_NOFOLLOW``, so a
symlink swapped in after the check cannot lead the open elsewhere.

Every refusal is a :class:`~harness.errors.ToolError` whose message says what was
refused, why, and what is allowed; the agent loop hands it back to the model.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path, PurePosixPath

from harness.errors import ToolError
from harness.fs.confined import ConfinedError, SessionReader, kind_words, real_path
from harness.fs.names import JUDGE_FILE

__all__ = [
    "JUDGE_JSON",
    "MAX_COMPONENT_BYTES",
    "MAX_PATH_CHARS",
    "display_path",
    "is_judge_json",
    "open_in_session",
    "resolve_in_session",
    "resolve_write_target",
    "session_root",
]

JUDGE_JSON = JUDGE_FILE
MAX_PATH_CHARS = 4096
# NAME_MAX on Linux and macOS counts bytes, not characters.
MAX_COMPONENT_BYTES = 255


def _real(path: Path | PurePosixPath | str, shown: str) -> str:
    """The real path, or a refusal when a folder or link on the way is swapped meanwhile."""
    try:
        return real_path(str(path))
    except ConfinedError as exc:
        raise ToolError(
            f"refused: the path {exc.reason.split('; not read')[0]}; refused, as any path "
            "that changes under a read is",
            names=[("path", shown)],
            file_path=shown[:200],
        ) from None


def session_root(session_dir: Path | str) -> Path:
    """The session directory's real path; it must exist and be a directory."""
    root = Path(_real(session_dir, str(session_dir)))
    if not root.is_dir():
        raise ToolError(
            f"the session directory {session_dir} does not exist or is not a directory",
            session_dir=str(session_dir),
        )
    return root


def _checked_text(file_path: object) -> str:
    """Refuse what can never be a sensible path, before touching the filesystem."""
    if not isinstance(file_path, str):
        raise ToolError(
            f"refused: file_path must be a string, got {type(file_path).__name__}",
            file_path=repr(file_path)[:200],
        )
    if not file_path.strip():
        raise ToolError(
            "refused: file_path is empty or blank; give a path inside the session directory "
            "(relative paths resolve against it, '.' is the session directory itself)",
            file_path=file_path,
        )
    if "\x00" in file_path:
        raise ToolError(
            "refused: file_path contains a NUL byte, which no file name can hold",
            file_path=file_path.replace("\x00", "\\x00")[:200],
        )
    if len(file_path) > MAX_PATH_CHARS:
        raise ToolError(
            f"refused: file_path is {len(file_path)} characters long; "
            f"paths are limited to {MAX_PATH_CHARS}",
            length=len(file_path),
        )
    try:
        file_path.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolError(
            "refused: file_path is not valid Unicode text (it holds a lone surrogate)",
            file_path=file_path.encode("utf-8", "backslashreplace").decode("ascii")[:200],
        ) from None
    for part in file_path.split("/"):
        size = len(part.encode("utf-8"))
        if size > MAX_COMPONENT_BYTES:
            raise ToolError(
                f"refused: a component of file_path is {size} bytes long; "
                f"file names are limited to {MAX_COMPONENT_BYTES} bytes",
                component=part[:80] + "…",
            )
    return file_path


def _within(path: str, root: str) -> bool:
    # Compare components, not prefixes: /s/sess-evil is not inside /s/sess.
    return path == root or path.startswith(root.rstrip("/") + "/")


def resolve_in_session(session_dir: Path | str, file_path: str) -> Path:
    """The real path that ``file_path`` names, which must lie inside the session.

    Relative paths resolve against the session directory; absolute ones must point
    into it. ``..`` and symlinks (in any component, dangling ones included) are
    resolved first, so a link that leads out is refused even if its name is inside.
    The path need not exist. Unicode look-alikes such as ``．．／`` are ordinary
    names: never treated as ``..``, never a way out.
    """
    text = _checked_text(file_path)
    root = session_root(session_dir)
    candidate = Path(text) if os.path.isabs(text) else root / text
    resolved = _real(candidate, text)
    root_s = str(root)
    if _within(resolved, root_s):
        return Path(resolved)
    lexical = os.path.normpath(candidate)
    if _within(lexical, root_s) or _within(lexical, os.path.abspath(session_dir)):
        raise ToolError(
            "refused: the path leads outside the session directory through a symlink; "
            "only files and folders inside it can be used",
            names=[("path", text)],
            file_path=text,
            session_dir=root_s,
        )
    raise ToolError(
        "refused: the path is outside the session directory; only paths inside it are "
        "allowed (relative paths resolve against it)",
        names=[("path", text)],
        file_path=text,
        session_dir=root_s,
    )


def display_path(session_dir: Path | str, resolved: Path) -> str:
    """``resolved`` relative to the session, POSIX style; ``.`` for the session itself."""
    return os.path.relpath(resolved, session_root(session_dir))


def resolve_write_target(session_dir: Path | str, file_path: str) -> Path:
    """``<session>/judge.json`` if ``file_path`` names it; refuse anything else.

    The parent is resolved like the kernel would (symlinks followed) but the last
    component is taken as written and must be ``judge.json``: writing *through* a
    symlink named judge.json could overwrite any file it points at, so an existing
    judge.json must be a regular file (or absent).
    """
    text = _checked_text(file_path)
    root = session_root(session_dir)
    target = root / JUDGE_JSON
    candidate = PurePosixPath(text) if os.path.isabs(text) else PurePosixPath(root, text)
    parent = _real(candidate.parent, text)
    if candidate.name != JUDGE_JSON or parent != str(root):
        raise ToolError(
            "refused: Write only accepts the session's judge.json (give 'judge.json'); "
            "the path is not it",
            names=[("path", text)],
            file_path=text,
            allowed=str(target),
        )
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return target
    if stat.S_ISLNK(st.st_mode):
        raise ToolError(
            "refused: the session's judge.json is a symlink; Write will not write through a "
            "symlink. Only a regular judge.json file (or none yet) can be written",
            file_path=text,
        )
    if stat.S_ISDIR(st.st_mode):
        raise ToolError(
            "refused: the session's judge.json is a directory, so it cannot be written",
            file_path=text,
        )
    if not stat.S_ISREG(st.st_mode):
        raise ToolError(
            "refused: the session's judge.json exists but is not a regular file; it cannot "
            "be written over",
            file_path=text,
        )
    return target


def is_judge_json(session_dir: Path | str, path: Path | str) -> bool:
    """True iff ``path`` names the session's writable judge.json (see resolve_write_target)."""
    try:
        resolve_write_target(session_dir, str(path))
    except ToolError:
        return False
    return True


_OPEN_ERRORS = {
    errno.ENOENT: "does not exist",
    errno.ENOTDIR: "does not exist (a component of the path is not a directory)",
    errno.ELOOP: "is a symlink loop, or changed into a symlink while being opened; refused",
    errno.EACCES: "cannot be read: permission denied",
    errno.EPERM: "cannot be read: permission denied",
}


def open_in_session(
    session_dir: Path | str, resolved: Path, reader: SessionReader | None = None
) -> int:
    """Open the already-resolved ``resolved`` read-only and return the descriptor.

    Opens through the confined reader (:mod:`harness.fs.confined`): walks from the
    session root with ``O_NOFOLLOW`` on every component, so the open lands exactly on the
    checked path; special files are refused without being opened, and a regular file
    with more than one hard link is refused as not the session's own. With ``reader``
    (a run's, opened once) the walk starts from that descriptor, not from the path.
    """
    root = session_root(session_dir)
    shown = display_path(root, resolved)
    try:
        parts = resolved.relative_to(root).parts
    except ValueError:
        raise ToolError(
            "refused: the path is outside the session directory",
            names=[("path", str(resolved))],
            file_path=str(resolved),
        ) from None
    rel = "/".join(parts) or "."
    try:
        if reader is not None:  # the run's reader, opened once on the session folder
            fd, _ = reader.open(rel)
        else:
            with SessionReader(root) as own:
                fd, _ = own.open(rel)
    except ConfinedError as exc:
        raise ToolError(_open_refusal(exc), names=[("path", shown)], file_path=shown) from None
    return fd


def _open_refusal(exc: ConfinedError) -> str:
    """The refusal in the harness's words; the path (the pipeline's name) goes with it
    as a name, shown to the model only inside an untrusted block."""
    if exc.why == "symlink":
        words = f"the path {_OPEN_ERRORS[errno.ELOOP]}"
    elif exc.why == "special":
        words = (
            f"refused: the path is not a regular file or folder ({kind_words(exc.kind)}); "
            "Read only reads files and folders"
        )
    elif exc.why == "hardlink":
        words = f"refused: the path {exc.reason}"
    elif exc.why in ("missing", "notdir"):
        words = f"the path {_OPEN_ERRORS[errno.ENOENT if exc.why == 'missing' else errno.ENOTDIR]}"
    elif exc.why == "denied":
        words = f"the path {_OPEN_ERRORS[errno.EACCES]}"
    else:
        words = f"the path {exc.reason}"
    return words
