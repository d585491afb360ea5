"""`judge cite --offline --json` on every fixture finds exactly what index.json says is there."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from harness.cli.main import cli
from tests.support.paths import FIXTURES

INDEX: dict[str, Any] = json.loads((FIXTURES / "index.json").read_text(encoding="utf-8"))
SCHEMA = json.loads((FIXTURES.parent / "schemas" / "citations.schema.json").read_text())
CLEAN = [n for n, e in INDEX.items() if not e["expect"]["problemKinds"]]


def offline_report(name: str) -> dict[str, Any]:
    result = CliRunner().invoke(
        cli, ["cite", str(FIXTURES / name), "--offline", "--json"], env={"ANTHROPIC_API_KEY": ""}
    )
    assert result.exit_code == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    Draft202012Validator(SCHEMA).validate(report)
    return report


def found(report: dict[str, Any], check: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for claim in report["claims"]:
        for problem in claim["problems"]:
            if problem["check"] == check:
                out.setdefault(claim["claimId"], []).append(problem)
    return out


@pytest.mark.parametrize("name", sorted(INDEX))
def test_offline_checks_match_the_index(name: str) -> None:
    expect = INDEX[name]["expect"]
    report = offline_report(name)
    ids = [c["claimId"] for c in report["claims"]]
    if name == "wrong-types":  # a claim whose text is a number cannot be audited
        assert ids == [i for n, i in enumerate(expect["claimIds"]) if n != 1]
    else:
        assert ids == expect["claimIds"]

    dangling = {cid: p[0]["sourceIds"] for cid, p in found(report, "dangling_source").items()}
    assert dangling == expect["danglingSourceIds"]

    missing = {
        cid: [{"quote": p["quote"], "sourceId": p["sourceIds"][0]} for p in problems]
        for cid, problems in found(report, "quote_not_in_source").items()
    }
    assert missing == {
        cid: [{"quote": d["quote"], "sourceId": d["sourceId"]} for d in defects]
        for cid, defects in expect["quoteNotInSource"].items()
    }

    numbers = {cid: p[0]["numbers"] for cid, p in found(report, "number_mismatch").items()}
    assert numbers == expect["numberMismatch"]

    assert sorted(found(report, "no_quote")) == sorted(expect["noQuote"])
    assert report["offline"] is True
    assert report["totals"]["requests"] == 0
    assert all(
        c["verdict"] == ("unsupported" if c["claimId"] in expect["noQuote"] else "unchecked")
        for c in report["claims"]
    )


@pytest.mark.parametrize("name", CLEAN)
def test_clean_fixtures_have_no_problem_of_the_four_kinds(name: str) -> None:
    report = offline_report(name)
    four = {"dangling_source", "quote_not_in_source", "number_mismatch", "no_quote"}
    assert [p for c in report["claims"] for p in c["problems"] if p["check"] in four] == []


def test_the_misattributed_quote_names_the_source_that_holds_it() -> None:
    (problem,) = found(offline_report("quote-not-in-source"), "quote_not_in_source")["sq2-c1"]
    assert problem["foundIn"] == ["s1"]
    (altered,) = found(offline_report("quote-not-in-source"), "quote_not_in_source")["sq1-c3"]
    assert altered["similarity"] > 90 and altered["nearest"]
