"""Malformed input, fuzzed: the loader and the judge.json reader never crash, name every
problem, never block, and keep memory bounded whatever the pipeline left behind.

Mutations of real fixture files: truncation, bit flips, deep nesting, huge strings,
other encodings and invalid UTF-8, JSON edge cases, and files that are not files
(a folder, a FIFO, a device, a dangling link). The hostile-size tests build 50 MB files
and measure the peak of Python allocations with tracemalloc against a small cap.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.agent.fetch import StoredFetcher
from harness.agent.opening import first_message
from harness.agent.read import read_tool
from harness.contract.judgment import check_judge_file, check_judge_text
from harness.run import session_digest
from harness.session.loader import LoadLimits, load_session
from harness.session.show import show_document, show_session
from harness.text.jsonstrict import loads_strict
from tests.support.fakes import GOOD_JUDGE
from tests.support.paths import FIXTURES
from tests.support.tried import count

SESSIONS = ["clean", "wrong-types", "prompt-injection", "malformed-finding", "with-trace"]
MB = 1024 * 1024

# -- mutations ----------------------------------------------------------------------


def _flip(data: bytes, positions: list[int]) -> bytes:
    out = bytearray(data)
    for p in positions:
        if out:
            out[p % len(out)] ^= 1 << (p % 8)
    return bytes(out)


@st.composite
def mutation(draw: st.DrawFn) -> Callable[[bytes], bytes | str]:
    """A function from a file's bytes to hostile bytes, or to a kind of non-file."""
    kind = draw(
        st.sampled_from(
            [
                "truncate",
                "flip",
                "nest",
                "nest-value",
                "huge-string",
                "encoding",
                "invalid-utf8",
                "replace",
                "splice",
                "not-a-file",
            ]
        )
    )
    if kind == "truncate":
        frac = draw(st.floats(0, 1))
        return lambda d: d[: int(len(d) * frac)]
    if kind == "flip":
        positions = draw(st.lists(st.integers(0, 10**9), min_size=1, max_size=8))
        return lambda d: _flip(d, positions)
    if kind == "nest":
        n = draw(st.integers(10, 200_000))
        return lambda d: b"[" * n + d + b"]" * n
    if kind == "nest-value":
        n = draw(st.integers(10, 100_000))
        return lambda d: d.replace(b'"text": ', b'"text": ' + b'{"a": ' * n + b"1" + b"}" * n, 1)
    if kind == "huge-string":
        size = draw(st.sampled_from([100_000, 2 * MB]))
        char = draw(st.sampled_from([b"A", b"\\u0000", "é".encode(), b"\\\\"]))
        return lambda d: d.replace(b'"text": "', b'"text": "' + char * (size // len(char)), 1)
    if kind == "encoding":
        codec = draw(st.sampled_from(["utf-16", "utf-16-le", "utf-32", "latin-1", "cp1252"]))
        bom = draw(st.booleans())

        def recode(d: bytes) -> bytes:
            text = d.decode("utf-8", "replace").replace("\ufffd", "?")
            body = text.encode(codec, "replace")
            return (b"\xef\xbb\xbf" + d) if bom and codec == "latin-1" else body

        return recode
    if kind == "invalid-utf8":
        junk = draw(
            st.sampled_from(
                [b"\xff\xfe", b"\xc0\x80", b"\xed\xa0\x80", b"\x80", b"\xf4\x90\x80\x80"]
            )
        )
        where = draw(st.floats(0, 1))
        return lambda d: d[: int(len(d) * where)] + junk + d[int(len(d) * where) :]
    if kind == "replace":
        text = draw(
            st.sampled_from(
                [
                    b"",
                    b" ",
                    b"null",
                    b"[]",
                    b"{}",
                    b"1e999999",
                    b"NaN",
                    b'{"id": 1, "id": 2}',
                    b'{"claims": {"a": 1}}',
                    b'{"sources": "s1"}',
                    b'"just a string"',
                    b"\x00" * 64,
                    b"{" + b'"k": 1, ' * 50_000 + b'"k": 2}',
                ]
            )
            | st.binary(max_size=300)
        )
        return lambda d: text
    if kind == "splice":
        cut = draw(st.floats(0, 1))
        insert = draw(st.binary(max_size=64) | st.sampled_from([b"}", b"]", b",", b'"', b"\\"]))
        return lambda d: d[: int(len(d) * cut)] + insert + d[int(len(d) * cut) :]
    special = draw(st.sampled_from(["dir", "fifo", "dev-zero", "dangling", "loop"]))
    return lambda d: special


def apply(target: Path, mutate: Callable[[bytes], bytes | str]) -> None:
    original = target.read_bytes()
    result = mutate(original)
    target.unlink()
    if isinstance(result, bytes):
        target.write_bytes(result)
    elif result == "dir":
        target.mkdir()
        (target / "inner.json").write_text("{}")
    elif result == "fifo":
        os.mkfifo(target)
    elif result == "dev-zero":
        target.symlink_to("/dev/zero")
    elif result == "dangling":
        target.symlink_to(target.parent / "no-such-file")
    else:
        target.symlink_to(target.name)  # a link to itself


@contextlib.contextmanager
def restored(target: Path) -> Iterator[None]:
    saved = target.read_bytes()
    try:
        yield
    finally:
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()
        target.write_bytes(saved)


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("malformed")
    out = {}
    for name in SESSIONS:
        out[name] = Path(shutil.copytree(FIXTURES / name, root / name, symlinks=True))
    return out


def _strictly_json(data: bytes) -> bool:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return False
    return loads_strict(text, max_depth=None, forbid_fractions=False).parsed


@given(data=st.data())
def test_loader_names_every_broken_file_and_never_raises(
    sessions: dict[str, Path], data: st.DataObject
) -> None:
    count("loader: mutated session files")
    folder = sessions[data.draw(st.sampled_from(SESSIONS))]
    files = sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and p.suffix in (".json", ".jsonl", ".md")
    )
    rel = data.draw(st.sampled_from(files))
    mutate = data.draw(mutation())
    small = data.draw(st.booleans())
    limits = LoadLimits(file_bytes=MB, trace_bytes=MB) if small else LoadLimits()
    target = folder / rel
    with restored(target):
        apply(target, mutate)
        session = load_session(folder, limits=limits)
        blamed = {p.file.split(":")[0] for p in session.problems}
        for problem in session.problems:
            assert problem.reason and problem.code
            assert problem.pointer == "" or problem.pointer.startswith("/")
        json.dumps([p.as_dict() for p in session.problems])
        json.dumps(session.summary())
        if rel.endswith(".json") and rel.count("/") <= 1 and rel.split("/")[0] != "sources":
            whole = target.read_bytes() if target.is_file() else None
            if whole is None or not _strictly_json(whole) or len(whole) > limits.file_bytes:
                assert rel in blamed, (rel, [p.line() for p in session.problems][:5])
        if rel == "trace.jsonl" and not target.is_file():
            assert rel in blamed
        # What the run and `show` build from a session must hold up too.
        first_message(session, "judge", None)
        session_digest(folder)
        show_document(*show_session(folder))


@given(data=st.data())
def test_judge_json_reader_never_raises_and_explains(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    count("judge.json: mutated files")
    folder = tmp_path_factory.mktemp("judge", numbered=True)
    target = folder / "judge.json"
    target.write_text(json.dumps(GOOD_JUDGE, indent=2))
    apply(target, data.draw(mutation()))
    check = check_judge_file(target)
    if check.valid:
        assert check.judgment is not None
        assert json.loads(target.read_bytes()) == check.judgment.model_dump()
    else:
        assert check.issues
        for line in check.error_lines():
            assert line.startswith("at ") or line
    shutil.rmtree(folder)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-10, 10)
    | st.floats(allow_nan=True)
    | st.sampled_from(["Unknown", "unknown", "Unknown ", "deep-judge-v1", "4", ""])
    | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                ["scores", "unknowns", "note", "rubricVersion", "factualAccuracy", "x"]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=20,
)


