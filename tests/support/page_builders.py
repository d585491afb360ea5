"""Judged sessions for the report tests: fixtures run with their replays, and a hostile
session that carries one payload in every place a page shows session or web content."""

from __future__ import annotations

import json
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import harness
from harness.artifacts.record import RunRecord
from tests.support.paths import FIXTURES
from tests.support.sealed import reseal

REPLAYS = FIXTURES / "replays"
MARKER = "window.__pwned=1"


def judged_fixture(name: str, into: Path) -> Path:
    """A copy of fixture `name` under `into`, judged from its recorded replies."""
    folder = into / name
    shutil.copytree(FIXTURES / name, folder, symlinks=True)
    result = harness.judge_session(
        folder,
        replay=REPLAYS / f"{name}.jsonl",
        cite_replay=REPLAYS / f"{name}.cite.jsonl",
        fetch="stored",
    )
    assert result.exit_code == 0, result.reason
    return folder


def _dump(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False), encoding="utf-8")


# Where a payload is planted; each is shown as text (never as markup) on the page.
TEXT_PLACES = (
    "question",
    "subQuestion",
    "finding id",
    "claim id",
    "claim text",
    "quote",
    "source title",
    "source url",
    "vote",
    "problem detail",
    "nearest passage",
    "passage",
    "judge note",
    "tool target",
    "tool detail",
    "final text",
    "receipt note",
)


