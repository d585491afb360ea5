"""`judge run` over every fixture with its recorded replies, through the real SDK."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from harness.cli.main import cli
from harness.contract.judgment import check_judge_file
from tests.support.paths import FIXTURES
from tests.support.sessions import snapshot

REPLAYS = FIXTURES / "replays"
MODEL_FIXTURES = sorted(p.stem for p in REPLAYS.glob("*.jsonl") if not p.stem.endswith(".cite"))
CITATIONS_SCHEMA = json.loads(
    (FIXTURES.parent / "schemas" / "citations.schema.json").read_text(encoding="utf-8")
)
RUN_SCHEMA = json.loads((FIXTURES.parent / "schemas" / "run.schema.json").read_text("utf-8"))
NO_MODEL_FIXTURES = ["empty-findings", "no-findings-dir"]


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env={"ANTHROPIC_API_KEY": ""})
    return result.exit_code, result.stdout, result.stderr


def test_every_judged_fixture_has_a_replay() -> None:
    index = json.loads((FIXTURES / "index.json").read_text())
    assert set(MODEL_FIXTURES) == set(index) - set(NO_MODEL_FIXTURES)
    cited = sorted(p.name.removesuffix(".cite.jsonl") for p in REPLAYS.glob("*.cite.jsonl"))
    assert cited == MODEL_FIXTURES  # and a cite replay for each (scripts/make_cite_replays.py)


@pytest.mark.parametrize("name", MODEL_FIXTURES)
def test_replayed_run_writes_valid_judge(name: str, fixture_copy, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = fixture_copy(name)
    before = snapshot(folder)
    transcript = tmp_path / "transcript.jsonl"
    code, out, err = invoke(
        "run",
        str(folder),
        "--replay",
        str(REPLAYS / f"{name}.jsonl"),
        "--cite-replay",
        str(REPLAYS / f"{name}.cite.jsonl"),
        "--fetch",
        "stored",
        "--transcript",
        str(transcript),
    )
    assert code == 0, err
    receipt = json.loads(out)
    assert set(receipt) == {"wroteJudge", "upToDate", "note"}
    assert receipt["wroteJudge"] is True
    check = check_judge_file(folder / "judge.json")
    assert check.valid, check.error_lines()
    assert snapshot(folder) == before  # the session's own files are untouched
    record = json.loads((folder / ".judge" / "run.json").read_text())
    Draft202012Validator(RUN_SCHEMA).validate(record)  # run.json is its exported schema's
    assert record["version"] == "run-v2"
    assert record["outcome"]["kind"] in ("model-written", "repaired")
    assert all(call["ok"] for call in record["toolCalls"] if call["name"] != "Write")
    assert "WebFetch" in {c["name"] for c in record["toolCalls"]} or name == "no-sources-json"
    # The citation audit ran from its replay, was saved, and the judge was told about it.
    citations = json.loads((folder / ".judge" / "citations.json").read_text())
    Draft202012Validator(CITATIONS_SCHEMA).validate(citations)
    assert citations["offline"] is False
    assert citations["totals"]["requests"] > 0
    assert record["citations"]["path"] == ".judge/citations.json"
    assert record["citations"]["verdicts"] == citations["totals"]["verdicts"]
    assert isinstance(record["citations"]["agreement"]["disagrees"], bool)
    first = json.loads(transcript.read_text().splitlines()[0])
    assert first["type"] == "request"
    opening = first["body"]["messages"][0]["content"][0]["text"]
    assert "citation audit" in opening and "`.judge/citations.json`" in opening
    assert f"{citations['totals']['claims']} claims: " in opening


def test_repair_fixture_fixes_the_write_from_the_errors(fixture_copy) -> None:  # type: ignore[no-untyped-def]
    folder = fixture_copy("wrong-types")
    code, _, _ = invoke(
        "run", str(folder), "--replay", str(REPLAYS / "wrong-types.jsonl"), "--fetch", "stored"
    )
    assert code == 0
    record = json.loads((folder / ".judge" / "run.json").read_text())
    assert record["outcome"]["kind"] == "repaired"
    assert record["writes"] == {"valid": 1, "refused": 1}
    assert any("/scores/factualAccuracy" in e for e in record["formatErrors"])
    # The broken reply itself is kept, raw, with its structured errors.
    (refused,) = record["refusedWrites"]
    assert '"factualAccuracy": 2.0' in refused["content"]
    assert {"/scores/factualAccuracy", "/unknowns"} <= {e["pointer"] for e in refused["errors"]}


@pytest.mark.parametrize("name", NO_MODEL_FIXTURES)
def test_no_findings_fixture_needs_no_model(name: str, fixture_copy) -> None:  # type: ignore[no-untyped-def]
    folder = fixture_copy(name)
    code, out, err = invoke("run", str(folder))  # no key, no replay: no model is needed
    assert code == 0, err
    assert json.loads(out)["wroteJudge"] is True
    judged = check_judge_file(folder / "judge.json")
    assert judged.valid and judged.judgment is not None
    assert len(judged.judgment.unknowns) == 5
    record = json.loads((folder / ".judge" / "run.json").read_text())
    Draft202012Validator(RUN_SCHEMA).validate(record)
    assert record["outcome"]["kind"] == "fallback" and record["turns"] == 0


def test_streaming_path_replays_as_server_sent_events(fixture_copy) -> None:  # type: ignore[no-untyped-def]
    folder = fixture_copy("clean")
    code, out, err = invoke(
        "run",
        str(folder),
        "--replay",
        str(REPLAYS / "clean.jsonl"),
        "--fetch",
        "stored",
        "--max-output-tokens",
        "32000",
    )
    assert code == 0, err
    assert json.loads(out)["wroteJudge"] is True
    assert check_judge_file(folder / "judge.json").valid
    record = json.loads((folder / ".judge" / "run.json").read_text())
    Draft202012Validator(RUN_SCHEMA).validate(record)
    # The replay's cite recording beside it (clean.cite.jsonl) answers the audit too.
    assert record["citations"]["path"] == ".judge/citations.json"
    assert record["citations"]["offline"] is False


def test_exhausted_replay_is_a_loud_error_not_a_fallback(
    fixture_copy,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    folder = fixture_copy("clean")
    short = tmp_path / "short.jsonl"
    # The metadata line and the first two responses.
    short.write_text("\n".join((REPLAYS / "clean.jsonl").read_text().splitlines()[:3]) + "\n")
    code, out, err = invoke("run", str(folder), "--replay", str(short), "--fetch", "stored")
    assert code == 1
    assert "call 3 has no recorded response" in err
    assert json.loads(out)["wroteJudge"] is False
    assert not (folder / "judge.json").exists()


def test_no_key_and_no_replay_is_a_configuration_error(fixture_copy) -> None:  # type: ignore[no-untyped-def]
    folder = fixture_copy("clean")
    code, out, err = invoke("run", str(folder), "--no-cite")
    assert code == 2
    assert "ANTHROPIC_API_KEY" in err
    assert json.loads(out)["wroteJudge"] is False
    assert not (folder / "judge.json").exists()


def test_missing_key_is_reported_before_the_audit_runs(fixture_copy) -> None:  # type: ignore[no-untyped-def]
    folder = fixture_copy("clean")
    code, out, err = invoke("run", str(folder))
    assert code == 2
    assert "ANTHROPIC_API_KEY" in err
    assert json.loads(out)["wroteJudge"] is False
    assert not (folder / ".judge" / "citations.json").exists()