@given(value=json_values, raw=st.text(max_size=200))
def test_judge_text_check_is_total(value: Any, raw: str) -> None:
    count("judge.json: generated documents")
    for text in (json.dumps(value, allow_nan=True), raw):
        check = check_judge_text(text)
        assert check.valid == (check.issues == [])
        if check.valid:
            assert check.judgment is not None


# -- 50 MB hostile files against small caps ---------------------------------------------

HOSTILE = 50 * MB


def _hostile_file(path: Path, head: bytes, fill: bytes, tail: bytes = b"") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        handle.write(head)
        block = fill * (MB // len(fill))
        for _ in range(HOSTILE // len(block)):
            handle.write(block)
        handle.write(tail)


def peak_of(work: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


HOSTILE_CASES: list[tuple[str, bytes, bytes, bytes]] = [
    ("findings/sq1.json", b'{"id": "sq1", "subQuestion": "', b"A", b'", "claims": []}'),
    ("findings/sq2.json", b"", b"[", b""),
    ("sources.json", b'{"sources": [', b'{"id": "s", "url": "https://e.org/"},', b""),
    ("trace.jsonl", b"", b"x", b""),  # one endless line
    ("trace.jsonl", b"", b'{"tool": "web_search", "ok": true}\n', b""),
]


@pytest.mark.parametrize(("rel", "head", "fill", "tail"), HOSTILE_CASES)
def test_loader_memory_is_bounded_by_the_caps(
    small_session: Path, rel: str, head: bytes, fill: bytes, tail: bytes
) -> None:
    count("loader: 50 MB hostile files")
    _hostile_file(small_session / rel, head, fill, tail)
    limits = LoadLimits(file_bytes=MB, trace_bytes=MB, trace_lines=1000)
    holder: list[Any] = []
    peak = peak_of(lambda: holder.append(load_session(small_session, limits=limits)))
    assert peak < 8 * MB, f"peak {peak / MB:.1f} MB"
    assert any(p.file.startswith(rel) and p.code == "too_large" for p in holder[0].problems)


def test_judge_check_reads_at_most_its_cap(tmp_path: Path) -> None:
    target = tmp_path / "judge.json"
    _hostile_file(target, b'{"note": "', b"x", b'"}')
    holder: list[Any] = []
    peak = peak_of(lambda: holder.append(check_judge_file(target)))
    assert peak < 2 * MB and not holder[0].valid
    assert "larger than" in holder[0].issues[0].found


def test_read_and_stored_fetch_are_bounded(small_session: Path) -> None:
    _hostile_file(small_session / "sources" / "s1.txt", b"", b"z")  # one 50 MB line
    peak = peak_of(lambda: read_tool(small_session, "sources/s1.txt"))
    assert peak < 4 * MB
    fetcher = StoredFetcher(small_session, {"s1": "https://example.org/aspirin"})
    peak = peak_of(lambda: fetcher.fetch("https://example.org/aspirin"))
    assert peak < 16 * MB  # max_bytes is 2 MB; decoding and wrapping copy it a few times


# -- files that are not files never block ----------------------------------------------


# A FIFO opened to be read blocks for ever, so the suite's 120 s (not a tighter bound, which
# a loaded machine could reach) is what fails a read that blocks; the reads take a second.
@pytest.mark.parametrize("rel", ["findings/sq1.json", "sources.json", "trace.jsonl", "judge.json"])
def test_a_fifo_in_the_session_never_blocks(small_session: Path, rel: str) -> None:
    target = small_session / rel
    if target.exists():
        target.unlink()
    os.mkfifo(target)
    session = load_session(small_session)
    if rel != "judge.json":
        assert any(p.file == rel and "FIFO" in p.reason for p in session.problems)
    check = check_judge_file(small_session / "judge.json")
    assert not check.valid
    session_digest(small_session)
    show_document(*show_session(small_session))


def test_the_fixture_copies_were_restored(sessions: dict[str, Path]) -> None:
    for name, folder in sessions.items():
        for path in (FIXTURES / name).rglob("*"):
            if path.is_file():
                assert (folder / path.relative_to(FIXTURES / name)).read_bytes() == (
                    path.read_bytes()
                )
