"""Synthetic session directories of any size, for benchmarks.

``make_session(dir, n_claims, seed)`` writes a session in the format of docs/formats.md (findings/,
sources.json, sources/<id>.txt snapshots, answer.md, trace.jsonl) with ``n_claims`` claims.
Every quote is a verbatim sentence of its source's snapshot and every number in a claim is
in its quote, so a correct audit finds no problem unless ``defect_every`` asks for some.
The same arguments always give byte-identical files; no data set is needed.

Usage: ``python bench/synth.py OUT_DIR --claims 20000 [--seed 0] [--defect-every 0]``.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

CLAIMS_PER_FINDING = 50
CLAIMS_PER_SOURCE = 8
SENTENCES_PER_SOURCE = 24

_WORD_TEXT = (
    "analysis evidence patients cohort trial outcome policy market growth rate risk exposure "
    "children treatment effect model sample review study region emissions climate income "
    "students learning teachers protein cell membrane reaction catalyst bridge load design "
    "court statute liability contract guild trade inflation debt tax diagnosis screening "
    "symptoms therapy dose survey response memory language culture archive century empire "
    "network protocol latency sensor signal energy battery water soil species habitat"
)
_WORDS = _WORD_TEXT.split()
_VERB_TEXT = (
    "increased reduced affected predicted explained shaped improved limited doubled "
    "influenced supported challenged accompanied preceded"
)
_VERBS = _VERB_TEXT.split()
_HOSTS = (
    ("ncbi.nlm.nih.gov", "primary"),
    ("who.int", "primary"),
    ("nature.com", "primary"),
    ("stanford.edu", "primary"),
    ("en.wikipedia.org", "secondary"),
    ("britannica.com", "secondary"),
    ("reuters.com", "secondary"),
    ("example-blog.com", "low"),
)


def _sentence(rng: random.Random) -> str:
    subject = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(2, 4)))
    rest = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(6, 14)))
    number = ""
    if rng.random() < 0.3:
        number = f" by {rng.randint(2, 95)}% between {rng.randint(1950, 2000)} and 2020"
    return f"{subject.capitalize()} {rng.choice(_VERBS)} {rest}{number}."


def _dump(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")


def make_session(dir: Path, n_claims: int, seed: int = 0, *, defect_every: int = 0) -> None:
    """Write a synthetic session with ``n_claims`` claims into ``dir`` (created if needed).

    With ``defect_every=k > 0`` every k-th claim gets a quote that is not in its snapshot.
    """
    rng = random.Random(seed)
    n_sources = max(1, -(-n_claims // CLAIMS_PER_SOURCE))
    (dir / "findings").mkdir(parents=True, exist_ok=True)
    (dir / "sources").mkdir(exist_ok=True)

    sources: list[dict[str, str]] = []
    sentences: list[list[str]] = []
    for i in range(1, n_sources + 1):
        host, tier = _HOSTS[(i - 1) % len(_HOSTS)]
        sid = f"s{i}"
        sources.append(
            {"id": sid, "url": f"https://{host}/doc/{seed}/{i}", "title": f"Doc {i}", "tier": tier}
        )
        body = [_sentence(rng) for _ in range(SENTENCES_PER_SOURCE)]
        sentences.append(body)
        (dir / "sources" / f"{sid}.txt").write_text(" ".join(body) + "\n", encoding="utf-8")
    _dump(dir / "sources.json", {"sources": sources})

    trace: list[dict[str, Any]] = []
    answer = [f"# Synthetic session (seed {seed}, {n_claims} claims)", ""]
    n_findings = max(1, -(-n_claims // CLAIMS_PER_FINDING))
    made = 0
    for f in range(1, n_findings + 1):
        sq = f"sq{f}"
        question = f"Synthetic sub-question {f}: how did {rng.choice(_WORDS)} change?"
        trace.append({"tool": "web_search", "input": {"query": question}, "ok": True, "ms": 800})
        claims: list[dict[str, Any]] = []
        for c in range(1, min(CLAIMS_PER_FINDING, n_claims - made) + 1):
            made += 1
            s = rng.randrange(n_sources)
            sid = sources[s]["id"]
            quote = rng.choice(sentences[s])
            text = f"Reportedly, {quote[0].lower()}{quote[1:]}"
            if defect_every and made % defect_every == 0:
                quote = quote.replace(" ", "  ", 1) + " (paraphrased)"
            claims.append(
                {
                    "id": f"{sq}-c{c}",
                    "text": text,
                    "sourceIds": [sid],
                    "quotes": [{"sourceId": sid, "text": quote}],
                    "verification": {"votes": [{"verifier": "v1", "verdict": "supported"}]},
                }
            )
            if c == 1:
                url = sources[s]["url"]
                trace.append({"tool": "web_fetch", "input": {"url": url}, "ok": True, "ms": 1200})
                answer.append(f"{text} [{sid}]")
        _dump(
            dir / "findings" / f"{sq}.json", {"id": sq, "subQuestion": question, "claims": claims}
        )
    (dir / "answer.md").write_text("\n\n".join(answer) + "\n", encoding="utf-8")
    lines = "".join(json.dumps(t) + "\n" for t in trace)
    (dir / "trace.jsonl").write_text(lines, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write a synthetic session for benchmarks.")
    parser.add_argument("out", type=Path, help="session directory to write")
    parser.add_argument("--claims", type=int, default=20_000, help="number of claims")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--defect-every", type=int, default=0, help="k: every k-th quote is off")
    args = parser.parse_args(argv)
    make_session(args.out, args.claims, args.seed, defect_every=args.defect_every)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
