"""Session-file problems in every summary (#33): `judge run`'s summary, `judge cite`'s
table and the batch row (its JSON line and its table marker) say "N problems in the
session's files" and name the first, as the index row does (tests/page/test_not_audited.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from harness.cli.main import cli
from harness.session.file_problems import summary
from tests.support.paths import FIXTURES

REPLAYS = FIXTURES / "replays"
FIRST = "findings/sq2.json: invalid JSON"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env={"ANTHROPIC_API_KEY": "", "COLUMNS": "200"})
    return result.exit_code, result.stdout, result.stderr


def _copy(tmp_path: Path, *names: str) -> Path:
    root = tmp_path / "root"
    for name in names:
        shutil.copytree(FIXTURES / name, root / name)
    return root


def _replays(name: str) -> list[str]:
    return ["--replay", str(REPLAYS / f"{name}.jsonl"), "--cite-replay"]


def test_the_wording() -> None:
    assert summary([]) is None
    assert summary(["a.json: bad"]) == "1 problem in the session's files: a.json: bad"
    assert summary(["a: x", "b: y"]) == "2 problems in the session's files; the first: a: x"


def test_run_summary_names_the_first(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "malformed-finding") / "malformed-finding"
    name = "malformed-finding"
    code, _, err = invoke(
        "run", str(folder), *_replays(name), str(REPLAYS / f"{name}.cite.jsonl"),
        "--fetch", "stored",
    )  # fmt: skip
    assert code == 0, err
    assert "  session:  1 problem in the session's files: " + FIRST in err


def test_cite_table_names_the_first(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "malformed-finding") / "malformed-finding"
    code, _, err = invoke("cite", str(folder), "--offline")
    assert code == 0, err
    assert "1 problem in the session's files: " + FIRST in " ".join(err.split())


def test_a_clean_session_says_nothing_of_its_files(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "clean") / "clean"
    code, _, err = invoke("cite", str(folder), "--offline")
    assert code == 0, err
    assert "session's files" not in err


def test_batch_row_and_table_marker(tmp_path: Path) -> None:
    root = _copy(tmp_path, "malformed-finding", "clean")
    code, out, err = invoke("batch", str(root), "--replay-dir", str(REPLAYS))
    assert code == 0, err
    lines = {o["session"]: o for o in map(json.loads, out.splitlines())}
    # The contract's keys.
    keys = {"session", "dir", "wroteJudge", "upToDate", "note", "outcome", "skipped"}
    assert set(lines["malformed-finding"]) == set(lines["clean"]) == keys
    note = lines["malformed-finding"]["note"]
    assert "wrote a valid judge.json" in note  # the run's own note first
    assert " [1 problem in the session's files: " + FIRST in note
    assert "session's files" not in lines["clean"]["note"]
    # The table's `files` column counts them (wide: the whole table, boxed) …
    row = next(x for x in err.splitlines() if "│ malformed-finding" in x)
    assert row.split("│")[-2].strip() == "1"
    assert "file problems" in err
    clean = next(x for x in err.splitlines() if "│ clean" in x)
    assert clean.split("│")[-2].strip() == ""
    # … and the first is named below it.
    assert "malformed-finding: 1 problem in the session's files" in " ".join(err.split())
