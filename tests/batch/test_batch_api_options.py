"""#21 §1: with every audit option, `judge batch --batch-api` plans each session's audit
with exactly the options its run uses, so the run finds ALL of its audit requests among the
batch answers and sends none to the ordinary API (which would pay twice)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness.cli import cli
from tests.support.batchapiserver import BatchAPI

KEY = "sk-ant-canary-batch-options-0001"

# Long enough for several passages per source, so --cite-passage-chars changes the requests.
PARAGRAPHS = [
    f"Paragraph {i}: aspirin (acetylsalicylic acid) is used to reduce fever, pain and "
    f"inflammation in study number {i}, which followed {100 + i} patients for a year."
    for i in range(40)
]
FETCHED = "Cached page. Aspirin reduces fever in adults, the registry of 2019 reports."


def write_session(folder: Path) -> Path:
    """Claim 1 cites s1 (a snapshot); claim 2 cites s2 (no snapshot: its text only from the
    fetched-text cache, or fetched live); claim 3 has no quote."""
    (folder / "findings").mkdir(parents=True)
    (folder / "sources").mkdir()
    claims: list[dict[str, Any]] = [
        {
            "id": "c1",
            "text": f"Aspirin reduces fever ({folder.name}).",
            "sourceIds": ["s1"],
            "quotes": [{"sourceId": "s1", "text": "aspirin (acetylsalicylic acid) is used"}],
        },
        {
            "id": "c2",
            "text": f"Aspirin reduces fever in adults ({folder.name}).",
            "sourceIds": ["s2"],
            "quotes": [{"sourceId": "s2", "text": "Aspirin reduces fever in adults"}],
        },
        {"id": "c3", "text": f"Aspirin eases pain ({folder.name}).", "sourceIds": ["s1", "s2"]},
    ]
    finding = {"id": "sq1", "subQuestion": "What does aspirin do?", "claims": claims}
    (folder / "findings" / "sq1.json").write_text(json.dumps(finding))
    sources = [
        {"id": "s1", "url": "https://example.org/aspirin"},
        {"id": "s2", "url": "https://example.org/registry"},
    ]
    (folder / "sources.json").write_text(json.dumps({"sources": sources}))
    (folder / "sources" / "s1.txt").write_text("\n\n".join(PARAGRAPHS) + "\n")
    (folder / "answer.md").write_text("Aspirin reduces fever [s1][s2].\n")
    return folder


def cache(folder: Path) -> None:
    (folder / ".judge" / "sources").mkdir(parents=True, exist_ok=True)
    (folder / ".judge" / "sources" / "s2.txt").write_text(FETCHED)


OPTIONS = {
    "auto": ["--cite-against", "auto"],
    "quotes": ["--cite-against", "quotes"],
    "sources": ["--cite-against", "sources"],
    "fetch-stored": ["--audit-fetch", "stored"],
    "fetch-live": ["--audit-fetch", "live", "--audit-max-fetches", "3"],
    "fetch-off": ["--audit-fetch", "off"],
    "passage-chars": ["--cite-passage-chars", "450"],
    "sources-live-passages": [
        *("--cite-against", "sources", "--audit-fetch", "live", "--cite-passage-chars", "900")
    ],
}


@pytest.mark.parametrize("case", sorted(OPTIONS))
def test_every_audit_option_is_answered_by_the_batches_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    root = tmp_path / "root"
    names = ["a", "b"]
    for name in names:
        write_session(root / name)
    if "live" not in case:
        for name in names:
            cache(root / name)  # the stored cache: what `stored` (and `auto`) reads for s2
    fetched: list[str] = []

    def live_fetcher(urls: dict[str, str], max_uses: int) -> Any:
        def text(url: str) -> str:
            fetched.append(url)
            return FETCHED

        return text

    # The one fetcher `--audit-fetch live` builds (harness.audit.live): no network here.
    monkeypatch.setattr("harness.audit.live.live_fetch", live_fetcher)
    with BatchAPI() as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
        args = ["batch", str(root), "--batch-api", "--batch-poll", "0.01", "--fetch", "off"]
        result = CliRunner().invoke(cli, [*args, *OPTIONS[case]])
        assert result.exit_code == 0, result.output
        cite_bodies = [b for b in api.messages if "output_config" in b]
        assert cite_bodies == []  # no audit request went to the ordinary API
        assert api.calls["messages"] == 0
        assert "0 fell back to the ordinary API" in result.stderr
        batched = sum(
            "output_config" in r["params"] for b in api.batches.values() for r in b["requests"]
        )
        total = 0
        for name in names:
            record = json.loads((root / name / ".judge" / "run.json").read_text())
            citations = record["citations"]
            assert citations["requests"] > 0
            assert citations["channels"]["ordinary"] == {"requests": 0, "tokens": 0}
            assert citations["channels"]["batch"]["requests"] == citations["requests"]
            total += citations["requests"]
            against = citations["judgedAgainst"]
            if case == "quotes":
                assert against["sources"] == 0
            elif case in ("sources", "fetch-live", "fetch-stored", "auto", "passage-chars"):
                assert against["sources"] >= 2  # c2's s2 text came from the cache or a fetch
        assert batched == total  # every request the runs asked was batched, once
    if "live" in case:
        assert sorted(set(fetched)) == ["https://example.org/registry"]
        assert len(fetched) == 2  # once per session, by the planner; the run read its cache


def test_the_summary_prices_each_channel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "root"
    for name in ("a", "b"):
        write_session(root / name)

    def fate(custom_id: str, params: dict[str, object]) -> str:
        return "expired" if custom_id in ("r1-000000", "t1-00000") else "succeeded"

    with BatchAPI(fate=fate) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
        args = ["batch", str(root), "--batch-api", "--batch-poll", "0.01", "--fetch", "off"]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        audit_ordinary = sum("output_config" in b for b in api.messages)
        judge_ordinary = len(api.messages) - audit_ordinary
        assert audit_ordinary >= 1 and judge_ordinary == 1
        records = [json.loads((root / n / ".judge" / "run.json").read_text()) for n in "ab"]
        ordinary = sum(r["citations"]["channels"]["ordinary"]["requests"] for r in records)
        batch = sum(r["citations"]["channels"]["batch"]["requests"] for r in records)
        assert ordinary == audit_ordinary
        assert batch + ordinary == sum(r["citations"]["requests"] for r in records)
        assert all(
            r["citations"]["channels"]["ordinary"]["tokens"] > 0
            for r in records
            if r["citations"]["channels"]["ordinary"]["requests"]
        )
        assert (
            f"by channel: audit {batch:,} through batches" in result.stderr
            and f"{audit_ordinary:,} through the ordinary API" in result.stderr
        )
        assert "agent turns 5 through batches" in result.stderr
        assert "1 through the ordinary API" in result.stderr
