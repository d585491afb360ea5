"""The audit inside `judge run`: saved, told to the judge, never blocking, compared after."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from harness.audit import CitationReport, compare, expectation
from harness.cite import Reply, ScriptedClient
from harness.cli.main import cli
from harness.errors import ModelUnavailable, ReplayError
from harness.run import judge_session
from tests.support.audit_builders import quoted, write_session
from tests.support.fakes import (
    GOOD_JUDGE,
    ScriptedModel,
    message,
    text,
    tool_results,
    tool_use,
    write_judge,
)
from tests.support.paths import FIXTURES
from tests.support.sessions import snapshot

SCHEMA = json.loads((FIXTURES.parent / "schemas" / "citations.schema.json").read_text())
RECEIPT = 'Done. {"wroteJudge": true, "note": "scored"}'
Q1 = "Aspirin is used to reduce fever and pain."


def supports(value: float) -> ScriptedClient:
    return ScriptedClient(lambda request: dict.fromkeys(request["questions"], value))


def judge_steps(*first: dict[str, Any], document: dict[str, Any] | None = None) -> ScriptedModel:
    return ScriptedModel([*first, message(write_judge(document)), message(text(RECEIPT))])


def first_text(model: ScriptedModel) -> str:
    content = model.requests[0]["messages"][0]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    claims = [quoted("sq1-c1", Q1), quoted("sq1-c2", Q1, text="Aspirin cures 90% of colds.")]
    claims.append(quoted("sq1-c3"))
    return write_session(tmp_path / "sess", claims)


def run(folder: Path, model: ScriptedModel, **options: Any):  # type: ignore[no-untyped-def]
    return judge_session(folder, client=model, fetch="stored", **options)


def test_report_is_saved_summarised_for_the_judge_and_compared(folder: Path) -> None:
    before = snapshot(folder)
    model = judge_steps()
    result = run(folder, model, cite_client=supports(0.9))
    assert result.outcome == "model-written"
    assert snapshot(folder) == before  # only judge.json and .judge/ change

    saved = json.loads((folder / ".judge" / "citations.json").read_text())
    Draft202012Validator(SCHEMA).validate(saved)
    # auto: every claim's source has text, so each is judged against its passages, the
    # claim without a quote too.
    assert [c["verdict"] for c in saved["claims"]] == ["supported"] * 3
    assert {c["against"] for c in saved["claims"]} == {"sources"}

    opening = first_text(model)
    assert "citation audit" in opening and "`.judge/citations.json`" in opening
    assert "3 claims: 3 supported, 0 uncertain, 0 unsupported, 0 error" in opening
    assert "number_mismatch 1" in opening and "no_quote 1" in opening
    worst = opening.split("Claims to look at first:")[1]
    assert worst.index("sq1-c3") < worst.index("sq1-c2")  # a serious problem first
    assert "untrusted data" in worst  # ids and details come from the session

    assert result.record is not None and result.record.citations is not None
    cites = result.record.citations.model_dump(mode="json", exclude_none=True)
    assert cites["path"] == ".judge/citations.json" and cites["offline"] is False
    assert cites["verdicts"]["supported"] == 3 and cites["checks"]["no_quote"] == 1
    # All three were judged against their source's text and held: sq1-c3's missing quote
    # does not zero it (the source was read), sq1-c2's number hint is not serious: 3/3.
    assert cites["expected"] == {
        "basis": "support",
        "assessed": 3,
        "rate": 1.0,
        "expected": 5,
        "grounded": 3,
    }
    assert cites["agreement"]["judge"] == GOOD_JUDGE["scores"]["citationAccuracy"] == 4
    assert cites["agreement"]["disagrees"] is False
    on_disk = json.loads((folder / ".judge" / "run.json").read_text())
    assert {k: v for k, v in on_disk["citations"].items() if v is not None} == cites


def test_the_judge_can_read_the_report(folder: Path) -> None:
    model = judge_steps(message(tool_use("Read", {"file_path": ".judge/citations.json"})))
    run(folder, model, cite_client=supports(0.9))
    (read,) = tool_results(model.requests[1])
    assert "is_error" not in read
    assert '"claimId": "sq1-c1"' in read["content"]


def test_disagreement_is_recorded(folder: Path) -> None:
    harsh = {**GOOD_JUDGE, "scores": {**GOOD_JUDGE["scores"], "citationAccuracy": 0}}
    result = run(folder, judge_steps(document=harsh), cite_client=supports(0.9))
    assert result.record is not None and result.record.citations is not None
    agreement = result.record.citations.agreement
    assert agreement is not None
    assert agreement.disagrees is True and "judge 0 vs 5 expected" in agreement.why


def test_no_cite_skips_the_audit(folder: Path) -> None:
    model = judge_steps()
    result = run(folder, model, cite=False, cite_client=supports(0.9))
    assert not (folder / ".judge" / "citations.json").exists()
    assert result.record is not None and result.record.citations is not None
    assert result.record.citations.model_dump(exclude_defaults=True) == {"skipped": "--no-cite"}
    assert "citation audit" not in first_text(model)


def test_a_supplied_judge_client_without_a_cite_client_runs_offline(folder: Path) -> None:
    model = judge_steps()
    result = run(folder, model)
    assert result.record is not None and result.record.citations is not None
    cites = result.record.citations.model_dump(mode="json")
    assert cites["offline"] is True and "caller supplied" in cites["offlineReason"]
    assert "Only the deterministic checks ran" in first_text(model)
    assert cites["expected"]["basis"].startswith("checks only")


@pytest.mark.parametrize(
    ("fault", "words"),
    [
        (RuntimeError("401 invalid x-api-key"), "RuntimeError: 401 invalid x-api-key"),
        (ModelUnavailable("overloaded"), "unavailable for every claim"),
    ],
)
def test_an_audit_failure_does_not_block_the_run(
    folder: Path, fault: Exception, words: str
) -> None:
    def broken(request: dict[str, Any]) -> Reply:
        raise fault

    model = judge_steps()
    result = run(folder, model, cite_client=ScriptedClient(broken))
    assert result.outcome == "model-written"
    assert result.record is not None and result.record.citations is not None
    cites = result.record.citations.model_dump(mode="json")
    assert cites["offline"] is True and words in cites["offlineReason"]
    assert cites["failure"] and words in cites["failure"]
    saved = json.loads((folder / ".judge" / "citations.json").read_text())
    assert saved["offline"] is True and saved["offlineReason"] == cites["offlineReason"]


def test_a_replay_error_stays_loud(folder: Path) -> None:
    def dry(request: dict[str, Any]) -> Reply:
        raise ReplayError("replay has no recording for state …")

    model = judge_steps()
    with pytest.raises(ReplayError):
        run(folder, model, cite_client=ScriptedClient(dry))
    assert model.requests == []  # the judge never started
    assert not (folder / "judge.json").exists()


@pytest.mark.parametrize("replay_any", [False, True])
def test_cli_stale_cite_replay_is_exit_1(fixture_copy, replay_any: bool) -> None:  # type: ignore[no-untyped-def]
    folder = fixture_copy("quote-not-in-source")
    replays = FIXTURES / "replays"
    result = CliRunner().invoke(
        cli,
        [
            "run",
            str(folder),
            "--replay",
            str(replays / "quote-not-in-source.jsonl"),
            "--cite-replay",
            str(replays / "clean.cite.jsonl"),  # another session's answers
            "--fetch",
            "stored",
            *(["--replay-any"] if replay_any else []),
        ],
        env={"ANTHROPIC_API_KEY": ""},
    )
    assert result.exit_code == 1
    assert json.loads(result.stdout)["wroteJudge"] is False
    if replay_any:  # the metadata is not checked: the answers are keyed by passage ids
        assert "replay has no recording" in result.stderr
    else:
        assert "clean.cite.jsonl was recorded for another session" in result.stderr


def test_cli_judge_replay_alone_audits_offline_and_says_so(fixture_copy, tmp_path) -> None:  # type: ignore[no-untyped-def]
    folder = fixture_copy("quote-not-in-source")
    replay = tmp_path / "alone.jsonl"  # no alone.cite.jsonl beside it
    replay.write_bytes((FIXTURES / "replays" / "quote-not-in-source.jsonl").read_bytes())
    result = CliRunner().invoke(
        cli, ["run", str(folder), "--replay", str(replay), "--fetch", "stored"], env={}
    )
    assert result.exit_code == 0, result.stderr
    record = json.loads((folder / ".judge" / "run.json").read_text())
    assert record["citations"]["offline"] is True
    assert "--cite-replay" in record["citations"]["offlineReason"]
    assert "alone.cite.jsonl" in record["citations"]["offlineReason"]
    assert "citations: 10 claims (offline)" in result.stderr
    assert "quote_not_in_source 3" in result.stderr
    # Nobody asked for offline: the summary says why it was (#33).
    assert "citations: offline because " in result.stderr
    assert "alone.cite.jsonl" in " ".join(result.stderr.split())


def test_cli_judge_replay_replays_the_audit_recorded_beside_it(fixture_copy) -> None:  # type: ignore[no-untyped-def]
    folder = fixture_copy("quote-not-in-source")
    replay = FIXTURES / "replays" / "quote-not-in-source.jsonl"  # .cite.jsonl beside it
    result = CliRunner().invoke(cli, ["run", str(folder), "--replay", str(replay)], env={})
    assert result.exit_code == 0, result.stderr
    record = json.loads((folder / ".judge" / "run.json").read_text())
    assert record["citations"]["offline"] is False and record["citations"]["requests"] > 0
    assert record["options"]["fetch"] == "stored"  # a replay never fetches live by default


def test_cli_no_key_audits_offline_then_the_judge_needs_the_key(fixture_copy) -> None:  # type: ignore[no-untyped-def]
    folder = fixture_copy("clean")
    result = CliRunner().invoke(cli, ["run", str(folder)], env={"ANTHROPIC_API_KEY": ""})
    assert result.exit_code == 2  # the judge's own configuration error, as before
    assert "ANTHROPIC_API_KEY" in result.stderr


# -- the agreement rule ---------------------------------------------------------------


def report(verdicts: list[str], serious: int = 0, offline: bool = False) -> CitationReport:
    claims = [
        {
            "claimId": f"c{i}",
            "findingId": "sq1",
            "file": "findings/sq1.json",
            "pointer": f"/claims/{i}",
            "verdict": v,
            "problems": [{"check": "dangling_source", "detail": "x"}] if i < serious else [],
            "quotes": [],
        }
        for i, v in enumerate(verdicts)
    ]
    totals = {"claims": len(claims), "quotes": 0, "requests": 0, "verdicts": {}, "checks": {}}
    return CitationReport.model_validate(
        {
            "sessionId": "s",
            "offline": offline,
            "concurrency": 1,
            "claims": claims,
            "totals": totals,
            "usage": {},
            "models": [],
        }
    )


S, U, N, E, C = "supported", "uncertain", "unsupported", "error", "unchecked"


@pytest.mark.parametrize(
    ("verdicts", "serious", "offline", "score", "expected", "disagrees"),
    [
        ([S] * 10, 0, False, 5, 5, False),
        ([S] * 10, 0, False, 3, 5, True),  # 2 below
        ([S] * 10, 0, False, 4, 5, False),
        ([S] * 5 + [N] * 5, 0, False, 2, 3, False),  # 2.5 rounds half up to 3
        ([S] * 5 + [N] * 5, 0, False, 5, 3, True),
        ([U] * 4, 0, False, 3, 3, False),  # 0.5 each: 2.5 -> 3
        ([S] * 4, 2, False, 1, 3, True),  # serious problems earn nothing: 2/4 -> 3
        ([S, E, E], 0, False, 5, 5, False),  # errors are left out
        ([C] * 4, 0, True, 1, 5, False),  # offline: scoring below the bound is consistent
        ([C] * 4, 4, True, 2, 0, True),  # offline: 2 above the bound
        ([S], 0, False, "Unknown", 5, True),  # Unknown while the audit had data
        ([E], 0, False, "Unknown", None, False),  # no assessed claim: no expectation
        ([], 0, False, 3, None, False),
        ([S], 0, False, None, 5, False),  # no model judgment (fallback)
    ],
)
def test_agreement_rule(
    verdicts: list[str],
    serious: int,
    offline: bool,
    score: int | str | None,
    expected: int | None,
    disagrees: bool,
) -> None:
    want = expectation(report(verdicts, serious, offline))
    assert (want.expected if want else None) == expected
    out = compare(want, score)
    assert out.disagrees is disagrees
    assert out.judge == score and out.why


def test_live_cite_client_is_closed_and_bounded_by_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from harness.model.resolve import resolve_cite

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-used")
    handle = resolve_cite(max_seconds=5.0)
    sdk = handle.client._client  # type: ignore[attr-defined]
    assert not sdk.is_closed()
    handle.finish()
    assert sdk.is_closed()
