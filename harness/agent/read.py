"""The Read tool: a session file as numbered lines, or a folder as a listing.

Everything read here was written by the research pipeline from web pages, so it is
handed to the model wrapped in delimiters carrying a fresh random nonce per call
(:func:`wrap_untrusted`): text inside cannot forge the closing delimiter. The file's
name is the pipeline's text too, so it is shown only inside such a block (in results and
refusals alike); outside stand the harness's own words: sizes, line numbers, cuts. Reads are
memory-bounded: files are streamed line by line with a cap on each line, so paging
through a 2 GB file never holds more than one call's worth of it.
"""

from __future__ import annotations

import codecs
import heapq
import io
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from harness.clock import Deadline
from harness.errors import ToolError
from harness.fs.confined import BoundedStream, SessionReader, kind_of_mode, kind_words
from harness.fs.scope import display_path, open_in_session, resolve_in_session
from harness.text.decode import binary_kind, choose_encoding, clean_controls, decode
from harness.text.untrusted import escape_controls, untrusted_names, wrap_untrusted

__all__ = [
    "MAX_BYTES",
    "MAX_ENTRIES",
    "MAX_LINES",
    "read_tool",
]

MAX_LINES = 2000
MAX_BYTES = 256 * 1024
MAX_ENTRIES = 1000
_SNIFF_BYTES = 8192
_SKIP_CHUNK = 64 * 1024
# One Read call scans at most this much of a file, for at most this long: a 10 GB line
# (or a file that keeps growing) ends the call, with a note, instead of holding the run.
SCAN_BYTES = 512 * 1024 * 1024
SCAN_SECONDS = 10.0


