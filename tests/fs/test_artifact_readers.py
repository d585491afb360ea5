"""The second readers of `.judge/` read through the one confined reader.

The audit's fetched-text cache, the up-to-date rule and the report page each read the
harness's own artifacts. A symbolic link, a hard link or a FIFO planted at each artifact
path is refused by each of them with the confined reader's own reason, visibly (the
cache's `refused`, run.json's `upToDateRefused`, the page's problem), never followed and
never a crash. Each plant points at a *good* copy of the artifact, so a reader that
followed it would get a usable file: the up-to-date rule would skip the model, the page
would show the outside run.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.audit import audit_session
from harness.audit.fetched import FetchedTexts
from harness.fs.cache import cache_name
from harness.page.inputs import load_page
from harness.run import judge_session
from harness.run.uptodate import check_why
from harness.session.loader import load_session
from tests.support.fakes import GOOD_JUDGE, ScriptedModel, message, text, write_judge
from tests.support.sealed import write_sealed

REASONS = {
    "symlink": "is a symbolic link; links are not followed",
    "hardlink": "has 2 hard links, so it is not the session's own file (its other name may "
    "be outside the session); not read",
    "fifo": "is a FIFO, not a regular file; not read",
}


def plant(kind: str, path: Path, outside: Path) -> None:
    """Replace `path` by a `kind` plant; `outside` is a good copy of what was there."""
    path.unlink(missing_ok=True)
    if kind == "symlink":
        path.symlink_to(outside)
    elif kind == "hardlink":
        os.link(outside, path)
    else:
        os.mkfifo(path)


def judged(folder: Path) -> None:
    model = ScriptedModel([message(write_judge(GOOD_JUDGE)), message(text("Done."))])
    result = judge_session(folder, client=model, fetch="off", cite=False)
    assert result.outcome == "model-written"


def keep_outside(path: Path, tmp_path: Path) -> Path:
    outside = tmp_path / f"outside-{path.name}"
    shutil.copyfile(path, outside)
    return outside


@pytest.mark.parametrize("kind", sorted(REASONS))
def test_the_fetched_text_cache(small_session: Path, tmp_path: Path, kind: str) -> None:
    cache = small_session / ".judge" / "sources"
    cache.mkdir(parents=True)
    outside = tmp_path / "outside.txt"
    outside.write_text("OUTSIDE TEXT that a follower would cache and judge with\n")
    plant(kind, cache / cache_name("s2"), outside)
    texts = FetchedTexts(small_session / ".judge", {"s2": "https://example.org/s2"}, "stored")
    assert texts("s2") is None
    assert texts.refused["s2"] == f".judge/sources/s2.txt {REASONS[kind]}"
    # The refusal reaches the audit's report (citations.json) as it is.
    report = audit_session(load_session(small_session), offline=True, source_text=texts)
    assert report.sourceTexts is not None
    assert REASONS[kind] in report.sourceTexts.refused["s2"]
    assert "OUTSIDE TEXT" not in report.to_json()


def test_the_fetched_text_cache_behind_a_linked_folder(small_session: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / cache_name("s2")).write_text("OUTSIDE TEXT\n")
    (small_session / ".judge").mkdir()
    (small_session / ".judge" / "sources").symlink_to(elsewhere)
    texts = FetchedTexts(small_session / ".judge", {"s2": "https://example.org/s2"}, "stored")
    assert texts("s2") is None
    assert "goes through .judge/sources, a symbolic link" in texts.refused["s2"]


@pytest.mark.parametrize("artifact", [".judge/run.json", "judge.json"])
@pytest.mark.parametrize("kind", sorted(REASONS))
def test_the_up_to_date_rule(small_session: Path, tmp_path: Path, kind: str, artifact: str) -> None:
    judged(small_session)
    inputs = json.loads((small_session / ".judge" / "run.json").read_text())["upToDate"]["inputs"]
    assert check_why(small_session, inputs)[0] is not None  # up to date before the plant
    path = small_session / artifact
    plant(kind, path, keep_outside(path, tmp_path))
    fresh, why = check_why(small_session, inputs)
    assert fresh is None
    assert why == f"{artifact} {REASONS[kind]}"
    if artifact == "judge.json" and kind != "fifo":
        return  # the run below would judge again over the plant: covered by tests/fs
    # A run then judges again (the model is called) and records why in run.json.
    model = ScriptedModel([message(write_judge(GOOD_JUDGE)), message(text("Done."))])
    again = judge_session(small_session, client=model, fetch="off", cite=False)
    assert again.outcome != "up-to-date" and len(model.requests) >= 1
    record = json.loads((small_session / ".judge" / "run.json").read_text())
    assert record["upToDateRefused"] == why


Reader = Callable[[Path], str | None]


def _run_problem(folder: Path) -> str | None:
    return load_page(folder).run.problem


def _audit_problem(folder: Path) -> str | None:
    return load_page(folder).audit.problem


@pytest.mark.parametrize(
    ("artifact", "problem"),
    [(".judge/run.json", _run_problem), (".judge/citations.json", _audit_problem)],
)
@pytest.mark.parametrize("kind", sorted(REASONS))
def test_the_report_page(
    small_session: Path, tmp_path: Path, kind: str, artifact: str, problem: Reader
) -> None:
    judged(small_session)
    report = audit_session(load_session(small_session), offline=True)
    write_sealed(small_session / ".judge" / "citations.json", "citations", report.to_dict())
    assert problem(small_session) is None  # both read before the plant
    path = small_session / artifact
    plant(kind, path, keep_outside(path, tmp_path))
    said = problem(small_session)
    assert said is not None and said.startswith(f"{artifact} {REASONS[kind]}. ")
