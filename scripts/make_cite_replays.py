"""Write the citation audit's recorded answers: sessions_fixture/replays/<name>.cite.jsonl.

One file per fixture that has a judge replay. Each holds what the support model would answer
for that fixture's claims, in `ReplayCiteClient`'s format (keyed by passage ids and question
keys), recorded by running the real audit against a scripted client, so the keys are exactly
the ones `judge run --cite-replay` and `judge cite --replay` will ask for.

The answers are plausible rather than measured, and deterministic (a small jitter is drawn
from a hash of the passage id):

- a quote index.json marks as fabricated or misattributed: no support (the quote fails
  screening, the claim is `unsupported`);
- an altered quote: still reads as support, but weakly (confirmed for review: `uncertain`);
  the deterministic check is what catches it;
- a quote that only a page's hidden text holds (html-sources): it is the claim's own words, so
  compared with the claim alone it reads as support (`supported`); only the deterministic
  check, reading the page's visible text, catches it;
- a claim whose number appears in none of its quotes: matched in screening, then not
  confirmed (`unsupported`);
- a claim carrying injected text: the quote supports only the real part (`uncertain`);
- otherwise ExpertQA's own support label for the claim: Complete -> `supported`,
  Partial/Incomplete -> `uncertain`, Missing -> `unsupported`, anything else -> `supported`.

Recorded with `--against auto` (the default), so a claim whose cited sources have stored
text is asked about the sources' passages: a passage holding one of the claim's quotes
(words, case aside; or its first or last eight words) answers as that quote would; any
other passage hardly supports it (a fabricated quote is in no passage, so its claim ends
`unsupported`).

Run: python scripts/make_cite_replays.py   (deterministic; the output is committed)
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from harness.audit import audit_session  # noqa: E402
from harness.cite import RecordingCiteClient, Reply, ScriptedClient, Usage  # noqa: E402
from harness.cite.replay import cite_meta  # noqa: E402
from harness.run import session_digest  # noqa: E402
from harness.session.loader import load_session  # noqa: E402

FIXTURES = REPO / "sessions_fixture"
OUT = FIXTURES / "replays"
MODEL = "claude-haiku-5-5"
SYSTEM_TOKENS = 1100  # the cached instructions, read from the cache on every call

# (detect, confirm) probabilities by what is known about a claim or quote.
ANSWERS: dict[str, tuple[float, float]] = {
    "fabricated": (0.04, 0.05),
    "misattributed": (0.14, 0.1),
    "altered": (0.62, 0.48),
    "hidden": (0.9, 0.86),
    "number": (0.58, 0.16),
    "injected": (0.7, 0.55),
    "Complete": (0.93, 0.9),
    "Partial": (0.66, 0.55),
    "Incomplete": (0.63, 0.52),
    "Missing": (0.12, 0.1),
    "other": (0.84, 0.8),
}
# index.json's `how` for a quote planted in hidden page text: the hider (build_fixtures.HIDERS).
HIDDEN = ("hidden-attribute", "display-none", "aria-hidden", "template", "script", "style")
_PASSAGE = re.compile(r"^(?P<claim>.+)-q(?P<n>\d+)$")


def _jitter(key: str) -> float:
    digest = hashlib.blake2b(key.encode(), digest_size=2).digest()
    return (int.from_bytes(digest, "big") / 0xFFFF - 0.5) * 0.06  # +-0.03


def _labels(name: str, expect: dict[str, Any]) -> dict[str, str]:
    """Passage-independent labels: claim id or `<claim id>-q<n>` -> an ANSWERS key."""
    session = load_session(FIXTURES / name)
    labels: dict[str, str] = {}
    injected = {(i["file"], i["pointer"]) for i in expect.get("injections", []) if i["pointer"]}
    for finding, rel in zip(session.findings, session.finding_paths, strict=True):
        for claim in finding.claims:
            support = ((claim.model_extra or {}).get("expertqa") or {}).get("support")
            label = support if support in ANSWERS else "other"
            if (rel, f"{session.claim_pointer(claim)}/text") in injected:
                label = "injected"
            elif claim.id in expect["numberMismatch"]:
                label = "number"
            labels.setdefault(claim.id, label)
    for claim_id, defects in expect["quoteNotInSource"].items():
        for defect in defects:
            how = "hidden" if defect["how"] in HIDDEN else defect["how"]
            labels[f"{claim_id}-q{defect['quote'] + 1}"] = how
    return labels


def _answer(labels: dict[str, str], passage: str, stage: int) -> float:
    m = _PASSAGE.match(passage)
    claim = m.group("claim") if m else passage
    label = labels.get(passage) or labels.get(claim.split("~")[0], "other")
    value = ANSWERS[label][stage] + _jitter(f"{passage}/{stage}")
    return round(min(0.99, max(0.01, value)), 2)


@functools.lru_cache(maxsize=65536)
def _words(text: str) -> str:
    # Cached: the scripted model reads each passage once per claim asked about it, and
    # its CPU would otherwise count against the harness in bench/bench_sources.py's wall.
    return " ".join(re.findall(r"\w+", text.casefold()))


def _holds(words: str, quote: str) -> bool:
    """Whether a passage's words hold the quote, or its first or last eight words (a quote
    may run across two passages)."""
    parts = quote.split(" ")
    return quote in words or any(
        " ".join(piece) in words for piece in (parts[:8], parts[-8:]) if len(piece) == 8
    )


def _grounded(
    labels: dict[str, str], quotes: dict[str, list[str]], claim: str, text: str, stage: int
) -> float:
    """A source passage against a claim (`--against sources`): it supports the claim as
    the claim's quote would when it holds one of the claim's (true) quotes, else hardly."""
    words = _words(text)
    held = [n for n, q in enumerate(quotes.get(claim, []), 1) if q and _holds(words, q)]
    if not held:
        value = 0.06 + _jitter(f"{claim}/{text[:40]}/{stage}")
        return round(min(0.99, max(0.01, value)), 2)
    return _answer(labels, f"{claim}-q{held[0]}", stage)


def _scripted(labels: dict[str, str], quotes: dict[str, list[str]]) -> ScriptedClient:
    names = {f"c-{re.sub(r'[^A-Za-z0-9_-]+', '_', cid)}"[:60]: cid for cid in quotes}

    def reply(request: dict[str, Any]) -> Reply:
        answers: dict[str, object] = {}
        state = request["state"].get("passages")
        if state is not None:  # a source's passages (grounded.py)
            # Round 2 is one request per claim: `confirm:<id>` and the descriptor `c-<claim>`.
            claim = next((names[k] for k in request["questions"] if k in names), "")
            for key in request["questions"]:
                if key in names:  # the set, taken together
                    compared = request["questions"][key]["instructions"]["compare"]
                    ids = [ref.strip("`").split(".")[1] for ref in compared]
                    texts = " ".join(state[pid]["text"] for pid in ids)
                    answers[key] = _grounded(labels, quotes, names[key], texts, 1)
                elif key.startswith("confirm:"):
                    text = state[key.removeprefix("confirm:")]["text"]
                    answers[key] = _grounded(labels, quotes, claim, text, 1)
                else:
                    pid, name = key.split(":")
                    answers[key] = _grounded(
                        labels, quotes, names.get(name, ""), state[pid]["text"], 0
                    )
        for key in request["questions"] if state is None else ():
            if key.startswith("confirm:"):
                answers[key] = _answer(labels, key.removeprefix("confirm:"), 1)
            else:
                answers[key] = _answer(labels, key.rsplit(":", 1)[0], 0)
        size = len(json.dumps(request, ensure_ascii=False))
        usage = Usage(
            input_tokens=size // 4 + 40,
            output_tokens=8 + 7 * len(answers),
            cache_read_input_tokens=SYSTEM_TOKENS,
        )
        return Reply(answers=answers, usage=usage, model=MODEL)

    return ScriptedClient(reply)


def fixtures() -> list[str]:
    """The fixtures `tests/e2e/test_replay.py` runs: those with a judge replay."""
    return sorted(
        p.name.removesuffix(".jsonl") for p in OUT.glob("*.jsonl") if ".cite." not in p.name
    )


def write(name: str, expect: dict[str, Any]) -> Path:
    session = load_session(FIXTURES / name)
    quotes = {claim.id: [_words(q.text) for q in claim.quotes] for _, claim in session.claims}
    recorder = RecordingCiteClient(_scripted(_labels(name, expect), quotes))
    # auto (the default of judge cite and judge run): sources where they have text.
    audit_session(session, client=recorder, model=MODEL, concurrency=4, against="auto")
    target = OUT / f"{name}.cite.jsonl"
    # Bound to the session and model it answers for, as `judge run --record` writes it.
    recorder.save(target, cite_meta(session_digest(FIXTURES / name), MODEL))
    return target


def main() -> int:
    index = json.loads((FIXTURES / "index.json").read_text(encoding="utf-8"))
    names = fixtures()
    for name in names:
        write(name, index[name]["expect"])
    print(f"wrote {len(names)} cite replays to {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