def _check_int(name: str, value: object, minimum: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolError(
            f"refused: {name} must be a whole number, got {value!r}",
            argument=name,
            value=repr(value),
        )
    if value < minimum:
        raise ToolError(
            f"refused: {name} must be at least {minimum}, got {value}", argument=name, value=value
        )
    return value


def read_tool(
    session_dir: Path | str,
    file_path: str,
    offset: int | None = None,
    limit: int | None = None,
    *,
    reader: SessionReader | None = None,
) -> str:
    """Claude Code's Read, scoped to the session directory (opened through ``reader``,
    the run's confined reader, when given).

    ``offset`` is the 1-based line (or, for a folder, entry) to start at; 0 is taken
    as 1. ``limit`` is how many lines to return, at most :data:`MAX_LINES`; one call
    also returns at most :data:`MAX_BYTES` of text. A trailing note says how to go on.
    """
    start = max(_check_int("offset", offset, 0) or 1, 1)
    asked = _check_int("limit", limit, 1)
    count = min(asked or MAX_LINES, MAX_LINES)
    resolved = resolve_in_session(session_dir, file_path)
    # The file's name is the pipeline's text: it goes inside the untrusted block only.
    shown = display_path(session_dir, resolved)
    fd = open_in_session(session_dir, resolved, reader)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            return _list_directory(fd, shown, start, min(asked or MAX_ENTRIES, MAX_ENTRIES))
        if not stat.S_ISREG(st.st_mode):
            what = kind_words(kind_of_mode(st.st_mode))
            raise ToolError(
                f"refused: the path is not a regular file or folder ({what}); "
                "Read only reads files and folders",
                names=[("path", shown)],
                file_path=escape_controls(shown),
            )
        # However long its lines, one call reads at most SCAN_BYTES within SCAN_SECONDS.
        stream = BoundedStream(os.dup(fd), SCAN_BYTES, Deadline.after(SCAN_SECONDS))
        with io.BufferedReader(stream) as fh:
            try:
                result = _read_file(fh, shown, st.st_size, start, count, asked)
            except ToolError as exc:
                if stream.stopped is None:
                    raise
                result = untrusted_names(exc.message, exc.names)
        if stream.stopped is not None:
            result += (
                f"\n[Read {stream.stopped} of the file ({SCAN_BYTES:,} bytes or "
                f"{SCAN_SECONDS:g} s per call): a line shown as cut may be longer, and lines "
                "past that point were not read]"
            )
        return result
    finally:
        os.close(fd)


# --- files --------------------------------------------------------------------

_HTML_SUFFIXES = (".html", ".htm", ".xhtml")
_WIDE_CAP = 16 * 1024 * 1024  # UTF-16/32 files are transcoded in memory, this far


def _binary(head: bytes) -> str | None:
    """What the file is if Read should not show it (the text pipeline's rule; a PDF too)."""
    if head.startswith(b"%PDF-"):
        return "a PDF document (WebFetch of its source URL shows its text)"
    return binary_kind(head)


def _describe_binary(shown: str, size: int, what: str) -> str:
    return untrusted_names(
        f"The file is {size:,} bytes of binary data, not text, so Read does not show its "
        f"content. It looks like {what}.",
        [("path", shown)],
    )


def _lines(fh: BinaryIO, cap: int) -> Iterator[tuple[bytes, int]]:
    """Yield (first ``cap`` bytes of each line without its EOL, the line's full length).

    Never holds more than ``cap`` bytes of one line: the rest is read and dropped.
    """
    while True:
        raw = fh.readline(cap + 1)
        if not raw:
            return
        if raw.endswith(b"\n"):
            yield raw[:-1], len(raw) - 1
            continue
        length = len(raw)
        head = raw[:cap]
        # The line goes on: consume it without keeping it.
        while True:
            rest = fh.readline(_SKIP_CHUNK)
            if not rest:
                break
            if rest.endswith(b"\n"):
                length += len(rest) - 1
                break
            length += len(rest)
        yield head, length


def _decode(raw: bytes, cut: bool, codec: str = "utf-8") -> tuple[str, bool]:
    """Decode one line; ``cut`` lines may end mid-character, which is not an error."""
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    decoder = codecs.getincrementaldecoder(codec)()
    try:
        return clean_controls(decoder.decode(raw, final=not cut)), True
    except UnicodeDecodeError:
        return clean_controls(raw.decode(codec, errors="replace")), False


def _read_file(
    fh: BinaryIO, shown: str, size: int, start: int, count: int, asked: int | None
) -> str:
    head = fh.read(_SNIFF_BYTES)
    if not head:
        return untrusted_names("The file is empty (0 bytes).", [("path", shown)])
    what = _binary(head)
    if what is not None:
        return _describe_binary(shown, size, what)
    # The text pipeline's decoding rule, decided on the head, applied line by line.
    codec, _, why = choose_encoding(
        head, html=shown.lower().endswith(_HTML_SUFFIXES), final=len(head) < _SNIFF_BYTES
    )
    fh.seek(0)
    encoding_note = None
    if codec.startswith(("utf-16", "utf-32")):  # not line-compatible with ASCII: transcode
        data = fh.read(_WIDE_CAP + 1)
        fh = io.BytesIO(decode(data[:_WIDE_CAP], final=len(data) <= _WIDE_CAP).text.encode())
        encoding_note = f"the file is {codec} ({why}) and is shown converted to UTF-8"
        codec = "utf-8"
    elif codec != "utf-8":
        encoding_note = f"the file is not UTF-8; shown decoded as {codec} ({why})"

    out: list[str] = []
    budget = MAX_BYTES
    lineno = 0
    next_line: int | None = None
    stop_reason = ""
    notes: list[str] = []
    bad_utf8 = False
    for raw, length in _lines(fh, MAX_BYTES):
        lineno += 1
        if lineno < start:
            continue
        if len(out) >= count:
            next_line = lineno
            stop_reason = (
                "the limit you gave" if count == asked else f"{MAX_LINES:,} lines per call"
            )
            break
        if out and length > budget:
            next_line = lineno
            stop_reason = f"{MAX_BYTES:,} bytes per call"
            break
        cut = length > len(raw) or len(raw) > budget
        text, ok = _decode(raw[:budget], cut, codec)
        bad_utf8 = bad_utf8 or not ok
        if lineno == 1 and text.startswith("\ufeff"):
            text = text[1:]
        if cut:
            notes.append(
                f"line {lineno} is {length:,} bytes long; only its first "
                f"{len(raw[:budget]):,} bytes are shown"
            )
        out.append(f"{lineno:>6}\t{text}")
        budget -= min(length, budget)
        if budget <= 0:
            stop_reason = f"{MAX_BYTES:,} bytes per call"
            next_line = lineno + 1
            break

    if not out:
        raise ToolError(
            f"The file has {lineno:,} line{'s' if lineno != 1 else ''}; offset={start} is "
            f"past its end. Call Read with an offset from 1 to {max(lineno, 1)}",
            names=[("path", shown)],
            file_path=escape_controls(shown),
            lines=lineno,
        )
    first = start
    last = first + len(out) - 1
    header = f"A file of {size:,} bytes, lines {first}-{last}:"
    parts = [header, wrap_untrusted("file", "\n".join(out), [("path", shown)])]
    if encoding_note:
        notes.append(encoding_note)
    if bad_utf8:
        named = "UTF-8" if codec == "utf-8" else codec
        notes.append(f"some bytes are not valid {named} and are shown as U+FFFD")
    if next_line is not None and _has_line(fh, next_line, lineno):
        notes.append(
            f"... truncated at line {last} ({stop_reason}); "
            f"call Read with offset={next_line} to continue"
        )
    parts.extend(f"[{note}]" if not note.startswith("...") else note for note in notes)
    return "\n".join(parts)


def _has_line(fh: BinaryIO, wanted: int, lineno: int) -> bool:
    """Whether line ``wanted`` exists, given the stream sits just after line ``lineno``."""
    if wanted <= lineno:
        return True
    return bool(fh.read(1))


# --- folders ------------------------------------------------------------------


def _entry_line(entry: os.DirEntry[str]) -> str:
    name = escape_controls(entry.name.encode("utf-8", "backslashreplace").decode("utf-8"))
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError:
        return f"{name}\t(unreadable)"
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        return f"{name}/"
    if stat.S_ISREG(mode) and st.st_nlink > 1:
        # Its size would tell about a file outside the session (its other name).
        return f"{name}\t(hard link, {st.st_nlink} links: not read)"
    if stat.S_ISREG(mode):
        return f"{name}\t{st.st_size:,} bytes"
    if stat.S_ISLNK(mode):
        return f"{name}\t(symlink)"
    return f"{name}\t({kind_words(kind_of_mode(mode)).removeprefix('a ')})"


def _list_directory(fd: int, shown: str, start: int, count: int) -> str:
    total = 0

    def counted(it: Iterator[os.DirEntry[str]]) -> Iterator[os.DirEntry[str]]:
        nonlocal total
        for entry in it:
            total += 1
            yield entry

    # nsmallest keeps only the entries this page needs, however large the folder.
    with os.scandir(fd) as it:
        page = heapq.nsmallest(start - 1 + count, counted(it), key=lambda e: e.name)
        lines = [_entry_line(entry) for entry in page[start - 1 :]]
    label = shown if shown.endswith("/") else f"{shown}/"
    if total == 0:
        return untrusted_names("The folder is empty.", [("path", label)])
    if not lines:
        raise ToolError(
            f"The folder has {total:,} entries; offset={start} is past the end. "
            f"Call Read with an offset from 1 to {total}",
            names=[("path", label)],
            file_path=escape_controls(shown),
        )
    last = start + len(lines) - 1
    parts = [
        f"A folder of {total:,} entries, sorted by name; showing {start}-{last} "
        "(folders end in /, files show their size):",
        wrap_untrusted("directory", "\n".join(lines), [("path", label)]),
    ]
    if last < total:
        parts.append(
            f"... truncated; {total - last:,} more entries; "
            f"call Read with offset={last + 1} to continue"
        )
    return "\n".join(parts)
