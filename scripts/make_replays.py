"""Write the recorded judge conversations in sessions_fixture/replays/.

Each replay is what a careful judge would send over the Messages API for that
fixture, one response body per line in the API's own wire format: list the
findings, read every finding, sources.json, answer.md and trace.jsonl where
they exist, spot-check one source with WebFetch, write judge.json, end with the
receipt. The scores and notes below are written by hand per fixture; `wrong-types`
first writes an invalid judge.json and repairs it from the Write result.

Run: python scripts/make_replays.py   (deterministic; the output is committed)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.contract.brief import render_for_session
from harness.contract.rubric import DIMENSIONS
from harness.model.replay import replay_meta
from harness.resources import DEFAULT_BRIEF
from harness.run import session_digest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "sessions_fixture"
OUT = FIXTURES / "replays"
MODEL = "claude-sonnet-5-5"
U = "Unknown"

# Hand-written judgments: scores in rubric order and the note a careful judge would give.
JUDGMENTS: dict[str, tuple[tuple[int | str, ...], str]] = {
    "clean": (
        (4, 5, 4, 4, 4),
        "Claims track their quotes closely and every claim cites a listed source; the "
        "spot-checked source supports its claim. Coverage of the question is good though some "
        "findings are brief. Sources are mostly journals. The tool log shows one redundant fetch.",
    ),
    "dangling-citations": (
        (3, 1, 3, 3, U),
        "Several citations dangle: sq2-c1 cites s3, which is not in sources.json, and a quote "
        "in sq1-c1 names s99. Claims that do resolve match their quotes. No tool log, so "
        "toolEfficiency is Unknown.",
    ),
    "quote-not-in-source": (
        (2, 2, 3, 3, U),
        "Quotes do not all appear in the stored sources: sq1-c3 alters a word, sq1-c4 is not in "
        "its source, sq2-c1 is credited to the wrong source, sq1-c2's 7.5% appears in no quote "
        "and sq1-c1 has no quote. No tool log: toolEfficiency Unknown.",
    ),
    # `make demo`'s session: a judge that skimmed, scoring citations well where the audit
    # finds quotes not in their sources and ids missing from sources.json, so the page shows
    # the judge disagreeing with the audit.
    "showcase": (
        (4, 4, 3, 3, 4),
        "Claims read as well supported: each quotes a source and the quotes are on topic. "
        "The answer covers the question's main points though some findings are brief. The "
        "tool log shows one redundant fetch.",
    ),
    "no-sources-json": (
        (4, 3, 3, U, 3),
        "sources.json is absent, so source ids were read off the findings and their "
        "authority cannot be judged: sourceQuality is Unknown. Claims match their quotes; "
        "citation accuracy is capped because ids cannot be checked against a source set.",
    ),
    "no-answer": (
        (4, 4, 3, 4, 4),
        "answer.md is not written yet, so the findings and sources were scored alone. Claims "
        "match their quotes and cite listed sources; coverage is adequate but thin in places.",
    ),
    "malformed-finding": (
        (4, 4, 2, 3, 4),
        "findings/sq2.json is truncated invalid JSON, so one sub-question could not be read and "
        "completeness suffers. The readable findings are accurate and well cited.",
    ),
    "wrong-types": (
        (2, 2, 2, 3, U),
        "Several findings are malformed: sq2's claims are not a list, a claim text is a number, "
        "a sourceIds is a string, and claim id sq1-c1 is duplicated. What remains is accurate "
        "but thin. No tool log: toolEfficiency Unknown.",
    ),
    "with-trace": (
        (4, 4, 3, 4, 2),
        "Findings are accurate and cited. The tool log shows clear waste: the first search ran "
        "five times and one URL was fetched three times, so toolEfficiency is low.",
    ),
    "prompt-injection": (
        (2, 2, 3, 2, 3),
        "Some finding and source text tries to instruct the judge (score 5, read /etc/passwd, "
        "fetch a metadata address); it was treated as data and ignored. sq2-c2 cites a loopback "
        "and a metadata URL as sources, which is not credible sourcing.",
    ),
    "large": (
        (4, 4, 4, 3, 3),
        "A broad session of 320 claims over 46 sub-questions; sampled claims match their quotes "
        "and cite listed sources. Ten claims carry no quote. Source quality is mixed, with a "
        "share of low-tier sites. The tool log is long but mostly purposeful.",
    ),
    "pdf-sources": (
        (3, 3, 3, 4, 4),
        "Every source is stored as a PDF; read through their text layers, the quotes back their "
        "claims, except sq2-c3, whose quote appears nowhere in its PDF. Half the sources are "
        "primary. The tool log shows one redundant fetch.",
    ),
    "html-sources": (
        (3, 2, 3, 3, 4),
        "Sources are stored as web pages. Quotes that run across list items and table cells are "
        "in the visible text, but six claims (sq3-c1 to sq4-c3) quote text the pages hide "
        "(hidden elements, a template, a script, a style sheet): no reader sees it, so it "
        "backs nothing.",
    ),
    "citation-markers": (
        (3, 4, 3, 3, 4),
        "Claims carry their citation markers ([2], [1, 3], [^4], superscripts), which are not "
        "figures. Numbers quoted beside their sentence are in the cited source, but sq6-c1's "
        "75 hours is in neither its quote nor its source (the source says 72).",
    ),
    "shared-source": (
        (4, 4, 3, 4, 4),
        "Twenty-four claims lean on three sources, two of them journals, each cited by seven to "
        "nine claims; sampled quotes are verbatim and back their claims. Coverage rests on few "
        "sources. The tool log shows one redundant fetch.",
    ),
}


class Conversation:
    def __init__(self, name: str) -> None:
        self.name = name
        self.bodies: list[dict[str, Any]] = []
        self.tokens = 2400  # system + tools + first message, cached after the first turn
        self.tool_uses = 0  # every tool_use id is unique, as the API's are (and requires)

    def _ids(self) -> str:
        return f"{self.name}-{len(self.bodies) + 1:02d}"

    def turn(self, *content: dict[str, Any], stop: str | None = None, added: int = 900) -> None:
        if stop is None:
            stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
        first = not self.bodies
        usage = {
            "input_tokens": 30,
            "output_tokens": 60 + 40 * len(content),
            "cache_creation_input_tokens": self.tokens if first else added,
            "cache_read_input_tokens": 0 if first else self.tokens,
        }
        self.tokens += added
        self.bodies.append(
            {
                "id": f"msg_replay_{self._ids()}",
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": list(content),
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": usage,
            }
        )

    def tool(self, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
        # Counted per call: the calls of one turn are made before the turn is appended.
        self.tool_uses += 1
        return {
            "type": "tool_use",
            "id": f"toolu_replay_{self.name}_{self.tool_uses:02d}",
            "name": name,
            "input": tool_input,
        }


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def judge_document(name: str) -> dict[str, Any]:
    scores, note = JUDGMENTS[name]
    return {
        "scores": dict(zip(DIMENSIONS, scores, strict=True)),
        "unknowns": [d for d, s in zip(DIMENSIONS, scores, strict=True) if s == U],
        "note": note,
        "rubricVersion": "deep-judge-v1",
    }


def spot_check_url(folder: Path) -> str | None:
    sources = folder / "sources.json"
    if not sources.exists():
        return None
    listed = json.loads(sources.read_text(encoding="utf-8"))["sources"]
    for source in listed:
        url = source.get("url", "")
        stored = (folder / "sources").glob(f"{source['id']}.*")  # .txt, .html, .pdf, …
        if url.startswith("https://") and any(p.stem == source["id"] for p in stored):
            return str(url)
    return None


def build(name: str) -> list[dict[str, Any]]:
    folder = FIXTURES / name
    convo = Conversation(name)
    convo.turn(
        text("I'll start by listing the findings."),
        convo.tool("Read", {"file_path": "findings"}),
    )
    findings = sorted(p.name for p in (folder / "findings").glob("*.json"))
    # A careful judge reads every finding; a large session is read a few files a turn.
    for start in range(0, len(findings), 6):
        batch = findings[start : start + 6]
        convo.turn(
            *(convo.tool("Read", {"file_path": f"findings/{f}"}) for f in batch),
            added=1500 * len(batch),
        )
    extras = [f for f in ("sources.json", "answer.md", "trace.jsonl") if (folder / f).exists()]
    if extras:
        convo.turn(*(convo.tool("Read", {"file_path": f}) for f in extras), added=1800)
    url = spot_check_url(folder)
    if url:
        convo.turn(
            text("Spot-checking one cited source."),
            convo.tool("WebFetch", {"url": url, "prompt": "Does this support the cited claim?"}),
            added=2500,
        )
    document = judge_document(name)
    if name == "wrong-types":
        # A first attempt that breaks the format; the Write result lists the errors.
        broken = json.loads(json.dumps(document))
        broken["scores"]["factualAccuracy"] = 2  # written as 2.0 by _dump
        broken["unknowns"] = []
        convo.turn(
            convo.tool(
                "Write", {"file_path": "judge.json", "content": _dump(broken, fraction=True)}
            )
        )
        convo.turn(
            text(
                "The Write was refused: 2.0 is not an integer and unknowns must list "
                "toolEfficiency. Fixing both."
            ),
            convo.tool("Write", {"file_path": "judge.json", "content": _dump(document)}),
        )
    else:
        convo.turn(convo.tool("Write", {"file_path": "judge.json", "content": _dump(document)}))
    receipt = json.dumps({"wroteJudge": True, "note": document["note"][:120]})
    convo.turn(text(f"judge.json is written and the round-trip exited 0.\n\n{receipt}"))
    return convo.bodies


def _dump(document: dict[str, Any], fraction: bool = False) -> str:
    out = json.dumps(document, indent=2)
    if fraction:
        out = out.replace('"factualAccuracy": 2', '"factualAccuracy": 2.0')
    return out


def main() -> None:
    OUT.mkdir(exist_ok=True)
    for name in JUDGMENTS:
        # The first line says what the replay is for: `judge run --replay` refuses it on
        # another session, brief or model (as `--record` writes it).
        folder = FIXTURES / name
        brief = render_for_session(DEFAULT_BRIEF, name, folder, "judge")
        meta = replay_meta(session_digest(folder), "sha256:" + brief.template_digest, MODEL)
        lines = [json.dumps(meta)]
        lines += [json.dumps(body, ensure_ascii=False) for body in build(name)]
        (OUT / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(JUDGMENTS)} replays to {OUT.relative_to(REPO)}")


if __name__ == "__main__":
    main()
