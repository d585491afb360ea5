"""Build the retrieval evidence set in ``bench/data/evidence/`` from ExpertQA.

Each claim of the set is an ExpertQA claim whose expert annotator judged its one cited
evidence passage as ``Complete`` support. A *document* is made by embedding that passage
(the marked evidence) among other real ExpertQA evidence passages, taken from other
questions of the same field (distractors), so a long article-like text holds the evidence
once, somewhere. Two kinds of documents:

- ``single``: one claim cites the document (one marked passage among distractors);
- ``quad``: four claims of one question, each with its own marked passage, all four in the
  same document (four claims citing one source).

The paragraph shape (long paragraphs, or one sentence per paragraph) is not stored: the
reader (``bench/evidence.py``) renders each document both ways.

The output is deterministic (a seeded ``random.Random`` over records in file order).
SOURCE is a folder holding ExpertQA's ``rand_val.jsonl``, ``rand_test.jsonl`` and
``LICENSE`` (``data/lfqa/`` of chaitanyamalaviya/ExpertQA, commit
1aa7ba81bd4c083c12ef1aa2fee338f6cb60fa87).

Usage: ``python scripts/build_evidence_set.py SOURCE [--out DIR]``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "bench" / "data" / "evidence"
FILES = ("rand_val.jsonl", "rand_test.jsonl")
SEED = 18
SINGLES = 200  # documents cited by one claim
QUADS = 40  # documents cited by four claims
PARAGRAPHS = 24  # paragraphs per document (marked passages included)
MIN_EVIDENCE = 200  # characters: shorter evidence strings are mostly titles or URLs

_MARKER = re.compile(r"\s*\[\d+\]")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Item:
    file: str
    line: int
    system: str
    claim_index: int
    question: str
    field: str
    claim: str
    url: str
    passage: str
    complete: bool  # the claim's support label is Complete and this is its only evidence


def _evidence(raw: str) -> tuple[str, str] | None:
    """(url, passage) of an ExpertQA evidence string ``"[n] URL\\n\\npassage"``."""
    head, sep, body = raw.partition("\n\n")
    if not sep:
        return None
    url = head.split(maxsplit=1)[-1] if head.split() else ""
    text = _SPACE.sub(" ", body).strip()
    return (url, text) if len(text) >= MIN_EVIDENCE else None


def read(source: Path) -> list[Item]:
    items: list[Item] = []
    for name in FILES:
        for n, line in enumerate((source / name).read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            rec = json.loads(line)
            field = str((rec.get("metadata") or {}).get("field") or "Other")
            for system, answer in sorted(rec["answers"].items()):
                for k, claim in enumerate(answer.get("claims") or []):
                    evidence = [e for e in map(_evidence, claim.get("evidence") or []) if e]
                    text = _SPACE.sub(" ", _MARKER.sub("", claim.get("claim_string") or ""))
                    complete = claim.get("support") == "Complete" and len(evidence) == 1
                    for url, passage in evidence:
                        items.append(
                            Item(
                                name,
                                n,
                                system,
                                k,
                                rec["question"],
                                field,
                                text.strip(),
                                url,
                                passage,
                                complete and bool(text.strip()),
                            )
                        )
    return items


def build(items: list[Item]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = random.Random(SEED)
    # One entry per distinct passage text: the first item that carries it.
    by_text: dict[str, Item] = {}
    for it in items:
        by_text.setdefault(it.passage, it)
    pool_by_field: dict[str, list[str]] = defaultdict(list)
    for text, it in by_text.items():
        pool_by_field[it.field].append(text)
    # Candidate claims: Complete, one evidence passage, one claim per (claim text).
    seen_claims: set[str] = set()
    by_question: dict[str, list[Item]] = defaultdict(list)
    for it in items:
        if it.complete and it.claim not in seen_claims:
            seen_claims.add(it.claim)
            by_question[it.question].append(it)
    questions = sorted(by_question)
    rng.shuffle(questions)
    docs: list[tuple[str, list[Item]]] = []
    used: set[str] = set()  # claim texts placed
    # Quads first: four claims of one question with four distinct marked passages.
    for q in questions:
        if sum(1 for kind, _ in docs if kind == "quad") == QUADS:
            break
        distinct: dict[str, Item] = {}
        for it in by_question[q]:
            distinct.setdefault(it.passage, it)
        if len(distinct) >= 4:
            group = rng.sample(sorted(distinct.values(), key=lambda i: i.passage), 4)
            docs.append(("quad", group))
            used.update(i.claim for i in group)
    rest = [it for q in questions for it in by_question[q] if it.claim not in used]
    rng.shuffle(rest)
    docs.extend(("single", [it]) for it in rest[:SINGLES])

    passages: dict[str, dict[str, Any]] = {}

    def pid(text: str) -> str:
        if text not in passages:
            it = by_text[text]
            passages[text] = {
                "id": f"x{len(passages) + 1}",
                "text": text,
                "origin": {"file": it.file, "line": it.line, "system": it.system},
            }
        return str(passages[text]["id"])

    documents: list[dict[str, Any]] = []
    for n, (kind, group) in enumerate(docs, 1):
        marked = {it.passage for it in group}
        questions_here = {it.question for it in group}
        field = group[0].field
        pool = [
            t
            for t in pool_by_field[field]
            if t not in marked and by_text[t].question not in questions_here
        ]
        if len(pool) < PARAGRAPHS:
            pool += [
                t
                for f in sorted(pool_by_field)
                if f != field
                for t in pool_by_field[f]
                if by_text[t].question not in questions_here and t not in marked
            ]
        paras = rng.sample(pool, PARAGRAPHS - len(group))
        for it in group:
            paras.insert(rng.randrange(len(paras) + 1), it.passage)
        documents.append(
            {
                "id": f"d{n}",
                "kind": kind,
                "field": field,
                "paragraphs": [pid(t) for t in paras],
                "claims": [
                    {
                        "id": f"d{n}c{k}",
                        "claim": it.claim,
                        "evidence": pid(it.passage),
                        "origin": {
                            "file": it.file,
                            "line": it.line,
                            "system": it.system,
                            "claim": it.claim_index,
                        },
                    }
                    for k, it in enumerate(group, 1)
                ],
            }
        )
    return list(passages.values()), documents


def write(source: Path, out: Path) -> tuple[int, int, int]:
    passages, documents = build(read(source))
    out.mkdir(parents=True, exist_ok=True)
    with (out / "passages.jsonl").open("w", encoding="utf-8") as f:
        for p in passages:
            f.write(json.dumps(p, ensure_ascii=False, sort_keys=True) + "\n")
    with (out / "documents.jsonl").open("w", encoding="utf-8") as f:
        for d in documents:
            f.write(json.dumps(d, ensure_ascii=False, sort_keys=True) + "\n")
    shutil.copyfile(source / "LICENSE", out / "LICENSE")
    claims = sum(len(d["claims"]) for d in documents)
    return len(documents), claims, len(passages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="folder with ExpertQA's rand_*.jsonl, LICENSE")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    docs, claims, passages = write(args.source, args.out)
    print(f"{docs} documents, {claims} claims, {passages} distinct passages -> {args.out}")


if __name__ == "__main__":
    main()
