"""Which folders under ROOT are sessions: a folder holding `findings/`, `sources.json`,
`answer.md` or `trace.jsonl`, directly under ROOT (not nested, not hidden, not a link)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from harness.errors import UsageError
from harness.fs.confined import kind_of_mode, kind_words

MARKERS = ("findings", "sources.json", "answer.md", "trace.jsonl")


def holds_session_files(folder: Path) -> bool:
    """Whether `folder` (as given: a link to a session is that session) holds at least one
    of the session's own files. What `judge run SESSION` and `judge report SESSION` ask."""
    return any(os.path.lexists(folder / marker) for marker in MARKERS)


def is_session(folder: Path) -> bool:
    """A session under ROOT: a real folder (not a link) holding at least one of the
    session's own files."""
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return False
    except OSError:
        return False
    return holds_session_files(folder)


def session_name(text: str) -> str | None:
    """The one spelling of a session's name under ROOT, as a labels file or a list may write
    it: `s1`, `./s1`, `s1/` and `s1//.` are all `s1`. None for what cannot name a session
    directly under ROOT (empty, absolute, `..`, nested, hidden)."""
    if not text or "\\" in text or "\0" in text:
        return None
    path = PurePosixPath(text)
    parts = path.parts
    if path.is_absolute() or len(parts) != 1 or parts[0] in (".", "..") or parts[0][0] == ".":
        return None
    return parts[0]


def inside_session(path: Path, root: Path) -> Path | None:
    """The session under `root` (or `root` itself, when it is one) that the file `path`
    would be written into, or None. An output a command is told to write never goes into a
    session: judge writes only judge.json and .judge/ there, and a file added changes what
    it judges (and may replace the judgment itself)."""
    try:
        base = Path(root).expanduser().resolve()
        folder = Path(path).expanduser().absolute().parent.resolve()
    except (OSError, RuntimeError):
        return None  # an unresolvable path: the write itself says what is wrong
    if holds_session_files(base) and (folder == base or base in folder.parents):
        return base
    if folder != base and base in folder.parents:
        session = base / folder.relative_to(base).parts[0]
        if holds_session_files(session):
            return session
    return None


def check_output(
    path: Path, roots: Path | Iterable[Path], option: str, *, new_folder: bool = False
) -> None:
    """The one rule for a file an operator tells a command to write (`report -o`,
    `agree --html`, `compare --html`, `batch --results`/`--merge-results`, `run --record`/
    `--transcript`, `cite --record`), checked before anything is read or judged: never
    inside a session under any of `roots` (see `inside_session`), in a folder that exists
    (unless the command makes it: `new_folder`), and, if something is already there, a
    regular file (the write replaces that entry by a rename: a link, a FIFO, a socket or a
    device such as /dev/full or /dev/stdout would be replaced, not written to). A usage
    error naming the option, the path and the fix."""
    for root in [roots] if isinstance(roots, Path) else roots:
        session = inside_session(path, root)
        if session is not None:
            raise UsageError(
                f"{option} {path} is inside the session {session.name}: judge writes only "
                "judge.json and .judge/ into a session; write the file elsewhere"
            )
    target = Path(path).expanduser().absolute()
    if not new_folder and not target.parent.is_dir():
        raise UsageError(
            f"{option} {path}: its folder {target.parent} does not exist; create it first, "
            "or name a file in a folder that exists"
        )
    try:
        mode = os.lstat(target).st_mode
    except OSError:
        return  # nothing there yet (or unreadable: the write itself says so)
    if stat.S_ISLNK(mode):  # /dev/stdout is one: the rename would replace the link itself
        raise UsageError(
            f"{option} {path} is a symbolic link (to {os.path.realpath(target)}): judge "
            "replaces the file it writes as a whole, so it would replace the link rather than "
            "write to what it points at; name the file itself"
        )
    if not stat.S_ISREG(mode):
        what = kind_words(kind_of_mode(mode))
        raise UsageError(
            f"{option} {path} is {what}, not a regular file: judge replaces the file it "
            "writes as a whole, so it would replace that entry rather than write to it; "
            "name a regular file"
        )


def discover(root: Path, names: list[str] | None = None) -> list[Path]:
    """The sessions under `root`, sorted by name; or exactly `names`, in the order given.

    A name must be a session folder directly under `root`; anything else is a usage error
    naming it, raised before any session is judged."""
    root = Path(root).expanduser()
    if not root.is_dir():
        raise UsageError(f"batch root {root} does not exist or is not a folder")
    root = root.resolve()
    if names:
        found: list[Path] = []
        for name in dict.fromkeys(names):  # a name given twice is judged once
            if not name or name in (".", "..") or "/" in name or os.sep in name:
                raise UsageError(
                    f"session {name!r}: give the name of a folder directly under {root}"
                )
            folder = root / name
            if not is_session(folder):
                raise UsageError(
                    f"{folder} is not a session folder (it needs one of "
                    f"{', '.join(MARKERS)}); check the name, or leave it out"
                )
            found.append(folder)
        return found
    try:
        entries = sorted(os.listdir(root))
    except OSError as exc:
        raise UsageError(f"cannot list the batch root {root}: {exc.strerror or exc}") from exc
    return [root / n for n in entries if not n.startswith(".") and is_session(root / n)]


# The longest path the kernel takes in one system call (PATH_MAX, bytes with its NUL).
PATH_MAX = 4096


def too_long(folder: Path) -> str | None:
    """Why `folder` (resolved) cannot be judged here: its path is longer than the system
    takes in one call, so no file in it can be opened by name; None when it can."""
    size = len(os.fsencode(str(folder)))
    if size < PATH_MAX - 255:  # room for a file's name below it
        return None
    return (
        f"the session's path is {size:,} bytes, too long for this system (its files would be "
        f"over the {PATH_MAX:,}-byte limit): move the session, or link it, to a shorter path"
    )


def not_a_session(folder: Path) -> str | None:
    """Why `folder` is not a research session (it holds none of the pipeline's files), or
    None: the one message every command taking SESSION refuses such a folder with (exit 2).
    A folder that is not one is never written into: no judge.json, no .judge/. When it
    holds sessions, the first few are named."""
    if holds_session_files(folder):
        return None
    held = _sessions_under(folder)
    within = ""
    if held:
        names = ", ".join(held[:3]) + (", …" if len(held) > 3 else "")
        within = (
            f"; it holds {len(held)} session folder{'s' if len(held) != 1 else ''} ({names}): "
            "pass one of them, or judge them all with `judge batch`"
        )
    return (
        f"{folder} is not a research session: it holds none of findings/, sources.json, "
        f"answer.md or trace.jsonl{within or '; pass the session folder the pipeline wrote'} "
        "(nothing was written into this one)"
    )


def _sessions_under(folder: Path) -> list[str]:
    try:
        return [p.name for p in discover(folder)]
    except UsageError:
        return []


def require_session(folder: Path) -> Path:
    """`folder` when it is a research session, else the usage error `not_a_session` says."""
    why = not_a_session(folder)
    if why is not None:
        raise UsageError(why)
    return folder


__all__ = [
    "MARKERS",
    "check_output",
    "discover",
    "holds_session_files",
    "inside_session",
    "is_session",
    "not_a_session",
    "require_session",
    "session_name",
    "too_long",
]
