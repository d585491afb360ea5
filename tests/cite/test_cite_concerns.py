"""Concern definitions and sources: plain typed data, loadable from JSON, checked early."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from harness.cite import (
    CiteDefinitionError,
    CiteSource,
    Concerns,
    FactoredConcern,
    ScreenedConcern,
    ScriptedClient,
    judge,
)
from tests.support.cite_builders import answering, concerns, noul, screened, source

CRITERIA = {"true": {"what": "..."}, "false": {"what": "...", "not_for": "..."}}

DEFINITION: dict[str, Any] = {
    "filters": [
        {
            "name": "customer",
            "detect": {
                "type": "noul",
                "question": "Is {passage} the customer?",
                "criteria": CRITERIA,
            },
        },
    ],
    "factors": [
        {
            "name": "fix",
            "detect": {
                "type": "noul",
                "question": "Does {passage} report a fix?",
                "criteria": CRITERIA,
            },
        },
        {
            "name": "fault",
            "detect": {
                "type": "score",
                "question": "How bad a fault is {passage}?",
                "criteria": ["none", "minor", "outage"],
            },
        },
    ],
    "concerns": [
        {
            "kind": "screened",
            "name": "cancellation_risk",
            "detect": {"type": "noul", "question": "Does {passage} say ...?", "criteria": CRITERIA},
            "confirm": {
                "type": "noul",
                "question": "Does {passage} evidence ...?",
                "criteria": CRITERIA,
            },
            "descriptors": [
                {
                    "name": "severity",
                    "ask": {
                        "type": "score",
                        "question": "How severe?",
                        "criteria": ["low", "mid", "high"],
                    },
                },
                {
                    "name": "channel",
                    "ask": {
                        "type": "choice",
                        "question": "Which channel?",
                        "criteria": {"phone": {"what": "..."}, "chat": {"what": "..."}},
                    },
                },
            ],
        },
        {
            "kind": "factored",
            "name": "repeat_fault",
            "roles": [
                {"name": "earlier_fix", "factor": "fix"},
                {"name": "fault", "factor": "fault", "distinct": True},
                {"name": "promise", "factor": "fix", "required": False},
            ],
            "checks": [
                {
                    "name": "same_fault",
                    "roles": ["earlier_fix", "fault"],
                    "ask": {
                        "type": "noul",
                        "question": "Do {earlier_fix} and {fault} match?",
                        "criteria": CRITERIA,
                    },
                },
            ],
        },
    ],
}


def test_concerns_load_from_a_json_file(tmp_path: Path) -> None:
    path = tmp_path / "concerns.json"
    path.write_text(json.dumps(DEFINITION))
    loaded = Concerns.load(path)
    assert [c.name for c in loaded.concerns] == ["cancellation_risk", "repeat_fault"]
    assert isinstance(loaded.concerns[0], ScreenedConcern)
    assert isinstance(loaded.concerns[1], FactoredConcern)
    assert loaded.concerns[1].roles[1].distinct and loaded.concerns[1].roles[0].required
    assert not loaded.concerns[1].roles[2].required
    # Detects are asked in one order: filters, screened concerns, factors.
    assert [name for name, _ in loaded.detects] == ["customer", "cancellation_risk", "fix", "fault"]
    assert loaded == Concerns.model_validate(json.loads(loaded.model_dump_json()))


def test_concerns_load_reports_a_bad_file_as_a_definition_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(CiteDefinitionError):
        Concerns.load(missing)
    bad = tmp_path / "bad.json"
    bad.write_text('{"concerns": []}')
    with pytest.raises(CiteDefinitionError):
        Concerns.load(bad)


def _broken(change: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(json.dumps(DEFINITION))
    change(data)
    return data


@pytest.mark.parametrize(
    "change",
    [
        # filters, screened concerns and factors share the `<passage id>:<detect>` key space
        lambda d: d["factors"].append({**d["factors"][0], "name": "customer"}),
        lambda d: d["factors"].append({**d["factors"][0], "name": "cancellation_risk"}),
        lambda d: d["concerns"][1]["roles"].append({"name": "x", "factor": "missing"}),
        lambda d: d["concerns"][1]["checks"][0]["roles"].append("nobody"),
        lambda d: d["concerns"][1]["roles"].append({"name": "fault", "factor": "fix"}),
        lambda d: d["concerns"][0]["descriptors"].append({**d["concerns"][0]["descriptors"][0]}),
        lambda d: d["concerns"][0]["descriptors"][0].update(name="confirm"),
        lambda d: d["concerns"][0].update(name="has:colon"),
        lambda d: d["concerns"][0].update(name="has.dot"),
        lambda d: d["concerns"][0]["detect"].update(
            type="choice", criteria={"a": {"what": "x"}, "b": {"what": "y"}}
        ),
        lambda d: d["concerns"][0]["descriptors"][0]["ask"].update(criteria=["only one"]),
        lambda d: d["concerns"][0]["descriptors"][1]["ask"].update(criteria={"a": {"what": "x"}}),
        lambda d: d["concerns"][0]["confirm"]["criteria"].pop("false"),
        lambda d: d["concerns"][0]["confirm"]["criteria"]["true"].update(extra="no"),
        lambda d: d["concerns"][1].update(roles=[]),
        lambda d: d.update(concerns=[]),
        lambda d: d.update(surprise=1),
    ],
)
def test_invalid_definitions_are_refused(change: Any) -> None:
    with pytest.raises(ValidationError):
        Concerns.model_validate(_broken(change))


@pytest.mark.parametrize(
    "passages",
    [
        [{"id": "q1", "text": "a"}, {"id": "q1", "text": "b"}],
        [{"id": "q.1", "text": "a"}],
        [{"id": "q:1", "text": "a"}],
        [{"id": "q 1", "text": "a"}],
        [{"id": "q1"}],
        [{"id": "q1", "text": 3}],
    ],
)
def test_invalid_sources_are_refused_before_any_request(passages: list[dict[str, Any]]) -> None:
    client = ScriptedClient(answering())
    with pytest.raises(CiteDefinitionError):
        judge({"as": "quotes", "passages": passages}, concerns(screened()), client)
    assert client.requests == []


def test_source_keeps_passage_fields_in_order() -> None:
    s = CiteSource.model_validate(
        {"as": "turns", "passages": [{"id": "t1", "speaker": "agent", "text": "hi"}]}
    )
    assert s.state == {"t1": {"id": "t1", "speaker": "agent", "text": "hi"}}
    assert s.ref("t1") == "`turns.t1.text`"


def test_source_may_inspect_another_field() -> None:
    s = CiteSource.model_validate(
        {"as": "quotes", "field": "quote", "passages": [{"id": "q1", "quote": "x"}]}
    )
    client = ScriptedClient(answering())
    judge(s, concerns(screened()), client)
    inspect = client.requests[0]["questions"]["q1:supports"]["instructions"]["inspect"]
    assert inspect == "`quotes.q1.quote`"


def test_judge_accepts_json_shaped_concerns_and_source() -> None:
    client = ScriptedClient(answering())
    report = judge(
        {"as": "quotes", "passages": [{"id": "q1", "text": "t"}]},
        concerns(screened()).model_dump(),
        client,
    )
    assert report.findings[0].verdict == "holds"


def test_invalid_json_shaped_concerns_are_a_definition_error() -> None:
    with pytest.raises(CiteDefinitionError):
        judge(source("q1"), {"concerns": []}, ScriptedClient(answering()))


def test_placeholders_leave_other_braces_alone() -> None:
    c = concerns(
        ScreenedConcern(
            name="supports",
            detect=noul('Does {passage} match {"json": 1} and {unknown}?'),
            confirm=noul(),
        )
    )
    client = ScriptedClient(answering())
    judge(source("q1"), c, client)
    question = client.requests[0]["questions"]["q1:supports"]["instructions"]["question"]
    assert question == 'Does `quotes.q1.text` match {"json": 1} and {unknown}?'
