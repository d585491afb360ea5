"""The four fixtures made for issue 11 carry what their names promise (sessions_fixture/README.md).

`pdf-sources` (PDF snapshots only), `html-sources` (quotes across <li> and <td>, quotes planted in
hidden page text), `citation-markers` (markers in claim text, numbers beside the quote) and
`shared-source` (many claims on few sources). What the audit must find in them is in
index.json and checked by tests/audit/test_audit_fixtures.py; these tests check the files.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from collections import Counter
from types import ModuleType
from typing import Any

import pytest

from tests.support.paths import FIXTURES, REPO

INDEX: dict[str, Any] = json.loads((FIXTURES / "index.json").read_text(encoding="utf-8"))


def _builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "build_fixtures", REPO / "scripts/build_fixtures.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("build_fixtures", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


bf = _builder()


def _claims(name: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in sorted((FIXTURES / name / "findings").glob("*.json")):
        out += json.loads(path.read_text(encoding="utf-8"))["claims"]
    return out


def _planted(name: str) -> dict[str, str]:
    """claim id -> how, for the quotes index.json says are not in their source."""
    return {
        cid: d["how"] for cid, ds in INDEX[name]["expect"]["quoteNotInSource"].items() for d in ds
    }


def fold(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize(
    "name", ["pdf-sources", "html-sources", "citation-markers", "shared-source"]
)
def test_the_new_fixtures_are_indexed_and_described(name: str) -> None:
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    assert name in INDEX and f"`{name}`" in readme
    assert (FIXTURES / "replays" / f"{name}.jsonl").is_file()
    assert (FIXTURES / "replays" / f"{name}.cite.jsonl").is_file()


def test_pdf_sources_are_pdfs_only_with_fixed_metadata() -> None:
    files = sorted((FIXTURES / "pdf-sources" / "sources").iterdir())
    assert files and {p.suffix for p in files} == {".pdf"}  # no .txt holds any quote
    for path in files:
        data = path.read_bytes()
        assert data.startswith(b"%PDF-")
        assert b"/CreationDate (D:20230901000000Z)" in data
        assert bf.PDF_PRODUCER.encode() in data
        assert b"/FlateDecode" in data  # compressed, as real PDFs are: no text in the clear
    quotes = [q["text"] for c in _claims("pdf-sources") for q in c["quotes"]]
    assert not any(q.encode("latin-1") in b"".join(p.read_bytes() for p in files) for q in quotes)


def test_pdf_quotes_are_in_their_text_layer_across_line_breaks_but_the_fabricated_one() -> None:
    session = FIXTURES / "pdf-sources"
    planted = _planted("pdf-sources")
    assert sorted(planted.values()) == ["fabricated"]
    wrapped = 0
    for claim in _claims("pdf-sources"):
        for quote in claim["quotes"]:
            text = bf.pdf_text_layer(
                (session / "sources" / f"{quote['sourceId']}.pdf").read_bytes()
            )
            found = fold(quote["text"]) in fold(text)
            assert found is (claim["id"] not in planted), claim["id"]
            wrapped += found and quote["text"] not in text
    assert wrapped >= 1  # a quote that only whitespace folding finds: it runs over a line break


def test_html_quotes_span_list_items_and_table_cells_and_hidden_quotes_are_planted() -> None:
    session = FIXTURES / "html-sources"
    files = sorted((session / "sources").iterdir())
    assert files and {p.suffix for p in files} == {".html"}
    planted = _planted("html-sources")
    assert sorted(planted.values()) == sorted(kind for kind, _ in bf.HIDERS)
    markup = {p.stem: p.read_text(encoding="utf-8") for p in files}
    spans = {"li": 0, "td": 0}
    for claim in _claims("html-sources"):
        (quote,) = claim["quotes"]
        page = markup[quote["sourceId"]]
        visible = fold(bf.visible_text(page))
        if claim["id"] in planted:
            assert quote["text"] == claim["text"]  # the page hides the claim's own words
            assert fold(quote["text"]) not in visible
            hider = dict(bf.HIDERS)[planted[claim["id"]]].split("{")[0]
            assert hider in page
            continue
        assert fold(quote["text"]) in visible, claim["id"]
        for tag in spans:  # the quote's words lie in two or more elements of this kind
            cells = re.findall(rf"<{tag}>(.*?)</{tag}>", page)
            inside = [c for c in cells if fold(c) in fold(quote["text"])]
            spans[tag] += len(inside) >= 2
    assert spans == {"li": 1, "td": 1}


def test_citation_markers_come_in_every_style_and_numbers_lie_beside_the_quotes() -> None:
    session = FIXTURES / "citation-markers"
    claims = _claims("citation-markers")
    texts = " ".join(c["text"] for c in claims)
    assert re.search(r"\[\d+\]", texts)
    assert re.search(r"\[\d+, \d+", texts)
    assert re.search(r"\[\^\d+\]", texts)
    assert re.search(r"[\u00b9\u00b2\u00b3\u2070\u2074-\u2079]", texts)
    expect = INDEX["citation-markers"]["expect"]
    (changed,) = expect["numberMismatch"]
    beside = 0
    for claim in claims:
        numbers = set(bf.claim_numbers(claim["text"]))
        quoted = {n for q in claim["quotes"] for n in bf.numbers_in(q["text"])}
        source = " ".join(
            (session / "sources" / f"{s}.txt").read_text(encoding="utf-8")
            for s in claim["sourceIds"]
        )
        outside = numbers - quoted
        if claim["id"] == changed:
            assert outside and not outside & set(bf.numbers_in(source))
        elif outside:
            assert outside <= set(bf.numbers_in(source)), claim["id"]
            beside += 1
    assert beside >= 3
    assert len(claims) >= 15


def test_shared_source_has_many_claims_on_few_sources() -> None:
    claims = _claims("shared-source")
    per_source = Counter(s for c in claims for s in c["sourceIds"])
    assert len(claims) >= 15
    assert 2 <= len(per_source) <= 4
    assert min(per_source.values()) >= 5
    assert INDEX["shared-source"]["expect"]["problems"] == []


def test_reference_html_reader_drops_every_hider() -> None:
    for kind, template in bf.HIDERS:
        page = "<main><p>shown</p>" + template.format(text="secret", json='"secret"') + "</main>"
        assert bf.visible_text(page) == "shown\n", kind
