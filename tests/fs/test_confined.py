"""The confined reader itself: what it opens, what it refuses, and how it is bounded."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.clock import Deadline
from harness.fs.confined import (
    BoundedStream,
    ConfinedError,
    Refused,
    SessionReader,
    Unreadable,
    real_path,
    shown_name,
    split_rel,
)
from tests.support.trees import plant
from tests.support.tried import count

CANARY = b"CANARY-CONFINED-5e1f outside the session\n"


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """tmp/sess (findings/a.json, sources/s1.txt, answer.md) and tmp/outside/canary.txt."""
    sess = tmp_path / "sess"
    (sess / "findings").mkdir(parents=True)
    (sess / "findings" / "a.json").write_text('{"id": "a"}\n')
    (sess / "sources").mkdir()
    (sess / "sources" / "s1.txt").write_text("own text\n")
    (sess / "answer.md").write_text("answer\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "canary.txt").write_bytes(CANARY)
    (outside / "a.json").write_bytes(CANARY)
    (outside / "s1.txt").write_bytes(CANARY)
    return sess, outside


# -- every spelling of a link is refused -----------------------------------------------

# (what is planted, the path read): a link as the last component and as a folder on the way.
LINKS = [
    ("findings/b.json", "findings/b.json"),
    ("findings", "findings/a.json"),
    ("sources", "sources/s1.txt"),
    ("sources/s2.txt", "sources/s2.txt"),
    ("sources.json", "sources.json"),
    ("answer.md", "answer.md"),
    ("judge.json", "judge.json"),
]


def _plant(sess: Path, outside: Path, rel: str) -> None:
    target = sess / rel
    if target.is_dir():
        target.rename(sess / f"{rel}.moved")
        target.symlink_to(outside, target_is_directory=True)
    else:
        target.unlink(missing_ok=True)
        target.symlink_to(outside / "canary.txt")


@pytest.mark.parametrize(("planted", "read"), LINKS)
def test_a_symlink_in_any_component_is_refused(
    tree: tuple[Path, Path], planted: str, read: str
) -> None:
    sess, outside = tree
    _plant(sess, outside, planted)
    with SessionReader(sess) as reader:
        with pytest.raises(Refused) as caught:
            reader.read_bytes(read, 1 << 20)
        assert caught.value.why == "symlink"
        assert CANARY.decode() not in caught.value.message
        # stat names the link for what it is, never what it leads to.
        entry = reader.stat(planted)
        assert entry is not None and entry.kind == "symlink" and not entry.own
        assert "bytes" not in entry.describe()


def test_trace_linked_to_the_process_environment_is_refused(tree: tuple[Path, Path]) -> None:
    sess, _ = tree
    (sess / "trace.jsonl").symlink_to("/proc/self/environ")
    with SessionReader(sess) as reader, pytest.raises(Refused):
        reader.open_file("trace.jsonl")


def test_a_hard_link_is_not_the_sessions_own(tree: tuple[Path, Path]) -> None:
    sess, outside = tree
    os.link(outside / "canary.txt", sess / "findings" / "b.json")
    with SessionReader(sess) as reader:
        with pytest.raises(Refused, match="2 hard links") as caught:
            reader.read_bytes("findings/b.json", 1 << 20)
        assert caught.value.why == "hardlink"
        entry = reader.stat("findings/b.json")
        assert entry is not None and not entry.own
        assert entry.describe() == "hard link (2 links), not read"  # no size: no oracle


def test_special_files_are_refused_without_opening(
    tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    sess, _ = tree
    os.mkfifo(sess / "findings" / "pipe.json")
    opened: list[str] = []
    real_open = os.open

    def recorded(path: Any, *args: Any, **kwargs: Any) -> int:
        opened.append(os.fspath(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", recorded)
    with SessionReader(sess) as reader, pytest.raises(Refused, match="a FIFO") as caught:
        reader.read_bytes("findings/pipe.json", 10)
    assert caught.value.why == "special" and caught.value.kind == "fifo"
    # Never opened, so never waited on (a FIFO with no writer blocks its reader for ever).
    assert "findings" in opened and not [p for p in opened if p.endswith("pipe.json")]


@pytest.mark.parametrize(
    ("rel", "error", "why"),
    [
        ("missing.txt", Unreadable, "missing"),
        ("answer.md/x", Unreadable, "notdir"),
        ("findings", Unreadable, "dir"),
        ("../outside/canary.txt", Refused, "name"),
        ("/etc/passwd", Refused, "name"),
        ("a\x00b", Refused, "name"),
    ],
)
def test_refusals_are_typed(
    tree: tuple[Path, Path], rel: str, error: type[ConfinedError], why: str
) -> None:
    sess, _ = tree
    with SessionReader(sess) as reader, pytest.raises(error) as caught:
        reader.read_bytes(rel, 10)
    assert caught.value.why == why


def test_split_rel_keeps_names_and_drops_empty_parts() -> None:
    assert split_rel("./findings//a.json") == ["findings", "a.json"]
    assert split_rel(".") == []
    assert split_rel("．．/x") == ["．．", "x"]  # a look-alike is a name


# -- races: a component swapped after the reader was opened ----------------------------


def test_a_folder_swapped_for_a_link_after_opening_does_not_redirect(
    tree: tuple[Path, Path],
) -> None:
    sess, outside = tree
    with SessionReader(sess) as reader:
        listing = reader.list_dir("findings")
        assert [e.name for e in listing.entries] == ["a.json"]
        (sess / "findings").rename(sess / "findings.old")
        (sess / "findings").symlink_to(outside, target_is_directory=True)
        with pytest.raises(Refused):
            reader.read_bytes("findings/a.json", 1 << 20)


def test_a_file_swapped_between_listing_and_open_is_a_typed_refusal(
    tree: tuple[Path, Path],
) -> None:
    sess, outside = tree
    with SessionReader(sess) as reader:
        entries = reader.list_dir("sources").entries
        for entry in entries:
            (sess / entry.rel).unlink()
            (sess / entry.rel).symlink_to(outside / "s1.txt")
            with pytest.raises(Refused):
                reader.read_bytes(entry.rel, 100)
        (sess / "sources" / "s1.txt").unlink()  # gone: ENOENT, typed
        with pytest.raises(Unreadable):
            reader.read_bytes("sources/s1.txt", 100)


def test_the_session_folder_renamed_away_is_still_the_one_read(tree: tuple[Path, Path]) -> None:
    sess, outside = tree
    with SessionReader(sess) as reader:
        sess.rename(sess.with_name("moved"))
        sess.symlink_to(outside, target_is_directory=True)
        assert reader.read_bytes("answer.md", 100).data == b"answer\n"


# -- bounds ----------------------------------------------------------------------------


def test_the_byte_cap_cuts_and_says_so(tree: tuple[Path, Path]) -> None:
    sess, _ = tree
    (sess / "big.txt").write_bytes(b"x" * 5000)
    with SessionReader(sess) as reader:
        blob = reader.read_bytes("big.txt", 1000)
        whole = reader.read_bytes("answer.md", 1000)
    assert blob.data == b"x" * 1000 and blob.size == 5000
    assert blob.cut == "cut at the 1,000-byte cap"
    assert whole.cut is None and whole.data == b"answer\n"


def test_an_expired_deadline_stops_a_read(tree: tuple[Path, Path]) -> None:
    sess, _ = tree
    (sess / "big.txt").write_bytes(b"x" * (3 << 20))
    with SessionReader(sess, deadline=Deadline.after(0)) as reader:
        blob = reader.read_bytes("big.txt", 10 << 20)
    assert blob.cut is not None and "time limit" in blob.cut
    assert len(blob.data) < 3 << 20


def test_a_sparse_10_gb_file_costs_one_cap(
    tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    sess, _ = tree
    with open(sess / "huge.bin", "wb") as handle:
        handle.truncate(10 << 30)
    read: list[int] = []
    real_read = os.read

    def counted(fd: int, n: int) -> bytes:
        chunk = real_read(fd, n)
        read.append(len(chunk))
        return chunk

    monkeypatch.setattr(os, "read", counted)
    with SessionReader(sess) as reader:
        blob = reader.read_bytes("huge.bin", 4 << 20)
    assert len(blob.data) == 4 << 20 and blob.cut is not None
    # The work, not the time: the cap and one byte to notice more, of the 10 GB.
    assert sum(read) == (4 << 20) + 1


def test_bounded_stream_ends_at_its_cap(tree: tuple[Path, Path]) -> None:
    sess, _ = tree
    (sess / "line.txt").write_bytes(b"a" * 10_000)
    fd = os.open(sess / "line.txt", os.O_RDONLY)
    stream = BoundedStream(fd, 4096, Deadline())
    import io

    with io.BufferedReader(stream) as handle:
        assert len(handle.readline()) == 4096
        assert handle.readline() == b""
    assert stream.stopped == "stopped at the 4,096-byte cap"


# -- listings --------------------------------------------------------------------------


def test_the_cap_counts_candidates_only(tree: tuple[Path, Path]) -> None:
    """Thousands of junk names that sort first do not hide the real findings."""
    sess, _ = tree
    folder = os.open(sess / "findings", os.O_RDONLY | os.O_DIRECTORY)
    try:
        for i in range(5000):
            os.close(os.open(f"{i:05d}.junk", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=folder))
    finally:
        os.close(folder)
    (sess / "findings" / "b.json").write_text("{}")
    with SessionReader(sess) as reader:
        listing = reader.list_dir("findings", suffix=".json", cap=2)
        small = reader.list_dir("findings", suffix=".json", cap=1)
    assert [e.name for e in listing.entries] == ["a.json", "b.json"]
    assert listing.scanned == 5002 and listing.candidates == 2 and listing.cut == []
    assert [e.name for e in small.entries] == ["a.json"]
    assert small.cut == ["findings/: holds 2 matching entries; only the first 1 were kept"]


def test_the_scan_cap_stops_and_says_so(tree: tuple[Path, Path]) -> None:
    sess, _ = tree
    for i in range(20):
        (sess / "sources" / f"x{i}.txt").write_text("")
    with SessionReader(sess) as reader:
        listing = reader.list_dir("sources", scan_cap=5)
    assert listing.scanned == 5
    assert any("scanning stopped after 5 entries" in cut for cut in listing.cut)


def test_names_that_are_not_utf8_round_trip_and_show_escaped(tree: tuple[Path, Path]) -> None:
    sess, _ = tree
    raw = os.fsencode(str(sess / "findings")) + b"/bad\xff.json"
    with open(raw, "wb") as handle:
        handle.write(b'{"id": "bad"}')
    with SessionReader(sess) as reader:
        names = [e.name for e in reader.list_dir("findings", suffix=".json").entries]
        bad = next(n for n in names if n.startswith("bad"))
        assert shown_name(f"findings/{bad}") == "findings/bad\\xff.json"
        assert reader.read_bytes(f"findings/{bad}", 100).data == b'{"id": "bad"}'


def test_a_walk_of_1200_nested_folders_is_iterative_and_bounded(tmp_path: Path) -> None:
    sess = tmp_path / "deep"
    sess.mkdir()
    fd = os.open(sess, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(1200):
            os.mkdir("d", dir_fd=fd)
            (Path(f"/proc/self/fd/{fd}") / "d" / "f.txt").write_text("x")
            nxt = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nxt
    finally:
        os.close(fd)
    try:
        with SessionReader(sess) as reader:
            walk = reader.walk(max_depth=64)
        assert len(walk.entries) == 64
        assert any("deeper than 64 levels were not listed" in cut for cut in walk.cut)
    finally:
        _remove_deep(sess)


def _remove_deep(top: Path) -> None:
    # Bottom-up, by descriptor: pytest's own clean-up recurses and would hit the limit.
    fds = [os.open(top, os.O_RDONLY | os.O_DIRECTORY)]
    while True:
        try:
            fds.append(os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
        except FileNotFoundError:
            break
    while fds:
        fd = fds.pop()
        for name in os.listdir(fd):
            if name != "d":
                os.unlink(name, dir_fd=fd)
        if fds:
            os.rmdir("d", dir_fd=fds[-1])
        os.close(fd)


def test_walk_skips_the_artifact_folder_and_lists_links_without_following(
    tree: tuple[Path, Path],
) -> None:
    sess, outside = tree
    (sess / ".judge").mkdir()
    (sess / ".judge" / "run.json").write_text("{}")
    (sess / "out").symlink_to(outside, target_is_directory=True)
    with SessionReader(sess) as reader:
        walk = reader.walk(skip=(".judge",))
    rels = {e.rel: e.describe() for e in walk.entries}
    assert rels == {
        "answer.md": "7 bytes",
        "out": "symbolic link, not followed",
        "findings/a.json": "12 bytes",
        "sources/s1.txt": "9 bytes",
    }


# -- property: whatever the tree, only typed refusals, never an outside byte ------------

NAMES = st.sampled_from(["a", "b", "findings", "sources", "x.json", "\udcff.json", ".."])
KINDS = st.sampled_from(["file", "dir", "symlink-out", "symlink-in", "hardlink-out", "fifo"])


@settings(max_examples=150)
@given(
    plan=st.lists(st.tuples(st.lists(NAMES, min_size=1, max_size=3), KINDS), max_size=12),
    reads=st.lists(st.lists(NAMES, min_size=0, max_size=4), min_size=1, max_size=8),
)
def test_any_tree_any_path_only_typed_outcomes(
    tmp_path_factory: pytest.TempPathFactory,
    plan: list[tuple[list[str], str]],
    reads: list[list[str]],
) -> None:
    count("fs: confined reads of random trees")
    base = tmp_path_factory.mktemp("tree", numbered=True)
    sess, outside = base / "sess", base / "outside"
    sess.mkdir()
    outside.mkdir()
    canary = outside / "canary.txt"
    canary.write_bytes(CANARY)
    for parts, kind in plan:
        if ".." in parts:
            continue
        target = sess.joinpath(*parts)
        plant(target, kind, canary, sess)
    with SessionReader(sess) as reader:
        for parts in reads:
            rel = "/".join(parts)
            calls: list[tuple[Any, tuple[Any, ...]]] = [
                (reader.read_bytes, (rel, 1000)),
                (reader.stat, (rel,)),
                (reader.list_dir, (rel,)),
                (reader.walk, (rel,)),
            ]
            for op, args in calls:
                try:
                    got = op(*args)
                except ConfinedError:
                    continue
                assert "CANARY" not in repr(got)


def test_the_read_tool_with_the_runs_reader_walks_from_its_descriptor(
    tree: tuple[Path, Path],
) -> None:
    from harness.agent.read import read_tool

    sess, outside = tree
    (outside / "answer.md").write_bytes(CANARY)
    with SessionReader(sess) as reader:
        sess.rename(sess.with_name("moved"))
        sess.symlink_to(outside, target_is_directory=True)  # the session path swapped
        out = read_tool(sess, "answer.md", reader=reader)
    assert "answer" in out and "CANARY" not in out


# -- property: the kernel's real path is os.path.realpath's ------------------------------

LINK_TARGETS = st.sampled_from(["a", "a/b", "../a", "b/..", "nowhere", "loop", "f", "/"])


@settings(max_examples=150)
@given(
    links=st.lists(st.tuples(st.sampled_from(["L", "a/M", "loop", "a/b/N"]), LINK_TARGETS)),
    asked=st.lists(
        st.lists(
            st.sampled_from(["a", "b", "L", "M", "N", "f", "loop", "..", ".", "nope"]), max_size=5
        ),
        min_size=1,
        max_size=6,
    ),
)
def test_real_path_is_realpath_whatever_the_links(
    tmp_path_factory: pytest.TempPathFactory,
    links: list[tuple[str, str]],
    asked: list[list[str]],
) -> None:
    """`real_path` asks the kernel (the path opened with O_PATH, its name under /proc);
    on any tree of folders, a file and links (dangling, looping, up and absolute) it names
    exactly what `os.path.realpath` names, trailing slash or not."""
    count("fs: real paths of random trees of links")
    base = tmp_path_factory.mktemp("links", numbered=True)
    (base / "a" / "b").mkdir(parents=True)
    (base / "f").write_text("x")
    for name, target in links:
        where = base / name
        if not os.path.lexists(where):
            os.symlink(target, where)
    for parts in asked:
        for path in (os.path.join(base, *parts), os.path.join(base, *parts) + "/"):
            assert real_path(path) == os.path.realpath(path), path


def test_the_kernel_does_not_name_a_deleted_folder(tmp_path: Path) -> None:
    from harness.fs import confined

    gone = tmp_path / "gone"
    gone.mkdir()
    assert confined._opened_path(gone) == str(gone.resolve())
    here = os.getcwd()
    os.chdir(gone)
    try:
        gone.rmdir()  # /proc names it "…/gone (deleted)": os.path.realpath answers instead
        assert confined._opened_path(".") is None
        with pytest.raises(Refused):  # as before: realpath cannot name it either
            real_path(".")
    finally:
        os.chdir(here)


def test_the_reader_names_its_folder_as_realpath_and_leaks_no_descriptor(
    tmp_path: Path,
) -> None:
    """The folder is opened through a link (as realpath then open did) and named by the
    kernel; reads at the top and below share the root's descriptor without closing it,
    and nothing is left open after many readers and reads, refusals included."""
    real = tmp_path / "real"
    (real / "findings").mkdir(parents=True)
    (real / "a.json").write_text("{}")
    (real / "findings" / "b.json").write_text("[]")
    os.symlink(real / "a.json", real / "link.json")
    os.symlink(real, tmp_path / "via")

    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    before = open_fds()
    for _ in range(50):
        with SessionReader(tmp_path / "via") as reader:
            assert str(reader.root) == os.path.realpath(tmp_path / "via")
            for _ in range(3):  # the root's descriptor outlives reads of the top level
                assert reader.read_bytes("a.json", 100).data == b"{}"
            assert reader.read_bytes("findings/b.json", 100).data == b"[]"
            assert reader.stat("a.json") is not None and reader.stat("nope") is None
            with pytest.raises(Refused):
                reader.read_bytes("link.json", 100)
            with pytest.raises(Unreadable):
                reader.read_bytes("findings/nope/c.json", 100)
            assert {e.rel for e in reader.walk(".").entries} >= {"a.json", "findings/b.json"}
    assert open_fds() == before
    with pytest.raises(Unreadable):
        SessionReader(real / "a.json")  # a file is not a session folder, said as before
    assert open_fds() == before


def test_a_walk_never_closes_the_root_it_began_from(tmp_path: Path) -> None:
    """The descriptor a walk starts from is compared with the root it was given, not the
    reader's current one: a reader closed meanwhile is never closed a second time (which
    could close whatever reused its number)."""
    from harness.fs import confined

    root = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    other = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        confined._done_with(root, root)
        os.fstat(root)  # still open
        confined._done_with(other, root)
        with pytest.raises(OSError):
            os.fstat(other)
    finally:
        os.close(root)
