"""The shipped labelled set is what its README promises (sessions_fixture/labelled/README.md)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from harness.agree.labels import read_labels
from harness.session.loader import load_session

LABELLED = Path(__file__).resolve().parents[2] / "sessions_fixture" / "labelled"


def test_every_label_names_a_claim_of_its_session() -> None:
    labels = read_labels(LABELLED / "labels.jsonl")
    sessions = {p.name for p in (LABELLED / "sessions").iterdir() if p.is_dir()}
    assert len(sessions) == 24 and set(labels.sessions()) == sessions
    for name in sessions:
        ids = {claim.id for _, claim in load_session(LABELLED / "sessions" / name).claims}
        named = {x.claimId for _, x in labels.claims if x.session == name}
        assert named and named <= ids, name


def test_readme_counts_and_licence() -> None:
    labels = read_labels(LABELLED / "labels.jsonl")
    readme = (LABELLED / "README.md").read_text(encoding="utf-8")
    counts = Counter(x.support for _, x in labels.claims)
    assert f"{len(labels.claims)} claim labels" in readme
    assert f"{len(labels.ratings)} session ratings" in readme
    for word, key in (("`supported`: ", "supported"), ("`partial`: ", "partial")):
        assert f"{word}{counts[key]}" in readme
    assert f"`unsupported`: {counts['unsupported']}" in readme
    assert (LABELLED / "LICENSE-expertqa").read_text(encoding="utf-8").startswith("MIT License")
    origin = json.loads((LABELLED / "origin.json").read_text(encoding="utf-8"))
    assert set(origin) == set(labels.sessions())


def test_no_label_leaks_into_what_the_judge_reads() -> None:
    for path in (LABELLED / "sessions").glob("*/findings/*.json"):
        for claim in json.loads(path.read_text(encoding="utf-8"))["claims"]:
            assert "verification" not in claim and "expertqa" not in claim, path


def test_every_session_has_both_replays() -> None:
    for folder in (LABELLED / "sessions").iterdir():
        assert (LABELLED / "replays" / f"{folder.name}.jsonl").is_file()
        assert (LABELLED / "replays" / f"{folder.name}.cite.jsonl").is_file()
