"""The committed fixture sessions are exactly what scripts/build_fixtures.py writes.

The builder reads the trimmed ExpertQA copy vendored in sessions_fixture/data/expertqa (see its
README.md and scripts/vendor_expertqa.py), so these checks need nothing outside the repository.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support.paths import FIXTURES, REPO

BUILDER = REPO / "scripts" / "build_fixtures.py"
DATA = FIXTURES / "data" / "expertqa"
VENDOR = REPO / "scripts" / "vendor_expertqa.py"
OWNED_TOP = {"README.md", "index.json", "LICENSE-expertqa"}
OWNED_IN_SESSION = {"findings", "sources", "sources.json", "answer.md", "trace.jsonl"}
MALFORMED = {"malformed-finding/findings/sq2.json"}


def _owned_files(root: Path) -> dict[str, bytes]:
    """Files under ``root`` that the builder writes (other tools may keep files beside them)."""
    out: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(root)
        owned = (len(rel.parts) == 1 and rel.name in OWNED_TOP) or (
            len(rel.parts) >= 2 and rel.parts[1] in OWNED_IN_SESSION
        )
        if owned:
            out[rel.as_posix()] = path.read_bytes()
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fixtures")
    # No --data: the builder's default must be the vendored copy.
    result = subprocess.run(
        [sys.executable, str(BUILDER), "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def index() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / "index.json").read_text())
    return data


def test_committed_fixtures_are_byte_identical_to_a_rebuild(built: Path) -> None:
    fresh, committed = _owned_files(built), _owned_files(FIXTURES)
    assert sorted(fresh) == sorted(committed), "run `make fixtures` and commit the result"
    changed = [name for name in fresh if fresh[name] != committed[name]]
    assert not changed, f"stale fixtures (run `make fixtures`): {changed[:10]}"


def test_rebuild_is_deterministic(built: Path, tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(BUILDER), "--data", str(DATA), "--out", str(tmp_path)],
        capture_output=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
    )
    assert _owned_files(tmp_path) == _owned_files(built)


def test_missing_data_is_a_clear_error(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(BUILDER), "--data", str(tmp_path / "nope"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0
    assert "ExpertQA data not found" in result.stderr


def test_every_indexed_session_exists_and_is_described(
    index: dict[str, Any],
) -> None:
    readme = (FIXTURES / "README.md").read_text()
    required = {
        "clean",
        "dangling-citations",
        "quote-not-in-source",
        "no-sources-json",
        "no-answer",
        "empty-findings",
        "no-findings-dir",
        "malformed-finding",
        "wrong-types",
        "with-trace",
        "prompt-injection",
        "large",
    }
    assert required <= set(index)
    for name, entry in index.items():
        assert (FIXTURES / name).is_dir(), name
        assert entry["note"] and f"`{name}`" in readme
    assert (FIXTURES / "LICENSE-expertqa").read_text().startswith("MIT License")


def test_json_files_parse_except_the_deliberately_malformed_one() -> None:
    for path in sorted(FIXTURES.rglob("*.json")):
        rel = path.relative_to(FIXTURES).as_posix()
        text = path.read_text(encoding="utf-8")
        if rel in MALFORMED:
            with pytest.raises(json.JSONDecodeError):
                json.loads(text)
        else:
            json.loads(text)
    for path in sorted(FIXTURES.rglob("trace.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            call = json.loads(line)
            assert set(call) == {"tool", "input", "ok", "ms"}


def _claims(session: Path) -> list[Any]:
    claims: list[Any] = []
    for path in sorted((session / "findings").glob("*.json")):
        claims.extend(json.loads(path.read_text(encoding="utf-8"))["claims"])
    return claims


def test_session_shapes_match_their_purpose(index: dict[str, Any]) -> None:
    large = _claims(FIXTURES / "large")
    assert len(large) >= 300
    assert len(large) == index["large"]["expect"]["claims"]
    assert not (FIXTURES / "no-findings-dir" / "findings").exists()
    assert not list((FIXTURES / "empty-findings" / "findings").glob("*.json"))
    assert not (FIXTURES / "no-sources-json" / "sources.json").exists()
    assert not (FIXTURES / "no-answer" / "answer.md").exists()
    for name in ("clean", "with-trace"):
        assert index[name]["expect"]["problems"] == []
        assert (FIXTURES / name / "trace.jsonl").is_file()
        assert (FIXTURES / name / "answer.md").is_file()


def test_clean_quotes_are_verbatim_in_their_snapshots() -> None:
    session = FIXTURES / "clean"
    ids = {s["id"] for s in json.loads((session / "sources.json").read_text())["sources"]}
    for claim in _claims(session):
        assert set(claim["sourceIds"]) <= ids
        quotes = claim["quotes"]
        assert quotes
        for quote in quotes:
            snapshot = (session / "sources" / f"{quote['sourceId']}.txt").read_text()
            assert quote["text"] in snapshot


def test_deliberate_problems_are_indexed(index: dict[str, Any]) -> None:
    def expect(name: str) -> dict[str, Any]:
        value: dict[str, Any] = index[name]["expect"]
        return value

    qnis = expect("quote-not-in-source")
    hows = sorted(q["how"] for qs in qnis["quoteNotInSource"].values() for q in qs)
    assert hows == ["altered", "fabricated", "misattributed"]
    assert len(qnis["noQuote"]) == 1
    assert len(qnis["numberMismatch"]) == 1
    assert expect("dangling-citations")["danglingSourceIds"]
    assert expect("wrong-types")["duplicateClaimIds"] == ["sq1-c1"]
    assert len(expect("wrong-types")["wrongTypes"]) == 4
    assert "invalid_json" in expect("malformed-finding")["problemKinds"]
    trace = expect("with-trace")["trace"]
    assert max(trace["repeatedFetches"].values()) >= 3
    assert max(trace["repeatedSearches"].values()) >= 2
    assert len(expect("prompt-injection")["injections"]) >= 6
    for name in ("empty-findings", "no-findings-dir"):
        assert len(expect(name)["unknownDimensions"]) == 5


def _load_synth() -> ModuleType:
    spec = importlib.util.spec_from_file_location("synth", REPO / "bench" / "synth.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_synthetic_sessions_have_the_requested_size_and_verbatim_quotes(tmp_path: Path) -> None:
    synth = _load_synth()
    synth.make_session(tmp_path / "x" / "s", 230, seed=3)
    synth.make_session(tmp_path / "y" / "s", 230, seed=3)
    assert _owned_files(tmp_path / "x") == _owned_files(tmp_path / "y")
    assert len(_owned_files(tmp_path / "x")) > 10
    claims = _claims(tmp_path / "x" / "s")
    assert len(claims) == 230
    assert len({c["id"] for c in claims}) == 230
    for claim in claims:
        for quote in claim["quotes"]:
            text = (tmp_path / "x" / "s" / "sources" / f"{quote['sourceId']}.txt").read_text()
            assert quote["text"] in text


# -- the vendored ExpertQA copy ----------------------------------------------------------------


def test_vendored_data_carries_its_licence_and_provenance() -> None:
    assert (DATA / "LICENSE").read_bytes() == (FIXTURES / "LICENSE-expertqa").read_bytes()
    assert (DATA / "LICENSE").read_text().startswith("MIT License")
    readme = (DATA / "README.md").read_text()
    assert "chaitanyamalaviya/ExpertQA" in readme
    assert "1aa7ba81bd4c083c12ef1aa2fee338f6cb60fa87" in readme
    assert "data/lfqa/" in readme


def test_vendored_data_holds_only_the_records_the_fixtures_cite(index: dict[str, Any]) -> None:
    cited = {(o["file"], o["line"]) for entry in index.values() for o in entry["origin"]}
    kept = set()
    for name in ("rand_val.jsonl", "rand_test.jsonl"):
        for line_no, line in enumerate((DATA / name).read_text().splitlines(), start=1):
            if line.strip():
                kept.add((name, line_no))
                assert len(json.loads(line)["answers"]) == 1
    assert kept == cited


def test_supported_claims_have_the_promised_shape() -> None:
    path = DATA / "supported-claims.jsonl"
    assert path.stat().st_size < 3_000_000
    lines = path.read_text(encoding="utf-8").splitlines()
    readme = (DATA / "README.md").read_text()
    assert f"{len(lines)} claims are written" in readme
    assert len(lines) > 1000
    for line in lines:
        row = json.loads(line)
        assert set(row) == {"question", "system", "claim", "evidence"}
        assert row["question"] and row["claim"] and row["system"]
        assert row["evidence"]
        for ev in row["evidence"]:
            assert set(ev) == {"marker", "url", "text"}
            assert re.fullmatch(r"\[\d+\]", ev["marker"])
            assert ev["url"].startswith("http") and ev["text"].strip() == ev["text"] != ""


def test_vendoring_the_vendored_copy_changes_nothing(tmp_path: Path) -> None:
    """The trimming is a fixed point, and its own check (same fixtures) passes on it."""
    result = subprocess.run(
        [sys.executable, str(VENDOR), str(DATA), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    for name in ("rand_val.jsonl", "rand_test.jsonl", "LICENSE"):
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), name
    # Only the cited records' Complete claims remain, each one of the full evaluation file's.
    full = set((DATA / "supported-claims.jsonl").read_text(encoding="utf-8").splitlines())
    again = (tmp_path / "supported-claims.jsonl").read_text(encoding="utf-8").splitlines()
    assert again and set(again) <= full


def test_vendoring_needs_a_source_folder(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(VENDOR), str(tmp_path / "nope"), "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0
    assert "ExpertQA data not found" in result.stderr
    assert not (tmp_path / "o").exists()
    no_arg = subprocess.run([sys.executable, str(VENDOR)], capture_output=True, text=True)
    assert no_arg.returncode == 2 and "source" in no_arg.stderr
