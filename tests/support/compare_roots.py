"""Two roots of judged sessions with known differences, for `judge compare`'s tests.

Root A is the shipped labelled set judged from its recorded replies (as `make agree`
does); root B is the same set judged again in another folder, then edited where a test
needs a known shift: a judge.json's scores, a claim's verdict, a run record's model. Each
edit is resealed through the real sealer (harness.fs.origin.sealed_artifact), with the
run record vouching for the new files, as a run of this installation would leave them.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from harness.cli.main import cli
from harness.contract.rubric import DIMENSIONS, UNKNOWN
from harness.fs.origin import sealed_artifact
from tests.support.paths import REPO

LABELLED = REPO / "sessions_fixture" / "labelled"

ALL = [f"eqa-{i:02d}" for i in range(1, 25)]
ONLY_A = "eqa-24"  # judged on A only: unpaired
ONLY_B = "eqa-23"  # judged on B only

# B's known shifts against A (A's scores: the stand-in judge's, see roots.py).
SHIFTS: dict[str, dict[str, int | str]] = {
    "eqa-01": {"factualAccuracy": 2, "citationAccuracy": 2},
    "eqa-02": {"factualAccuracy": 1, "citationAccuracy": 2},
    "eqa-03": {"factualAccuracy": 1, "citationAccuracy": 4, "completeness": "Unknown"},
    "eqa-04": {"factualAccuracy": 0, "citationAccuracy": 2},  # factual: a tie
    "eqa-05": {"citationAccuracy": 2},
    "eqa-06": {"factualAccuracy": 2, "citationAccuracy": 5, "sourceQuality": 0},  # a drop
    "eqa-07": {"citationAccuracy": 5, "sourceQuality": 1},
    "eqa-08": {"citationAccuracy": 1},
    "eqa-10": {"factualAccuracy": 1, "citationAccuracy": 3},
    "eqa-12": {"citationAccuracy": 1, "completeness": 3},
    "eqa-14": {"citationAccuracy": 3, "completeness": 1},
}
# Claim verdicts changed on B (index in citations.json's order -> verdict).
VERDICT_SHIFTS: dict[str, dict[int, str]] = {
    "eqa-01": {0: "supported", 1: "supported"},
    "eqa-05": {0: "error"},
    "eqa-09": {0: "uncertain"},
}


def judged_root(root: Path, names: list[str] | None = None) -> Path:
    """The labelled sessions (or only `names`) copied to `root` and judged from replays."""
    root.mkdir(parents=True)
    for folder in sorted((LABELLED / "sessions").iterdir()):
        if names is None or folder.name in names:
            shutil.copytree(folder, root / folder.name)
    result = CliRunner().invoke(
        cli, ["batch", str(root), "--replay-dir", str(LABELLED / "replays"), "-q"]
    )
    assert result.exit_code == 0, result.output
    return root


def sha(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def _run(folder: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((folder / ".judge" / "run.json").read_text("utf-8"))
    doc.pop("origin", None)
    return doc


def _seal_run(folder: Path, doc: dict[str, Any]) -> None:
    (folder / ".judge" / "run.json").write_bytes(sealed_artifact("run", doc))


def set_scores(folder: Path, **scores: int | str) -> None:
    """Rewrite judge.json with these scores; the run record vouches for the new file."""
    path = folder / "judge.json"
    judge = json.loads(path.read_text("utf-8"))
    judge["scores"].update(scores)
    judge["unknowns"] = [d for d in DIMENSIONS if judge["scores"][d] == UNKNOWN]
    path.write_text(json.dumps(judge, indent=2), encoding="utf-8")
    doc = _run(folder)
    doc["artifacts"]["judge"]["sha256"] = sha(path)
    doc["upToDate"]["judgeSha256"] = sha(path)
    doc["judge"] = judge
    _seal_run(folder, doc)


def set_verdicts(folder: Path, verdicts: dict[int, str]) -> None:
    """Give claim i (in citations.json's order) the verdict; resealed as the run's set."""
    path = folder / ".judge" / "citations.json"
    report = json.loads(path.read_text("utf-8"))
    report.pop("origin", None)
    for index, verdict in verdicts.items():
        report["claims"][index]["verdict"] = verdict
    counts = dict.fromkeys(("supported", "uncertain", "unsupported", "error", "unchecked"), 0)
    for claim in report["claims"]:
        counts[claim["verdict"]] += 1
    report["totals"]["verdicts"] = counts
    path.write_bytes(sealed_artifact("citations", report))
    doc = _run(folder)
    doc["artifacts"]["citations"]["sha256"] = sha(path)
    _seal_run(folder, doc)


def edit_run(folder: Path, **fields: Any) -> None:
    """Change run.json's top-level fields (e.g. `model`) and reseal it."""
    doc = _run(folder)
    doc.update(fields)
    _seal_run(folder, doc)


def scores(root: Path) -> dict[str, dict[str, int | str]]:
    """Each session's judge.json scores, read plainly (the tests' own reading)."""
    return {
        f.name: json.loads((f / "judge.json").read_text("utf-8"))["scores"]
        for f in sorted(root.iterdir())
        if (f / "judge.json").is_file()
    }


def verdicts(root: Path) -> dict[str, list[str]]:
    out = {}
    for f in sorted(root.iterdir()):
        path = f / ".judge" / "citations.json"
        if path.is_file():
            out[f.name] = [c["verdict"] for c in json.loads(path.read_text("utf-8"))["claims"]]
    return out