def hostile_session(folder: Path, payload: str, url: str | None = None) -> Path:
    """A judged-looking session (judge.json, citations.json, run.json written by hand)
    with `payload` in every place of TEXT_PLACES, and `url` (default: the payload) as a
    source URL."""
    snapshot = f"Before the passage. {payload} After the passage."
    finding = {
        "id": f"sq1{payload}",
        "question": f"Q {payload}",
        "subQuestion": f"SQ {payload}",
        "claims": [
            {
                "id": f"c1{payload}",
                "text": f"Claim {payload}",
                "sourceIds": ["s1", "s2"],
                "quotes": [{"sourceId": "s1", "text": f"Quote {payload}"}],
                "verification": {"votes": [{"verifier": "v1", "verdict": f"vote {payload}"}]},
            },
            {
                "id": "c2",
                "text": "A second, plain claim.",
                "sourceIds": ["s1"],
                "quotes": [],
            },
        ],
    }
    _dump(folder / "findings" / "sq1.json", finding)
    (folder / "findings" / "sq2.json").write_text("{", encoding="utf-8")  # a session problem
    sources = {
        "sources": [
            {
                "id": "s1",
                "url": "https://example.org/a",
                "title": f"T {payload}",
                "tier": "primary",
            },
            {"id": "s2", "url": url if url is not None else payload, "title": "U", "tier": "low"},
        ]
    }
    _dump(folder / "sources.json", sources)
    (folder / "sources").mkdir(exist_ok=True)
    (folder / "sources" / "s1.txt").write_text(snapshot, encoding="utf-8")
    _dump(
        folder / "judge.json",
        {
            "scores": {
                "factualAccuracy": 4,
                "citationAccuracy": 5,
                "completeness": 3,
                "sourceQuality": 2,
                "toolEfficiency": "Unknown",
            },
            "unknowns": ["toolEfficiency"],
            "note": f"Note {payload}",
            "rubricVersion": "deep-judge-v1",
        },
    )
    start = snapshot.index(payload)
    claims = [
        {
            "claimId": f"c1{payload}",
            "findingId": f"sq1{payload}",
            "file": "findings/sq1.json",
            "pointer": "/claims/0",
            "verdict": "uncertain",
            "problems": [
                {
                    "check": "quote_not_in_source",
                    "detail": f"Detail {payload}",
                    "quote": 0,
                    "sourceIds": ["s1"],
                    "similarity": 42.0,
                    "nearest": f"Nearest {payload}",
                }
            ],
            "quotes": [{"index": 0, "sourceId": "s1", "passage": "p1", "verdict": "review"}],
            "requests": 2,
            "passages": [
                {
                    "sourceId": "s1",
                    "passageId": "p1",
                    "start": start,
                    "end": start + len(payload),
                    "text": payload,
                    "verdict": "holds",
                }
            ],
        },
        {
            "claimId": "c2",
            "findingId": f"sq1{payload}",
            "file": "findings/sq1.json",
            "pointer": "/claims/1",
            "verdict": "unsupported",
            "problems": [{"check": "no_quote", "detail": "the claim has no quote"}],
            "quotes": [],
            "requests": 0,
        },
    ]
    citations = {
        "version": "citations-v3",
        "sessionId": folder.name,
        "offline": False,
        "model": "claude-haiku-5-5",
        "concurrency": 8,
        "claims": claims,
        "totals": {
            "claims": 2,
            "quotes": 1,
            "requests": 2,
            "verdicts": {
                "supported": 0,
                "uncertain": 1,
                "unsupported": 1,
                "error": 0,
                "unchecked": 0,
            },
            "checks": {
                "dangling_source": 0,
                "quote_not_in_source": 1,
                "number_mismatch": 0,
                "no_quote": 1,
                "quote_source_not_cited": 0,
            },
            "hints": {
                "dangling_source": 0,
                "quote_not_in_source": 0,
                "number_mismatch": 0,
                "no_quote": 0,
                "quote_source_not_cited": 0,
            },
        },
        "usage": {"input_tokens": 10, "output_tokens": 2},
        "models": ["claude-haiku-5-5"],
    }
    _dump(folder / ".judge" / "citations.json", citations)
    run = {
        "rubricVersion": "deep-judge-v1",
        "sessionId": folder.name,
        "sessionDir": str(folder),
        "sessionDigest": "sha256:" + "0" * 64,
        "brief": {"path": "briefs/judge-deep.md", "digest": "sha256:" + "1" * 64},
        "options": {"fetch": "stored"},
        "sessionSummary": {
            "findings": 1,
            "claims": 2,
            "quotes": 1,
            "sources": 1,
            "sourcesJson": True,
            "snapshots": 0,
            "answer": False,
            "trace": False,
            "traceCalls": 0,
            "problems": 0,
        },
        "previousJudge": {"present": False, "valid": False},
        "model": "claude-sonnet-5-5",
        "models": ["claude-sonnet-5-5"],
        "started": "2026-12-01T10:00:00+00:00",
        "ended": "2026-12-01T10:00:03+00:00",
        "seconds": 3.2,
        "turns": 3,
        "stopReasons": ["tool_use", "tool_use", "end_turn"],
        "usage": {
            "input_tokens": 100,
            "output_tokens": 20,
            "cache_creation_input_tokens": 900,
            "cache_read_input_tokens": 1800,
        },
        "toolCalls": [
            {"name": "Read", "ok": True, "detail": "", "target": f"findings/{payload}"},
            {"name": "WebFetch", "ok": False, "detail": f"refused: {payload}", "target": "x"},
        ],
        "finalText": f"Final {payload}",
        "outcome": {
            "kind": "model-written",
            "reason": "the model wrote a valid judge.json",
            "wroteJudge": True,
        },
        "receipt": {"wroteJudge": True, "note": f"Receipt {payload}"},
        "citations": {
            "seconds": 0.1,
            "agreement": {
                "judge": 5,
                "expected": 2,
                "rate": 0.4,
                "basis": "support",
                "disagrees": True,
                "why": "judge 5 vs 2 expected from a support rate of 40%",
            },
        },
    }
    _dump(folder / ".judge" / "run.json", RunRecord.model_validate(run).model_dump(mode="json"))
    reseal(folder)  # as this installation's run would have written them: one run's set
    return folder


class Structure(HTMLParser):
    """Every tag, attribute and text run of a page, as a browser's tokenizer sees them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.comments: list[str] = []
        self._raw: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)

    def handle_decl(self, decl: str) -> None:
        self.comments.append(decl)

    def unknown_decl(self, data: str) -> None:
        self.comments.append(data)


def parse(html: str) -> Structure:
    parser = Structure()
    parser.feed(html)
    parser.close()
    return parser
