"""`judge run --samples K`: K independent judgments kept under .judge/samples/, the one
nearest their median in judge.json, and `judge agree --self` reading only what run.json
vouches for."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import harness
from harness.cli.main import cli
from harness.run.samples import choose, distance, medians
from tests.support.fakes import GOOD_JUDGE, ScriptedModel, message, text, write_judge
from tests.support.sessions import write_small_session

U = "Unknown"
DIMS = ("factualAccuracy", "citationAccuracy", "completeness", "sourceQuality", "toolEfficiency")


def _scores(*values: int | str) -> dict[str, int | str]:
    return dict(zip(DIMS, values, strict=True))


@pytest.mark.parametrize(
    ("samples", "chosen"),
    [
        ([_scores(1, 1, 1, 1, 1), _scores(3, 3, 3, 3, 3), _scores(5, 5, 5, 5, 5)], 1),
        ([_scores(4, 4, 4, 4, 4), _scores(4, 4, 4, 4, 4)], 0),  # equal: the earliest
        ([_scores(2, 2, 2, 2, U), _scores(2, 2, 2, 2, 4), _scores(2, 2, 2, 2, U)], 0),
        ([_scores(0, 5, 0, 5, 0), _scores(5, 0, 5, 0, 5), _scores(3, 3, 3, 3, 3)], 2),
    ],
)
def test_the_rule_picks_the_sample_nearest_the_median(
    samples: list[dict[str, int | str]], chosen: int
) -> None:
    assert choose(samples) == chosen


def test_median_and_distance_by_hand() -> None:
    centre = medians([_scores(1, 2, U, 4, U), _scores(3, 2, U, 5, 1), _scores(5, 2, 3, 3, U)])
    # citation all 2; completeness one number of three: Unknown; tools one of three: Unknown
    assert centre == {
        "factualAccuracy": 3,
        "citationAccuracy": 2,
        "completeness": U,
        "sourceQuality": 4,
        "toolEfficiency": U,
    }
    assert distance(_scores(1, 2, U, 4, U), centre) == 2
    assert distance(_scores(3, 2, 3, 5, 1), centre) == 0 + 0 + 5 + 1 + 5
    with pytest.raises(ValueError):
        choose([])


def _judgment(cite: int) -> dict[str, Any]:
    doc = json.loads(json.dumps(GOOD_JUDGE))
    doc["scores"]["citationAccuracy"] = cite
    doc["note"] = f"sample with citationAccuracy {cite}"
    return doc


def _model(cites: list[int]) -> ScriptedModel:
    steps: list[Any] = []
    for cite in cites:
        steps += [message(write_judge(_judgment(cite))), message(text("judge.json is written."))]
    return ScriptedModel(steps)


@pytest.fixture
def session(tmp_path: Path) -> Path:
    return write_small_session(tmp_path / "s1")


def test_three_samples_kept_and_the_median_one_in_place(session: Path) -> None:
    model = _model([1, 5, 3])
    result = harness.judge_session(session, client=model, samples=3, cite=False)
    assert result.exit_code == 0 and result.outcome == "model-written"
    judge = json.loads((session / "judge.json").read_text(encoding="utf-8"))
    assert judge["scores"]["citationAccuracy"] == 3  # sample 3, nearest the median
    kept = sorted(p.name for p in (session / ".judge" / "samples").iterdir())
    assert kept == ["1.json", "2.json", "3.json"]
    record = json.loads((session / ".judge" / "run.json").read_text(encoding="utf-8"))
    samples = record["samples"]
    assert samples["asked"] == 3 and samples["chosen"] == 3 and samples["cut"] is None
    assert [s["scores"]["citationAccuracy"] for s in samples["made"]] == [1, 5, 3]
    assert record["turns"] == 6  # every sample's turns are counted
    assert "sample 3 of 3 made" in result.receipt.note
    assert len(model.requests) == 6


def test_agree_self_reads_only_what_run_json_vouches_for(session: Path, tmp_path: Path) -> None:
    harness.judge_session(session, client=_model([2, 2, 4]), samples=3, cite=False)
    (session / ".judge" / "samples" / "9.json").write_text(
        json.dumps(_judgment(0)), encoding="utf-8"
    )  # planted: not listed in run.json
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        json.dumps({"kind": "rating", "session": "s1", "rater": "a", "scores": {"completeness": 3}})
        + "\n",
        encoding="utf-8",
    )
    run = CliRunner().invoke(
        cli, ["agree", str(labels), "--root", str(tmp_path), "--self", "--json"]
    )
    assert run.exit_code == 0, run.output
    report = json.loads(run.stdout)["self"]
    assert report["samples"] == 3
    cite = next(d for d in report["dimensions"] if d["dimension"] == "citationAccuracy")
    assert cite["maxRange"] == 2
    assert report["unsettled"] == [{"session": "s1", "dimensions": {"citationAccuracy": [2, 2, 4]}}]
    # A sample changed after the run is not read as one.
    (session / ".judge" / "samples" / "1.json").write_text(
        json.dumps(_judgment(5)), encoding="utf-8"
    )
    again = CliRunner().invoke(
        cli, ["agree", str(labels), "--root", str(tmp_path), "--self", "--json"]
    )
    report = json.loads(again.stdout)["self"]
    assert report["samples"] == 2
    assert any("not the sample run.json vouches for" in u for u in report["unreadable"])


def test_a_failed_sample_is_said_and_the_rest_kept(session: Path) -> None:
    steps: list[Any] = [
        message(write_judge(_judgment(4))),
        message(text("done")),
        message(text("I will not write anything this time.")),
        message(text("Still nothing.")),
        message(text("No.")),
        message(text("No.")),
    ]
    result = harness.judge_session(
        session, client=ScriptedModel(steps, repeat_last=True), samples=2, cite=False, max_turns=3
    )
    assert result.exit_code == 0 and result.outcome == "model-written"
    record = json.loads((session / ".judge" / "run.json").read_text(encoding="utf-8"))
    assert len(record["samples"]["made"]) == 1
    assert record["samples"]["cut"].startswith("sample 2 ended without a valid judgment")


def test_samples_is_a_bounded_option() -> None:
    runner = CliRunner()
    for bad in ("0", "21"):
        result = runner.invoke(cli, ["run", "nowhere", "--samples", bad])
        assert result.exit_code == 2
        assert "--samples" in result.output


def test_an_io_error_writing_the_samples_keeps_every_paid_turn_in_the_record(
    session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 31 §5: EIO while writing a sample left run.json saying `turns: 0`, `usage: null`
    and `not-written` for paid turns, while the receipt said wroteJudge true."""
    import errno
    import os

    from harness.fs import artifacts as artifacts_module

    def failing(self: object, folder: str, files: dict[str, bytes]) -> list[str]:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(artifacts_module.ArtifactDir, "write_samples", failing)
    model = _model([1, 5, 3])
    result = harness.judge_session(session, client=model, samples=3, cite=False)
    assert result.exit_code == 0 and result.outcome == "model-written"
    assert result.receipt.wroteJudge is True
    assert "samples could not be kept" in result.receipt.note and "I/O error" in result.receipt.note
    judge = json.loads((session / "judge.json").read_text(encoding="utf-8"))
    assert judge["scores"]["citationAccuracy"] == 3  # the last sample written stays
    record = json.loads((session / ".judge" / "run.json").read_text(encoding="utf-8"))
    assert record["turns"] == 6 and record["usage"] is not None  # every paid turn counted
    assert record["outcome"]["kind"] == "model-written" and record["samples"] is None
