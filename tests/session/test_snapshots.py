"""Which file of sources/<id>.* counts, and the store that reads it once."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.session.snapshots import SnapshotStore, select, select_all


@pytest.mark.parametrize(
    ("names", "chosen", "others"),
    [
        (["s1.txt"], "s1.txt", ()),
        (["s1.html", "s1.txt"], "s1.txt", ("s1.html",)),
        (["s1.pdf", "s1.html"], "s1.html", ("s1.pdf",)),
        (["s1.pdf", "s1.md", "s1.json"], "s1.md", ("s1.json", "s1.pdf")),
        (["s1.htm", "s1.html"], "s1.html", ("s1.htm",)),
        (["s1.csv", "s1.pdf"], "s1.pdf", ("s1.csv",)),
        (["s1.TXT", "s1.html"], "s1.TXT", ("s1.html",)),
        (["s10.txt", "s1.v2.txt", ".s1.txt", "s1", "s1.txt.bak"], None, ()),
    ],
)
def test_selection_rule(names: list[str], chosen: str | None, others: tuple[str, ...]) -> None:
    found = select("s1", names)
    if chosen is None:
        assert found is None
        return
    assert found is not None and (found.chosen, found.others) == (chosen, others)
    assert (found.ambiguity() is None) is (not others)


def test_ids_with_dots_match_their_exact_stem() -> None:
    chosen = select_all(["s1.v2.txt", "s1.txt", "s1.v2.pdf", "README"])
    assert {k: v.chosen for k, v in chosen.items()} == {"s1": "s1.txt", "s1.v2": "s1.v2.txt"}


def test_store_reads_once_and_falls_back_when_the_preferred_file_cannot_become_text(
    tmp_path: Path,
) -> None:
    (tmp_path / "sources").mkdir()
    (tmp_path / "sources" / "s1.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (tmp_path / "sources" / "s1.html").write_text("<p>the real text</p>")
    store = SnapshotStore(tmp_path)
    first = store.document("s1")
    assert first is not None and first.plain == "the real text"
    assert any("sources/s1.txt cannot become text" in c for c in first.cuts)
    assert store.document("s1") is first
    assert store.document("nope") is None


def test_store_refuses_a_link_out_of_the_session(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("secret")
    session = tmp_path / "sess"
    (session / "sources").mkdir(parents=True)
    (session / "sources" / "s1.txt").symlink_to(tmp_path / "secret.txt")
    store = SnapshotStore(session)
    assert store.document("s1") is None
    assert "outside the session" in store.refusals["sources/s1.txt"]


def test_store_total_budget_is_said(tmp_path: Path) -> None:
    (tmp_path / "sources").mkdir()
    for n in (1, 2):
        (tmp_path / "sources" / f"s{n}.txt").write_text("x" * 100)
    store = SnapshotStore(tmp_path, total_bytes=100)
    one, two = store.document("s1"), store.document("s2")
    assert one is not None and one.problem is None
    assert two is not None and two.problem is not None and "100-byte total" in two.problem
