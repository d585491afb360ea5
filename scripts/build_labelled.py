"""Build the labelled sessions of `judge agree`: sessions_fixture/labelled/.

From ExpertQA (Malaviya et al., 2023; MIT licence, kept beside the output as
LICENSE-expertqa), answers the other fixtures do not use become sessions (as
scripts/build_fixtures.py makes them, claims without evidence kept unquoted), and the
experts' own labels become labels.jsonl:

- one claim label per claim with an ExpertQA `support` label: Complete -> supported,
  Partial or Incomplete -> partial, Missing -> unsupported (N/A and absent: no label);
- one rating per session, derived from the same expert's claim labels (ExpertQA has no
  session-level rubric scores): citationAccuracy = round(5 x mean support, Complete 1,
  Partial/Incomplete 0.5, Missing 0); factualAccuracy = round(5 x mean correctness,
  Definitely correct 1, Probably correct 0.75, Unsure 0.5, Likely incorrect 0.25,
  Definitely incorrect 0); sourceQuality = round(5 x mean reliability of the cited sources,
  Reliable 1, Somewhat reliable 0.5, Not reliable at all 0). Each needs at least 3 labelled
  claims; the other two dimensions are not rated.

The sessions' findings carry no verification votes and no ExpertQA fields: the labels are
kept out of what the judge and the audit read.

The recorded replies in replays/ come from stand-ins, not a model, so that `make agree` runs
with no key and its figures show how the command reads, not how good a model is:
- the audit's stand-in answers each question with the square root of the share of the
  claim's content words that the passage (or quote) it inspects contains;
- the judge's stand-in reads every finding and writes judge.json with scores from simple
  features of the session: citationAccuracy and factualAccuracy from the mean share of each
  claim's content words its quotes contain, sourceQuality from the share of `primary`
  sources, completeness from the number of claims, toolEfficiency 4 (a plain trace).

Run:
  python scripts/build_labelled.py --data DIR      # DIR holds ExpertQA's rand_*.jsonl
  python scripts/build_labelled.py --replays-only  # only the replays (e.g. after a digest change)
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import re
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from harness.audit import audit_session  # noqa: E402
from harness.cite import RecordingCiteClient, Reply, ScriptedClient, Usage  # noqa: E402
from harness.cite.replay import cite_meta  # noqa: E402
from harness.contract.brief import render_for_session  # noqa: E402
from harness.contract.rubric import DIMENSIONS  # noqa: E402
from harness.model.replay import replay_meta  # noqa: E402
from harness.resources import DEFAULT_BRIEF  # noqa: E402
from harness.run import session_digest  # noqa: E402
from harness.session.loader import load_session  # noqa: E402

FIXTURES = REPO / "sessions_fixture"
OUT = FIXTURES / "labelled"
SESSIONS = OUT / "sessions"
REPLAYS = OUT / "replays"
JUDGE_MODEL = "claude-sonnet-5-5"
CITE_MODEL = "claude-haiku-5-5"
COUNT = 24
MIN_LABELLED = 4

SUPPORT = {
    "Complete": "supported",
    "Partial": "partial",
    "Incomplete": "partial",
    "Missing": "unsupported",
}
SUPPORT_VALUE = {"supported": 1.0, "partial": 0.5, "unsupported": 0.0}
CORRECT_VALUE = {
    "Definitely correct": 1.0,
    "Probably correct": 0.75,
    "Unsure": 0.5,
    "Likely incorrect": 0.25,
    "Definitely incorrect": 0.0,
}
RELIABLE_VALUE = {"Reliable": 1.0, "Somewhat reliable": 0.5, "Not reliable at all": 0.0}
STOP = frozenset(
    (
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "with",
        "by",
        "from",
        "as",
        "at",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "which",
        "who",
        "whom",
        "can",
        "may",
        "might",
        "will",
        "would",
        "should",
        "could",
        "has",
        "have",
        "had",
        "do",
        "does",
        "did",
        "not",
        "no",
        "such",
        "than",
        "then",
        "there",
        "their",
        "they",
        "them",
        "he",
        "she",
        "his",
        "her",
        "we",
        "our",
        "you",
        "your",
    )
)


def _module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP and len(w) > 1}


def coverage(claim: str, text: str) -> float:
    wanted = words(claim)
    return len(wanted & words(text)) / len(wanted) if wanted else 0.0


def _round5(mean: float) -> int:
    return int(min(5, max(0, round(5 * mean + 1e-9))))


# -- sessions and labels ------------------------------------------------------------------------


def build_sessions(data: Path) -> None:
    bf = _module("build_fixtures")
    records = bf.load_records(data)
    index = json.loads((FIXTURES / "index.json").read_text(encoding="utf-8"))
    used = {(o["file"], o["line"]) for e in index.values() for o in e["origin"]}
    # One answer per question, by the hash of the question (as the fixtures choose).
    pool = sorted(
        (r for r in records if (r.file, r.line) not in used),
        key=lambda r: hashlib.sha256(f"{r.question}/{r.system}".encode()).hexdigest(),
    )
    if SESSIONS.exists():
        shutil.rmtree(SESSIONS)
    SESSIONS.mkdir(parents=True)
    lines: list[str] = []
    questions: set[str] = set()
    origins: dict[str, Any] = {}
    for record in pool:
        if len(origins) == COUNT:
            break
        if record.question in questions:
            continue
        name = f"eqa-{len(origins) + 1:02d}"
        registry = bf.SourceRegistry()
        registry.register_record(record)
        drafts = bf.draft_claims(record, registry, keep_unquoted=True)
        session = bf.session_from(name, "labelled", record, registry, drafts)
        claims = [c for f in session.findings or [] for c in f["claims"]]
        labelled = [c for c in claims if SUPPORT.get(str(c["expertqa"].get("support")))]
        if len(labelled) < MIN_LABELLED:
            continue
        questions.add(record.question)
        rater = f"expertqa:{record.file}:{record.line}:{record.system}"
        for claim in claims:
            support = SUPPORT.get(str(claim["expertqa"].get("support")))
            if support:
                lines.append(
                    json.dumps(
                        {
                            "version": "labels-v1",
                            "kind": "claim",
                            "session": name,
                            "claimId": claim["id"],
                            "support": support,
                            "rater": rater,
                        }
                    )
                )
        rating = _rating(claims)
        if rating:
            lines.append(
                json.dumps(
                    {
                        "version": "labels-v1",
                        "kind": "rating",
                        "session": name,
                        "rater": rater,
                        "scores": rating,
                        "note": "derived from the expert's claim labels "
                        "(scripts/build_labelled.py)",
                    }
                )
            )
        for finding in session.findings or []:
            for claim in finding["claims"]:
                claim.pop("expertqa", None)
                claim.pop("verification", None)
        bf.write_session(SESSIONS, session)
        origins[name] = record.origin() | {"question": record.question}
    (OUT / "labels.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (OUT / "origin.json").write_text(json.dumps(origins, indent=2) + "\n", encoding="utf-8")
    shutil.copyfile(FIXTURES / "LICENSE-expertqa", OUT / "LICENSE-expertqa")
    print(f"wrote {len(origins)} sessions and {len(lines)} labels to {OUT.relative_to(REPO)}")


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if len(values) >= 3 else None


def _rating(claims: list[dict[str, Any]]) -> dict[str, int]:
    labels = [c["expertqa"] for c in claims]
    support = _mean(
        [SUPPORT_VALUE[s] for lab in labels if (s := SUPPORT.get(str(lab.get("support"))))]
    )
    correct = _mean(
        [CORRECT_VALUE[v] for lab in labels if (v := str(lab.get("correctness"))) in CORRECT_VALUE]
    )
    reliable = _mean(
        [
            RELIABLE_VALUE[v]
            for lab in labels
            if (v := str(lab.get("reliability"))) in RELIABLE_VALUE
        ]
    )
    out: dict[str, int] = {}
    for dim, mean in (
        ("factualAccuracy", correct),
        ("citationAccuracy", support),
        ("sourceQuality", reliable),
    ):
        if mean is not None:
            out[dim] = _round5(mean)
    return out


# -- the stand-ins' replays ---------------------------------------------------------------------


def _cite_client(claims: dict[str, str]) -> ScriptedClient:
    """Answers from word overlap; the claim is found by its concern name (`c-<id>`) in a key
    or the question's wording, or in a quote's `claim` field."""
    by_concern = {
        f"c-{re.sub(r'[^A-Za-z0-9_-]+', '_', cid)}"[:60]: text for cid, text in claims.items()
    }

    def text_at(state: dict[str, Any], ref: str) -> str:
        parts = ref.strip("`").split(".")
        node: Any = state
        for part in parts:
            node = node.get(part, {}) if isinstance(node, dict) else {}
        return node if isinstance(node, str) else ""

    def reply(request: dict[str, Any]) -> Reply:
        state = request["state"]
        answers: dict[str, object] = {}
        named = [c for c in by_concern if any(c in k for k in request["questions"])]
        for key, question in request["questions"].items():
            ins = question.get("instructions", {})
            refs = [ins["inspect"]] if "inspect" in ins else list(ins.get("compare", []))
            inspected = " ".join(text_at(state, r) for r in refs)
            claim = next((by_concern[c] for c in by_concern if c in key), None)
            if claim is None:
                wording = str(ins.get("question", ""))
                claim = next((by_concern[c] for c in by_concern if c in wording), None)
            if claim is None and refs:
                item = text_at(state, refs[0].rsplit(".", 1)[0] + ".claim")
                claim = item or None
            if claim is None and len(named) == 1:
                claim = by_concern[named[0]]
            value = coverage(claim or "", inspected) ** 0.5
            answers[key] = round(min(0.98, max(0.02, value)), 2)
        size = len(json.dumps(request, ensure_ascii=False))
        usage = Usage(input_tokens=size // 4 + 40, output_tokens=8 + 7 * len(answers))
        return Reply(answers=answers, usage=usage, model=CITE_MODEL)

    return ScriptedClient(reply)


def _judge_document(folder: Path) -> dict[str, Any]:
    session = load_session(folder)
    shares = [
        coverage(claim.text, " ".join(q.text for q in claim.quotes))
        for _, claim in session.claims
        if claim.quotes
    ]
    cited = sum(shares) / len(shares) if shares else 0.0
    sources = json.loads((folder / "sources.json").read_text(encoding="utf-8"))["sources"]
    primary = sum(1 for s in sources if s.get("tier") == "primary") / max(1, len(sources))
    n = sum(1 for _ in session.claims)
    scores = {
        "factualAccuracy": _round5(cited * 0.9),
        "citationAccuracy": _round5(cited),
        "completeness": min(5, 1 + n // 3),
        "sourceQuality": _round5(0.4 + 0.6 * primary),
        "toolEfficiency": 4,
    }
    return {
        "scores": {d: scores[d] for d in DIMENSIONS},
        "unknowns": [],
        "note": f"Stand-in judge for the labelled fixtures: {n} claims; their quotes carry "
        f"{cited:.0%} of the claims' content words on average; {primary:.0%} primary sources.",
        "rubricVersion": "deep-judge-v1",
    }


def write_replays() -> None:
    mr = _module("make_replays")
    REPLAYS.mkdir(exist_ok=True)
    for old in REPLAYS.glob("*.jsonl"):
        old.unlink()
    names = sorted(p.name for p in SESSIONS.iterdir() if p.is_dir())
    for name in names:
        folder = SESSIONS / name
        digest = session_digest(folder)
        session = load_session(folder)
        claims = {claim.id: claim.text for _, claim in session.claims}
        recorder = RecordingCiteClient(_cite_client(claims))
        audit_session(session, client=recorder, model=CITE_MODEL, concurrency=4, against="auto")
        recorder.save(REPLAYS / f"{name}.cite.jsonl", cite_meta(digest, CITE_MODEL))
        convo = mr.Conversation(name)
        convo.turn(mr.text("Listing the findings."), convo.tool("Read", {"file_path": "findings"}))
        findings = sorted(p.name for p in (folder / "findings").glob("*.json"))
        convo.turn(*(convo.tool("Read", {"file_path": f"findings/{f}"}) for f in findings))
        document = _judge_document(folder)
        convo.turn(
            convo.tool("Write", {"file_path": "judge.json", "content": json.dumps(document)})
        )
        receipt = json.dumps({"wroteJudge": True, "note": document["note"][:120]})
        convo.turn(mr.text(f"judge.json is written.\n\n{receipt}"))
        brief = render_for_session(DEFAULT_BRIEF, name, folder, "judge")
        meta = replay_meta(digest, "sha256:" + brief.template_digest, JUDGE_MODEL)
        body = [json.dumps(meta)] + [json.dumps(b, ensure_ascii=False) for b in convo.bodies]
        (REPLAYS / f"{name}.jsonl").write_text("\n".join(body) + "\n", encoding="utf-8")
    print(f"wrote {len(names)} judge and cite replays to {REPLAYS.relative_to(REPO)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, help="the folder holding ExpertQA's rand_*.jsonl")
    parser.add_argument("--replays-only", action="store_true")
    args = parser.parse_args(argv)
    if not args.replays_only:
        if args.data is None:
            parser.error("--data DIR is needed to build the sessions (or pass --replays-only)")
        build_sessions(args.data)
    write_replays()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
