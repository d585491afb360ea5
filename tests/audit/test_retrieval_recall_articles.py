"""Recall of the one supporting line on the second evidence set (bench/data/evidence2/).

Deterministic, no model: generated encyclopedia-like articles, one sentence (heading, list
item, table row) a line, each claim supported by one line that shares few words with it. For
each shape (sentences one per line; each sentence its own paragraph) and each kind (one or
four claims citing an article), the supporting line of at least 98% of the claims lies within
the claim's own passages at the committed parameters, within the per-claim budget.
Definitions: bench/evidence.py; the set: bench/data/evidence2/README.md; figures:
docs/retrieval.md.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from bench import evidence as ev
from harness.audit.passages import CLAIM_CHARS, select

GOAL = 0.98


def _retrieve(source_id: str, text: str, claims: Sequence[str]) -> list[list[tuple[int, int]]]:
    found = select(source_id, text, list(claims))
    own = [[(p.start, p.end) for p in ps] for ps in found.by_query]
    for spans in own:
        assert sum(b - a for a, b in spans) <= CLAIM_CHARS
    return own


@pytest.fixture(scope="module", params=ev.ARTICLE_SHAPES)
def shaped(request: pytest.FixtureRequest) -> list[ev.Document]:
    return ev.load_articles(request.param)


@pytest.mark.parametrize("kind", ev.KINDS)
def test_the_supporting_line_is_among_the_claims_own_passages(
    shaped: list[ev.Document], kind: str
) -> None:
    docs = [d for d in shaped if d.kind == kind]
    score, missed = ev.score(docs, _retrieve)
    assert score.claims == (120 if kind == "single" else 160)
    assert score.full_recall >= GOAL, (score.full_recall, missed)
    assert score.source_recall >= score.full_recall
    assert score.chars_per_claim <= CLAIM_CHARS


def test_each_claim_has_exactly_one_supporting_line() -> None:
    for shape in ev.ARTICLE_SHAPES:
        for doc in ev.load_articles(shape):
            for claim in doc.claims:
                (span,) = claim.evidence
                line = doc.text[span[0] : span[1]]
                assert line and "\n" not in line and line == line.strip()
