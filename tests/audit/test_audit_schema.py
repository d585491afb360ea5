"""schemas/citations.schema.json accepts every report the audit writes, and nothing looser."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from harness.audit import CitationReport, audit_session
from harness.cite import Reply, ScriptedClient
from harness.errors import ModelUnavailable
from harness.session.loader import load_session
from tests.support.audit_builders import quoted, session
from tests.support.paths import FIXTURES

VALIDATOR = Draft202012Validator(
    json.loads((FIXTURES.parent / "schemas" / "citations.schema.json").read_text())
)


def online_with_every_outcome(tmp_path: Path) -> dict[str, Any]:
    def reply(request: dict[str, Any]) -> Reply:
        keys = list(request["questions"])
        if any(k.startswith("confirm:c4") for k in keys):
            raise ModelUnavailable("down")
        return Reply({k: 0.9 if "c1" in k or "c4" in k else 0.5 for k in keys}, model="m")

    claims = [quoted("c1", "Aspirin is used to reduce fever and pain."), quoted("c2", "x")]
    claims += [quoted("c3"), quoted("c4", "It was first made in 1897.", text="Made in 1899.")]
    report = audit_session(
        session(tmp_path, claims), against="quotes", client=ScriptedClient(reply), model="m"
    )
    assert {c.verdict for c in report.claims} == {"supported", "unsupported", "error"}
    return report.to_dict()


def test_reports_validate(tmp_path: Path) -> None:
    document = online_with_every_outcome(tmp_path)
    VALIDATOR.validate(document)
    assert CitationReport.model_validate(document).to_dict() == document  # round-trips
    offline = audit_session(load_session(FIXTURES / "quote-not-in-source"), offline=True)
    VALIDATOR.validate(offline.to_dict())


@pytest.mark.parametrize(
    "spoil",
    [
        lambda d: d.update(extra=1),
        lambda d: d["claims"][0].update(verdict="maybe"),
        lambda d: d["claims"][0].update(note="x"),
        lambda d: d["claims"][2]["problems"][0].update(check="made_up"),
        lambda d: d["claims"][0]["quotes"][0].update(verdict="kept"),
        lambda d: d["totals"]["verdicts"].update(maybe=1),
        lambda d: d["usage"].update(input_tokens=-1),
        lambda d: d.pop("claims"),
    ],
)
def test_schema_refuses_what_the_model_refuses(tmp_path: Path, spoil: Any) -> None:
    document = copy.deepcopy(online_with_every_outcome(tmp_path))
    spoil(document)
    assert not VALIDATOR.is_valid(document)
    with pytest.raises(ValueError):
        CitationReport.model_validate(document)
