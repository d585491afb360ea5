"""A session reader that keeps what it read whole: the digest of a run names the bytes its
loader read.

A run loads the session and then hashes it, to know later whether it changed. Both go
through one `SessionReader` made with `keep`: a file the loader read whole is hashed from
those bytes. So the digest is of what was judged, even when the pipeline rewrites a file
between the two (read twice, the digest would name the new bytes, and the next run would
take a judgment of the old ones as up to date). Kept bytes are bounded by `keep`; a file
cut by its cap, or grown past the size it had when opened, is not kept.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.fs.confined import SessionReader
from harness.fs.digest import digest_session
from harness.session.loader import load_session
from tests.support.paths import FIXTURES
from tests.support.sessions import write_small_session
from tests.support.trees import plant
from tests.support.tried import count

SESSIONS = sorted(p.name for p in FIXTURES.iterdir() if (p / "findings").is_dir())


@pytest.mark.parametrize("name", SESSIONS)
def test_the_digest_through_the_loaders_reader_is_the_digest(name: str, tmp_path: Path) -> None:
    folder = tmp_path / name
    shutil.copytree(FIXTURES / name, folder)
    expected = digest_session(folder)
    with SessionReader(folder, keep=1 << 24) as reader:
        session = load_session(folder, reader=reader)
        got = digest_session(folder, reader=reader)
    assert session.dir == folder.resolve()
    assert (got.value, got.files, got.hashed_bytes, got.cut) == (
        expected.value,
        expected.files,
        expected.hashed_bytes,
        expected.cut,
    )


def _rewrite(folder: Path) -> None:  # same size, same file
    finding = folder / "findings" / "sq1.json"
    finding.write_bytes(finding.read_bytes().replace(b"fever", b"FEVER"))


def _add_finding(folder: Path) -> None:
    shutil.copy(folder / "findings" / "sq1.json", folder / "findings" / "sq2.json")


def _remove_finding(folder: Path) -> None:
    (folder / "findings" / "sq1.json").unlink()


def _add_trace(folder: Path) -> None:  # absent when the session was loaded
    (folder / "trace.jsonl").write_text('{"tool": "WebSearch"}\n')


def _add_snapshot(folder: Path) -> None:
    (folder / "sources" / "s2.txt").write_text("Another source.\n")


def _link_finding(folder: Path) -> None:
    finding = folder / "findings" / "sq1.json"
    finding.rename(folder.parent / "elsewhere.json")  # out of the session
    finding.symlink_to(folder.parent / "elsewhere.json")


@pytest.mark.parametrize(
    "change",
    [_rewrite, _add_finding, _remove_finding, _add_trace, _add_snapshot, _link_finding],
)
def test_the_digest_names_the_session_as_the_loader_read_it(
    tmp_path: Path, change: Callable[[Path], None]
) -> None:
    """The pipeline changes the session after the run loaded it and before it hashed it:
    the digest is of the session the run judged, so the next run (which reads the change)
    finds it changed and judges again."""
    folder = write_small_session(tmp_path / "s")
    before = digest_session(folder).value
    with SessionReader(folder, keep=1 << 20) as reader:
        session = load_session(folder, reader=reader)
        change(folder)
        assert digest_session(folder, reader=reader).value == before
    assert session.findings[0].claims[0].text == "Aspirin reduces fever."
    assert digest_session(folder).value != before  # read again: the change is seen


def test_a_reader_keeps_whole_files_within_its_budget(tmp_path: Path) -> None:
    folder = write_small_session(tmp_path / "s")
    text = (folder / "sources" / "s1.txt").read_bytes()
    with SessionReader(folder) as plain:  # keep=0: nothing is kept
        plain.read_bytes("sources/s1.txt", 1 << 20)
        assert plain.kept("sources/s1.txt") is None
    with SessionReader(folder, keep=len(text) + 10) as reader:
        reader.read_bytes("sources/s1.txt", 1 << 20)
        reader.read_bytes("findings/sq1.json", 1 << 20)  # past what is left of the budget
        reader.read_bytes("answer.md", 5)  # cut by its cap: not the whole file
        assert reader.kept("sources/s1.txt") == text
        assert reader.kept("findings/sq1.json") is None
        assert reader.kept("answer.md") is None
    assert reader.kept("sources/s1.txt") is None  # closed: what it kept is let go


def test_a_file_that_grew_while_read_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import harness.fs.confined as confined

    folder = write_small_session(tmp_path / "s")
    real = confined._read_fd

    def grown(fd: int, entry: confined.Entry, cap: int, deadline: object) -> confined.Blob:
        blob = real(fd, entry, cap, deadline)  # type: ignore[arg-type]
        return confined.Blob(blob.data + b"!", blob.size)  # one byte past its size

    monkeypatch.setattr(confined, "_read_fd", grown)
    with SessionReader(folder, keep=1 << 20) as reader:
        reader.read_bytes("answer.md", 1 << 20)
        assert reader.kept("answer.md") is None


# -- property: whatever the tree, the loader's reader gives the session's digest ----------

PLACES = st.sampled_from(
    [
        "findings/a.json",
        "findings/b.json",
        "findings/x",
        "sources/s1.txt",
        "sources/s2.pdf",
        "sources.json",
        "answer.md",
        "trace.jsonl",
        "notes/n.txt",
        "findings/sub/c.json",
    ]
)
KINDS = st.sampled_from(["file", "json", "dir", "symlink-out", "hardlink-out", "fifo"])


@settings(max_examples=60, deadline=None)
@given(plan=st.lists(st.tuples(PLACES, KINDS), max_size=10))
def test_any_tree_the_loaders_reader_gives_the_same_digest(
    tmp_path_factory: pytest.TempPathFactory, plan: list[tuple[str, str]]
) -> None:
    count("fs: digests through the loader's reader of random trees")
    base = tmp_path_factory.mktemp("tree", numbered=True)
    folder, outside = base / "sess", base / "outside.txt"
    folder.mkdir()
    outside.write_text("not the session's")
    for rel, kind in plan:
        plant(folder / rel, kind, outside, folder, text="plain text\n")
    expected = digest_session(folder)
    with SessionReader(folder, keep=1 << 20) as reader:
        load_session(folder, reader=reader)
        got = digest_session(folder, reader=reader)
    assert (got.value, got.files, got.cut) == (expected.value, expected.files, expected.cut)
