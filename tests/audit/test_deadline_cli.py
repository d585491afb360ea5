"""A hostile claim against a huge source, through the real `judge run` (issue 22 §2).

A 4,000-word claim citing 8 MiB of tiny paragraphs, and stating a number nothing carries
(so the number check reads the whole source's forms). The judge and the audit are the
loopback API (tests/support/apiserver.py). Two runs: the audit's clock driven past the deadline
inside the big source's ranking (deterministic: exactly which cut is asserted), and a
tiny --max-seconds on the real clock (what it cuts depends on the machine; that a cut is
said, and that the outcome is valid, does not). No wall-clock assertion.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from harness import clock
from harness.cli.main import cli
from harness.contract.judgment import check_judge_file
from tests.support.apiserver import FakeAPI, Reply, Routed, cite_answer, is_audit, judge_responder
from tests.support.sessions import write_small_session

REPO = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((REPO / "schemas" / "citations.schema.json").read_text())
KEY = "sk-ant-deadline-cli-" + "0d" * 8
BIG = "sq1-big"


def words(n: int) -> list[str]:
    letters = "abcdefghijklmnop"
    return [
        letters[i % 16] + letters[i // 16 % 16] + letters[i // 256 % 16] + "x" for i in range(n)
    ]


WORDS = words(4000)


def hostile_session(folder: Path, crowd: int = 0) -> Path:
    """The small session, and claim sq1-big against s9: 8 MiB of two-word paragraphs; and
    `crowd` more claims of 300 words citing s9."""
    write_small_session(folder)
    paragraphs: list[str] = []
    size, i = 0, 0
    while size < 8 * 1024 * 1024 - 64:
        paragraph = f"{WORDS[i % 4000]} {WORDS[i * 7 % 4000]}."
        paragraphs.append(paragraph)
        size += len(paragraph) + 1
        i += 1
    (folder / "sources" / "s9.txt").write_text("\n".join(paragraphs)[: 8 * 1024 * 1024 - 64])
    sources = json.loads((folder / "sources.json").read_text())
    sources["sources"].append({"id": "s9", "url": "https://example.org/s9"})
    (folder / "sources.json").write_text(json.dumps(sources))
    finding_path = folder / "findings" / "sq1.json"
    finding = json.loads(finding_path.read_text())
    finding["claims"].append(
        {
            "id": BIG,
            "text": " ".join(WORDS) + " in 987654321 cases.",
            "sourceIds": ["s9"],
            "quotes": [{"sourceId": "s9", "text": paragraphs[0]}],
        }
    )
    for k in range(crowd):
        finding["claims"].append(
            {
                "id": f"sq1-crowd{k}",
                "text": " ".join(WORDS[(k * 13 + j * 7) % 4000] for j in range(300)) + f" {k}.",
                "sourceIds": ["s9"],
                "quotes": [{"sourceId": "s9", "text": paragraphs[k + 1]}],
            }
        )
    finding_path.write_text(json.dumps(finding))
    return folder


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAPI]:
    with FakeAPI([], default=Routed(is_audit, Reply(cite_answer), Reply(judge_responder))) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
        yield api


def judge(folder: Path, *options: str) -> Any:
    args = ["run", str(folder), "--fetch", "off", "--timeout", "30", "-q", *options]
    return CliRunner().invoke(cli, args)


def citations(folder: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((folder / ".judge" / "citations.json").read_text())
    Draft202012Validator(SCHEMA).validate(report)
    return report


def test_a_ranking_past_the_deadline_ends_the_claim_as_time_limit(
    tmp_path: Path, server: FakeAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The audit's clock passes the deadline after 100 readings: s1's ranking takes a few,
    s9's (8 MiB) hundreds. On main: s9 ranked whatever the time, sq1-big judged supported."""
    folder = hostile_session(tmp_path / "sess")
    reads = [0]

    def late_clock() -> float:
        reads[0] += 1
        return time.monotonic() + (10.0**9 if reads[0] > 100 else 0.0)

    monkeypatch.setattr(clock, "_now", late_clock)
    result = judge(folder, "--max-seconds", "300")
    assert result.exit_code == 0, result.output
    receipt = json.loads(result.stdout.strip().splitlines()[-1])
    assert receipt["wroteJudge"] is True
    assert check_judge_file(folder / "judge.json").valid
    report = citations(folder)
    claims = {c["claimId"]: c for c in report["claims"]}
    assert claims["sq1-c1"]["verdict"] == "supported"  # ranked in time, judged
    big = claims[BIG]
    assert big["verdict"] == "error" and big["requests"] == 0
    assert big["error"]["kind"] == "time_limit"
    assert "while its passages were being ranked" in big["error"]["message"]
    cuts = "\n".join(report["cuts"])
    assert "the citation audit's time limit was reached while ranking s9's passages" in cuts
    asked = [r.body for r in server.requests if is_audit(r.body)]
    assert asked and not any(BIG in json.dumps(body) for body in asked)  # never sent


def test_a_tiny_max_seconds_cuts_the_audit_and_says_so(tmp_path: Path, server: FakeAPI) -> None:
    """And 1,500 claims of 300 words citing s9: ranking them all takes seconds on any
    machine (about 4 ms a claim, when idle), past the audit's share of a 2 s run. On main
    the ranking went on to the end and nothing in citations.json said the deadline."""
    folder = hostile_session(tmp_path / "sess", crowd=1500)
    result = judge(folder, "--max-seconds", "2")
    assert "Traceback" not in result.output and "internal error" not in result.output
    receipt = json.loads(result.stdout.strip().splitlines()[-1])
    assert receipt["wroteJudge"] is True, receipt
    assert check_judge_file(folder / "judge.json").valid
    report = citations(folder)
    assert report.get("cuts"), report.get("cuts")
    assert any("time limit" in cut for cut in report["cuts"]), report["cuts"]
    big = {c["claimId"]: c for c in report["claims"]}[BIG]
    assert big["verdict"] != "supported"
    said = [p["detail"] for p in big["problems"] if p["check"] == "source_unreadable"]
    error = big.get("error") or {}
    assert said or error.get("kind") == "time_limit", big
