"""schemas/: the committed input schemas are exactly the export of the pydantic models."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from harness.session.loader import load_session
from tests.support.paths import FIXTURES, REPO

SCHEMAS = REPO / "schemas"


def _exporter() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "export_schemas", REPO / "scripts" / "export_schemas.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("export_schemas", module)
    spec.loader.exec_module(module)
    return module


EXPORTER = _exporter()
NAMES: list[str] = list(EXPORTER.EXPORTS)


def _load(name: str) -> Any:
    return json.loads((SCHEMAS / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", NAMES)
def test_committed_schema_equals_the_export(name: str) -> None:
    committed = (SCHEMAS / name).read_text(encoding="utf-8")
    assert committed == EXPORTER.render(name), (
        f"schemas/{name} is stale: run `python scripts/export_schemas.py` and commit it"
    )


def test_export_is_deterministic(tmp_path: Path) -> None:
    assert EXPORTER.export(tmp_path) == NAMES  # all written into an empty folder
    first = {n: (tmp_path / n).read_bytes() for n in NAMES}
    assert EXPORTER.export(tmp_path) == []  # a second run changes nothing
    assert {n: (tmp_path / n).read_bytes() for n in NAMES} == first
    assert EXPORTER.export(tmp_path, check=True) == []


def test_check_mode_reports_without_writing(tmp_path: Path) -> None:
    (tmp_path / NAMES[0]).write_text("{}", encoding="utf-8")
    assert EXPORTER.export(tmp_path, check=True) == NAMES
    assert (tmp_path / NAMES[0]).read_text(encoding="utf-8") == "{}"
    assert not (tmp_path / NAMES[1]).exists()


@pytest.mark.parametrize("name", sorted(p.name for p in SCHEMAS.glob("*.schema.json")))
def test_every_schema_is_a_valid_2020_12_schema(name: str) -> None:
    schema = _load(name)
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"]
    assert schema["description"]


# -- the schemas say what the loader says -------------------------------------------------------

DESIGN_FINDING = {
    "id": "sq1",
    "subQuestion": "…",
    "claims": [
        {
            "id": "sq1-c1",
            "text": "…",
            "sourceIds": ["s4"],
            "quotes": [{"sourceId": "s4", "text": "verbatim passage from s4"}],
            "verification": {"votes": [{"verifier": "v1", "verdict": "supported"}]},
        }
    ],
}
DESIGN_SOURCES = {
    "sources": [{"id": "s4", "url": "https://example.org", "title": "…", "tier": "primary"}]
}
DESIGN_TRACE = {"tool": "web_search", "input": {"q": "x"}, "ok": True, "ms": 812}


@pytest.mark.parametrize(
    ("name", "document", "valid"),
    [
        ("finding.schema.json", DESIGN_FINDING, True),
        ("finding.schema.json", {**DESIGN_FINDING, "extra": {"kept": True}}, True),
        ("finding.schema.json", {**DESIGN_FINDING, "claims": {}}, False),
        ("finding.schema.json", {"id": "sq1", "claims": []}, False),
        ("finding.schema.json", {**DESIGN_FINDING, "claims": [{"id": "c", "text": 4}]}, False),
        ("sources.schema.json", DESIGN_SOURCES, True),
        ("sources.schema.json", {"sources": [{"id": "s1", "url": "u", "tier": "top"}]}, False),
        ("sources.schema.json", {"sources": [{"id": "s1"}]}, False),
        ("sources.schema.json", {}, False),
        ("trace-line.schema.json", DESIGN_TRACE, True),
        ("trace-line.schema.json", {"tool": "x", "ms": 1.5, "anything": []}, True),
        ("trace-line.schema.json", {"input": {}}, False),
        ("trace-line.schema.json", {"tool": "x", "ok": "yes"}, False),
    ],
)
def test_schema_on_examples(name: str, document: Any, valid: bool) -> None:
    assert Draft202012Validator(_load(name)).is_valid(document) is valid


def _fixture_findings() -> list[Path]:
    return sorted(FIXTURES.glob("*/findings/*.json")) if FIXTURES.is_dir() else []


@pytest.mark.parametrize(
    "path", _fixture_findings(), ids=lambda p: f"{p.parent.parent.name}/{p.name}"
)
def test_fixture_findings_schema_agrees_with_the_loader(path: Path) -> None:
    session = load_session(path.parent.parent)
    rel = f"findings/{path.name}"
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        # Not JSON at all: nothing for a schema to say; the loader must say so instead.
        assert (rel, "invalid_json") in {(p.file, p.code) for p in session.problems}
        return
    loader_ok = not any(p.file == rel and p.code == "wrong_type" for p in session.problems)
    assert Draft202012Validator(_load("finding.schema.json")).is_valid(document) is loader_ok
