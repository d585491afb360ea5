"""The session loader over bad inputs: every problem listed with file and pointer, never raised."""

from __future__ import annotations

import json
import re
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from harness.errors import UsageError
from harness.session.loader import ENV_ROOT, LoadLimits, LoadProblem, load_session, resolve_session
from tests.support.paths import FIXTURES


def claim(cid: str = "sq1-c1", *sources: str, **extra: Any) -> dict[str, Any]:
    sids = list(sources or ("s1",))
    return {
        "id": cid,
        "text": f"Claim {cid}.",
        "sourceIds": sids,
        "quotes": [{"sourceId": sids[0], "text": "a verbatim passage"}],
        "verification": {"votes": [{"verifier": "v1", "verdict": "supported"}]},
        **extra,
    }


def finding(fid: str = "sq1", *claims: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"id": fid, "subQuestion": f"What about {fid}?", "claims": list(claims), **extra}


def make(
    root: Path,
    findings: dict[str, Any] | None = None,
    sources: Any = None,
    trace: str | bytes | None = None,
    answer: str | None = None,
) -> Path:
    """A session folder; values that are str/bytes are written as is, others as JSON."""
    folder = root / "sess"
    folder.mkdir()
    if findings is not None:
        (folder / "findings").mkdir()
        for name, value in findings.items():
            _write(folder / "findings" / name, value)
    if sources is not None:
        _write(folder / "sources.json", sources)
    if trace is not None:
        _write(folder / "trace.jsonl", trace)
    if answer is not None:
        (folder / "answer.md").write_text(answer, encoding="utf-8")
    return folder


def _write(path: Path, value: Any) -> None:
    if isinstance(value, bytes):
        path.write_bytes(value)
    elif isinstance(value, str):
        path.write_text(value, encoding="utf-8")
    else:
        path.write_text(json.dumps(value), encoding="utf-8")


SOURCES = {"sources": [{"id": "s1", "url": "https://example.org/1", "tier": "primary"}]}


def where(problems: list[LoadProblem]) -> list[tuple[str, str, str]]:
    return [(p.file, p.pointer, p.code) for p in problems]


# -- findings/ ----------------------------------------------------------------------


def test_clean_session_has_no_problem(tmp_path: Path) -> None:
    folder = make(tmp_path, {"sq1.json": finding("sq1", claim())}, SOURCES, answer="A [s1].")
    session = load_session(folder)
    assert session.problems == []
    assert session.session_id == "sess"
    assert [c.id for _, c in session.claims] == ["sq1-c1"]
    assert session.summary() == {
        "findings": 1,
        "claims": 1,
        "quotes": 1,
        "sources": 1,
        "sourcesJson": True,
        "snapshots": 0,
        "answer": True,
        "trace": False,
        "traceCalls": 0,
        "problems": 0,
    }


def test_session_id_override(tmp_path: Path) -> None:
    assert load_session(make(tmp_path, {}), session_id="abc").session_id == "abc"


def test_missing_findings_folder(tmp_path: Path) -> None:
    session = load_session(make(tmp_path, None, SOURCES))
    assert where(session.problems) == [("findings/", "", "missing_findings")]
    assert "Unknown" in session.problems[0].reason
    assert session.findings == []


def test_findings_is_a_file(tmp_path: Path) -> None:
    folder = make(tmp_path)
    (folder / "findings").write_text("not a folder")
    assert where(load_session(folder).problems) == [("findings/", "", "missing_findings")]


def test_empty_findings_folder(tmp_path: Path) -> None:
    folder = make(tmp_path, {".gitkeep": "", "notes.txt": "x", "sq1.json.bak": "{}"})
    session = load_session(folder)
    assert where(session.problems) == [("findings/", "", "empty_findings")]


def test_nonexistent_session_folder(tmp_path: Path) -> None:
    session = load_session(tmp_path / "nope")
    assert where(session.problems) == [("findings/", "", "missing_findings")]


@pytest.mark.parametrize(
    ("content", "code", "reason"),
    [
        pytest.param(b'{"id": "caf\xe9"}', "not_utf8", "bad byte at offset 11", id="latin-1"),
        pytest.param(b"\x00\x01\x02\xff", "not_utf8", "offset 3", id="binary"),
        pytest.param("{", "invalid_json", "invalid JSON", id="truncated"),
        pytest.param('{"id": "sq1",}', "invalid_json", "line 1 column 14", id="trailing-comma"),
        pytest.param("", "invalid_json", "empty text", id="empty-file"),
        pytest.param("{} {}", "invalid_json", "more data after the JSON value", id="two-values"),
        pytest.param("[" * 100_000 + "]" * 100_000, "too_deep", "too deep", id="deep-100000"),
        pytest.param("[]", "wrong_type", "must be a JSON object; found an empty array", id="array"),
        pytest.param('"sq1"', "wrong_type", 'must be a JSON object; found "sq1"', id="string"),
        pytest.param("null", "wrong_type", "found null", id="null"),
    ],
)
def test_unusable_finding_file(tmp_path: Path, content: Any, code: str, reason: str) -> None:
    good = finding("sq1", claim())
    session = load_session(make(tmp_path, {"sq1.json": good, "sq2.json": content}, SOURCES))
    assert where(session.problems) == [("findings/sq2.json", "", code)]
    assert reason in session.problems[0].reason
    assert [f.id for f in session.findings] == ["sq1"]  # the neighbour is still read


def test_finding_path_is_a_directory(tmp_path: Path) -> None:
    folder = make(tmp_path, {"sq1.json": finding("sq1", claim())}, SOURCES)
    (folder / "findings" / "x.json").mkdir()
    session = load_session(folder)
    assert where(session.problems) == [("findings/x.json", "", "unreadable")]
    assert "is a directory" in session.problems[0].reason
    assert len(session.findings) == 1


def test_finding_is_a_dangling_symlink(tmp_path: Path) -> None:
    folder = make(tmp_path, {"sq1.json": finding("sq1", claim())}, SOURCES)
    (folder / "findings" / "x.json").symlink_to(tmp_path / "gone.json")
    session = load_session(folder)
    assert where(session.problems) == [("findings/x.json", "", "unreadable")]
    assert "symbolic link" in session.problems[0].reason


def test_byte_order_mark_is_accepted_in_inputs(tmp_path: Path) -> None:
    text = "\ufeff" + json.dumps(finding("sq1", claim()))
    session = load_session(make(tmp_path, {"sq1.json": text}, SOURCES))
    assert session.problems == []


def test_duplicate_keys_and_nan_are_listed_but_the_finding_loads(tmp_path: Path) -> None:
    text = '{"id": "sq1", "id": "sq1", "subQuestion": "q", "claims": [], "score": NaN, "ms": 1.5}'
    session = load_session(make(tmp_path, {"sq1.json": text}))
    assert where(session.problems) == [
        ("findings/sq1.json", "/id", "duplicate_key"),
        ("findings/sq1.json", "/score", "value"),
    ]
    assert [f.id for f in session.findings] == ["sq1"]


# -- wrong types, with exact pointers --------------------------------------------------

WRONG_TYPES: dict[str, tuple[Any, list[tuple[str, str]], list[str]]] = {
    # name: (finding document, [(pointer, phrase of the reason)], claim ids that still load)
    "claims-not-a-list": (
        {"id": "sq1", "subQuestion": "q", "claims": {"sq1-c1": claim()}},
        [("/claims", "input should be a valid list; found")],
        [],
    ),
    "claims-null": (
        {"id": "sq1", "subQuestion": "q", "claims": None},
        [("/claims", "valid list; found null")],
        [],
    ),
    "text-a-number": (
        finding("sq1", {**claim("sq1-c1"), "text": 42}, claim("sq1-c2")),
        [("/claims/0/text", "valid string; found 42")],
        ["sq1-c2"],
    ),
    "sourceIds-a-string": (
        finding("sq1", {**claim("sq1-c1"), "sourceIds": "s1"}),
        [("/claims/0/sourceIds", 'valid list; found "s1"')],
        ["sq1-c1"],
    ),
    "sourceId-item-a-number": (
        finding("sq1", {**claim("sq1-c1"), "sourceIds": ["s1", 7]}),
        [("/claims/0/sourceIds/1", "valid string; found 7")],
        ["sq1-c1"],
    ),
    "vote-verdict-a-number": (
        finding("sq1", claim("sq1-c1", verification={"votes": [{"verdict": 3}]})),
        [("/claims/0/verification/votes/0/verdict", "valid string; found 3")],
        ["sq1-c1"],
    ),
    "votes-not-a-list": (
        finding("sq1", claim("sq1-c1", verification={"votes": "yes"})),
        [("/claims/0/verification/votes", 'valid list; found "yes"')],
        ["sq1-c1"],
    ),
    "quote-source-empty": (
        finding("sq1", {**claim("sq1-c1"), "quotes": [{"sourceId": "", "text": "x"}]}),
        [("/claims/0/quotes/0/sourceId", "at least 1 character")],
        ["sq1-c1"],
    ),
    "quote-text-missing": (
        finding("sq1", {**claim("sq1-c1"), "quotes": [{"sourceId": "s1"}]}),
        [("/claims/0/quotes/0/text", "required field is missing")],
        ["sq1-c1"],
    ),
    "claim-id-missing": (
        finding("sq1", {"text": "t", "sourceIds": ["s1"]}),
        [("/claims/0/id", "required field is missing")],
        [],
    ),
    "claim-id-a-number": (
        finding("sq1", {**claim("x"), "id": 5}),
        [("/claims/0/id", "valid string; found 5")],
        [],
    ),
    "claim-not-an-object": (
        finding("sq1", "sq1-c1 is true", claim("sq1-c2")),  # type: ignore[arg-type]
        [("/claims/0", "valid dictionary")],
        ["sq1-c2"],
    ),
    "finding-id-a-number": (
        {"id": 1, "subQuestion": "q", "claims": [claim()]},
        [("/id", "valid string; found 1")],
        ["sq1-c1"],
    ),
    "subQuestion-missing": (
        {"id": "sq1", "claims": [claim()]},
        [("/subQuestion", "required field is missing")],
        ["sq1-c1"],
    ),
    "several-in-one-file": (
        finding(
            "sq1",
            {**claim("sq1-c1"), "text": None},
            {**claim("sq1-c2"), "sourceIds": "s1"},
            claim("sq1-c3", verification={"votes": [{"verdict": False}]}),
        ),
        [
            ("/claims/0/text", "found null"),
            ("/claims/1/sourceIds", 'found "s1"'),
            ("/claims/2/verification/votes/0/verdict", "found false"),
        ],
        ["sq1-c2", "sq1-c3"],
    ),
}


@pytest.mark.parametrize(("doc", "expected", "loaded"), WRONG_TYPES.values(), ids=WRONG_TYPES)
def test_wrong_types(
    tmp_path: Path, doc: Any, expected: list[tuple[str, str]], loaded: list[str]
) -> None:
    session = load_session(make(tmp_path, {"sq1.json": doc}, SOURCES))
    assert where(session.problems) == [("findings/sq1.json", p, "wrong_type") for p, _ in expected]
    for problem, (_, phrase) in zip(session.problems, expected, strict=True):
        assert phrase in problem.reason, problem.reason
    assert len(session.findings) == 1  # the finding itself is kept
    assert [c.id for _, c in session.claims] == loaded


def test_broken_optional_parts_are_dropped_not_the_claim(tmp_path: Path) -> None:
    doc = finding("sq1", {**claim("sq1-c1"), "sourceIds": "s1", "verification": 3})
    session = load_session(make(tmp_path, {"sq1.json": doc}, SOURCES))
    ((_, kept),) = session.claims
    assert kept.sourceIds == []
    assert kept.verification is None
    assert [q.sourceId for q in kept.quotes] == ["s1"]


def test_finding_id_falls_back_to_the_file_name(tmp_path: Path) -> None:
    doc = {"id": "", "subQuestion": 3, "claims": [claim()]}
    session = load_session(make(tmp_path, {"sq7.json": doc}, SOURCES))
    assert [(f.id, f.subQuestion) for f in session.findings] == [("sq7", "")]


# -- cross-file checks ------------------------------------------------------------------


def test_duplicate_claim_ids_across_files(tmp_path: Path) -> None:
    files = {
        "sq1.json": finding("sq1", claim("c1"), claim("c2")),
        "sq2.json": finding("sq2", claim("c3"), claim("c1")),
    }
    session = load_session(make(tmp_path, files, SOURCES))
    assert where(session.problems) == [("findings/sq2.json", "/claims/1/id", "duplicate_claim_id")]
    assert "'c1'" in session.problems[0].reason
    assert "findings/sq1.json" in session.problems[0].reason


def test_duplicate_claim_ids_in_one_file(tmp_path: Path) -> None:
    session = load_session(make(tmp_path, {"a.json": finding("a", claim("c"), claim("c"))}))
    assert where(session.problems) == [("findings/a.json", "/claims/1/id", "duplicate_claim_id")]


def test_duplicate_finding_ids_blame_each_file(tmp_path: Path) -> None:
    files = {
        "a.json": finding("sq1", claim("c1")),
        "b.json": finding("sq1", claim("c1", "s9")),
    }
    session = load_session(make(tmp_path, files, SOURCES))
    assert where(session.problems) == [
        ("findings/b.json", "/id", "duplicate_finding_id"),
        ("findings/b.json", "/claims/0/id", "duplicate_claim_id"),
        ("findings/b.json", "/claims/0/sourceIds/0", "dangling_source"),
        ("findings/b.json", "/claims/0/quotes/0/sourceId", "dangling_source"),
    ]
    assert session.finding_paths == ["findings/a.json", "findings/b.json"]


def test_dangling_sources_point_at_the_index(tmp_path: Path) -> None:
    doc = finding("sq1", claim("c1", "s1", "s404"), claim("c2", "s405"))
    session = load_session(make(tmp_path, {"sq1.json": doc}, SOURCES))
    assert where(session.problems) == [
        ("findings/sq1.json", "/claims/0/sourceIds/1", "dangling_source"),
        ("findings/sq1.json", "/claims/1/sourceIds/0", "dangling_source"),
        ("findings/sq1.json", "/claims/1/quotes/0/sourceId", "dangling_source"),
    ]
    assert "'s404'" in session.problems[0].reason
    assert "not in sources.json" in session.problems[0].reason


def test_pointers_stay_right_after_a_skipped_claim(tmp_path: Path) -> None:
    doc = finding("sq1", {"id": 1}, {**claim("c2"), "text": 2}, claim("c3", "s404"))
    session = load_session(make(tmp_path, {"sq1.json": doc}, SOURCES))
    dangling = [p.pointer for p in session.problems if p.code == "dangling_source"]
    assert dangling == ["/claims/2/sourceIds/0", "/claims/2/quotes/0/sourceId"]
    ((_, kept),) = session.claims
    assert session.claim_position(kept) == 2
    assert session.claim_pointer(kept) == "/claims/2"


def test_no_sources_json_takes_ids_from_findings(tmp_path: Path) -> None:
    doc = finding("sq1", claim("c1", "s1", "s2"), claim("c2", "s3"))
    session = load_session(make(tmp_path, {"sq1.json": doc}))
    assert session.problems == []
    assert session.sources is None
    assert session.source_ids == {"s1", "s2", "s3"}
    assert session.summary()["sourcesJson"] is False


@pytest.mark.parametrize(
    ("sources", "expected"),
    [
        pytest.param("{", [("", "invalid_json")], id="invalid-json"),
        pytest.param(b"\xff\xfe", [("", "not_utf8")], id="not-utf8"),
        pytest.param([SOURCES], [("", "wrong_type")], id="top-level-array"),
        pytest.param({"sources": {"s1": {}}}, [("/sources", "wrong_type")], id="sources-object"),
        pytest.param({"items": []}, [("/sources", "wrong_type")], id="sources-missing"),
    ],
)
def test_unusable_sources_json_counts_as_absent(
    tmp_path: Path, sources: Any, expected: list[tuple[str, str]]
) -> None:
    doc = finding("sq1", claim("c1", "s1"))
    session = load_session(make(tmp_path, {"sq1.json": doc}, sources))
    assert [(p.file, p.pointer, p.code) for p in session.problems] == [
        ("sources.json", pointer, code) for pointer, code in expected
    ]
    # Not every citation turned "dangling": the source set falls back to the findings.
    assert session.sources is None
    assert session.source_ids == {"s1"}


def test_sources_json_entries(tmp_path: Path) -> None:
    sources = {
        "sources": [
            {"id": "s1", "url": "https://a.example/1", "tier": "primary", "fetchedAt": "2026"},
            {"id": "s2"},
            {"id": "s3", "url": "https://a.example/3", "tier": "top"},
            {"id": "s1", "url": "https://a.example/dup"},
            "s4",
        ],
        "generatedBy": "pipeline",
    }
    doc = finding("sq1", claim("c1", "s1", "s2", "s3", "s5"))
    session = load_session(make(tmp_path, {"sq1.json": doc}, sources))
    assert where(session.problems) == [
        ("sources.json", "/sources/1/url", "wrong_type"),
        ("sources.json", "/sources/2/tier", "wrong_type"),
        ("sources.json", "/sources/3/id", "duplicate_source_id"),
        ("sources.json", "/sources/4", "wrong_type"),
        # s2 and s3 are listed (with a bad field); only s5 is really missing.
        ("findings/sq1.json", "/claims/0/sourceIds/3", "dangling_source"),
    ]
    assert [s.id for s in session.sources or []] == ["s1"]
    assert session.source_urls() == {"s1": "https://a.example/1"}
    assert session.sources is not None
    assert session.sources[0].model_extra == {"fetchedAt": "2026"}


def test_sources_json_dangling_symlink_is_reported(tmp_path: Path) -> None:
    folder = make(tmp_path, {"sq1.json": finding("sq1", claim())})
    (folder / "sources.json").symlink_to(tmp_path / "nowhere.json")
    session = load_session(folder)
    assert where(session.problems) == [("sources.json", "", "unreadable")]
    assert session.sources is None


# -- trace.jsonl ----------------------------------------------------------------------


def test_trace_with_bad_lines(tmp_path: Path) -> None:
    lines = [
        json.dumps({"tool": "web_search", "input": {"q": "x"}, "ok": True, "ms": 812}),
        "{not json",
        "",
        "[1, 2]",
        json.dumps({"input": {}}),
        json.dumps({"tool": "web_fetch", "ok": False, "ms": 12.5, "extra": 1}),
        json.dumps({"tool": 3}),
        '{"tool": "web_fetch", "ok": "yes"}',
        "\xff",
    ]
    blob = "\n".join(lines).encode("utf-8").replace("\xff".encode(), b"\xff")
    session = load_session(make(tmp_path, {"sq1.json": finding("sq1", claim())}, trace=blob))
    assert where(session.problems) == [
        ("trace.jsonl:2", "", "invalid_json"),
        ("trace.jsonl:4", "", "wrong_type"),
        ("trace.jsonl:5", "/tool", "wrong_type"),
        ("trace.jsonl:7", "/tool", "wrong_type"),
        ("trace.jsonl:8", "/ok", "wrong_type"),
        ("trace.jsonl:9", "", "invalid_json"),
    ]
    assert session.trace is not None
    assert (session.trace.calls, session.trace.failed) == (2, 1)
    assert session.trace.tools == {"web_search": 1, "web_fetch": 1}
    assert not session.trace.truncated


def test_trace_too_deep_line(tmp_path: Path) -> None:
    trace = "[" * 100_000 + "]" * 100_000 + "\n" + json.dumps({"tool": "t"}) + "\n"
    session = load_session(make(tmp_path, {}, trace=trace))
    assert [(p.file, p.code) for p in session.problems if p.file.startswith("trace")] == [
        ("trace.jsonl:1", "invalid_json")
    ]
    assert session.trace is not None and session.trace.calls == 1


def test_trace_line_cap(tmp_path: Path) -> None:
    trace = "".join(json.dumps({"tool": f"t{i}"}) + "\n" for i in range(10))
    folder = make(tmp_path, {}, trace=trace)
    session = load_session(folder, limits=LoadLimits(trace_lines=4))
    assert ("trace.jsonl", "", "too_large") in where(session.problems)
    assert session.trace is not None
    assert (session.trace.calls, session.trace.truncated) == (4, True)


def test_trace_directory(tmp_path: Path) -> None:
    folder = make(tmp_path, {})
    (folder / "trace.jsonl").mkdir()
    assert ("trace.jsonl", "", "unreadable") in where(load_session(folder).problems)


# -- caps: a problem, not a load, and memory stays bounded ---------------------------------

MiB = 1024 * 1024


def _peak_while(action: Any) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        result = action()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


def test_huge_finding_file_is_capped(tmp_path: Path) -> None:
    folder = make(tmp_path, {"sq1.json": finding("sq1", claim())})
    with (folder / "findings" / "sq2.json").open("wb") as handle:
        handle.truncate(64 * MiB)  # sparse: 64 MiB on paper, no disk used
    session, peak = _peak_while(
        lambda: load_session(folder, limits=LoadLimits(file_bytes=64 * 1024))
    )
    assert where(session.problems) == [("findings/sq2.json", "", "too_large")]
    assert "65,536-byte cap; not loaded" in session.problems[0].reason
    assert [f.id for f in session.findings] == ["sq1"]
    assert peak < 4 * MiB, peak


def test_huge_sources_json_is_capped(tmp_path: Path) -> None:
    folder = make(tmp_path, {"sq1.json": finding("sq1", claim())})
    with (folder / "sources.json").open("wb") as handle:
        handle.truncate(64 * MiB)
    session, peak = _peak_while(lambda: load_session(folder, limits=LoadLimits(file_bytes=4096)))
    assert where(session.problems) == [("sources.json", "", "too_large")]
    assert session.sources is None
    assert peak < 4 * MiB, peak


def test_one_endless_trace_line_is_capped(tmp_path: Path) -> None:
    folder = make(tmp_path, {})
    with (folder / "trace.jsonl").open("wb") as handle:
        handle.write(b'{"tool": "x", "pad": "')
        handle.truncate(64 * MiB)  # one line, no newline, 64 MiB long
    limits = LoadLimits(trace_bytes=64 * 1024)
    session, peak = _peak_while(lambda: load_session(folder, limits=limits))
    assert ("trace.jsonl", "", "too_large") in where(session.problems)
    assert session.trace is not None and session.trace.truncated
    assert peak < 4 * MiB, peak


def test_finding_file_count_cap(tmp_path: Path) -> None:
    files = {f"sq{i}.json": finding(f"sq{i}", claim(f"c{i}")) for i in range(1, 8)}
    session = load_session(make(tmp_path, files, SOURCES), limits=LoadLimits(finding_files=3))
    assert where(session.problems) == [("findings/", "", "too_large")]
    assert [f.id for f in session.findings] == ["sq1", "sq2", "sq3"]  # natural order


# -- what is kept --------------------------------------------------------------------------


def test_unknown_fields_are_kept(tmp_path: Path) -> None:
    doc = finding(
        "sq1",
        claim("c1", confidence=0.8, verification={"votes": [], "method": "x"}),
        question="Q?",
        origin={"dataset": "d"},
    )
    session = load_session(make(tmp_path, {"sq1.json": doc}, SOURCES))
    assert session.problems == []
    ((found, kept),) = session.claims
    assert found.model_extra == {"question": "Q?", "origin": {"dataset": "d"}}
    assert kept.model_extra == {"confidence": 0.8}
    assert kept.verification is not None
    assert kept.verification.model_extra == {"method": "x"}


def test_snapshots_and_answer(tmp_path: Path) -> None:
    folder = make(tmp_path, {"sq1.json": finding("sq1", claim())}, SOURCES, answer="Answer.\n")
    (folder / "sources").mkdir()
    (folder / "sources" / "s1.txt").write_text("text")
    (folder / "sources" / "s1.html").write_text("<p>text</p>")  # .txt is preferred
    (folder / "sources" / "sub").mkdir()
    session = load_session(folder)
    assert session.snapshots == {"s1": folder.resolve() / "sources" / "s1.txt"}
    [ambiguous] = [p for p in session.problems if p.code == "ambiguous_snapshot"]
    assert ambiguous.file == "sources/s1.txt" and "sources/s1.html" in ambiguous.reason
    assert session.answer_bytes == len("Answer.\n")


def test_everything_broken_at_once_never_raises(tmp_path: Path) -> None:
    folder = make(
        tmp_path,
        {
            "a.json": b"\xff",
            "b.json": "[" * 50_000,
            "c.json": "null",
            "d.json": {"claims": [None, 1, "x", [], {}]},
            "e.json": {"id": [], "subQuestion": {}, "claims": [{"id": "", "text": []}]},
        },
        sources='{"sources": [NaN, {"id": 1}]}',
        trace=b"\x00\n{]\n" * 3,
        answer="",
    )
    (folder / "findings" / "f.json").mkdir()
    (folder / "sources").write_text("a file, not a folder")
    session = load_session(folder)
    assert session.problems
    codes = Counter(p.code for p in session.problems)
    assert codes["wrong_type"] >= 5
    assert {"not_utf8", "unreadable", "invalid_json"} <= set(codes)
    assert all(p.file and p.reason for p in session.problems)
    session.summary()  # the report path does not trip either


# -- resolve_session -----------------------------------------------------------------------


@pytest.fixture
def roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.delenv(ENV_ROOT, raising=False)
    made = {}
    for name in ("root", "env", "cwd"):
        (tmp_path / name / "s1").mkdir(parents=True)
        made[name] = tmp_path / name
    monkeypatch.chdir(made["cwd"])
    return made


def test_resolve_path(roots: dict[str, Path]) -> None:
    target = roots["root"] / "s1"
    assert resolve_session(str(target)) == target.resolve()
    assert resolve_session("../root/s1") == target.resolve()
    assert resolve_session(str(target), root=roots["env"]) == target.resolve()


def test_resolve_id_under_root(roots: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    (roots["root"] / "only-in-root").mkdir()
    monkeypatch.setenv(ENV_ROOT, str(roots["env"]))
    assert (
        resolve_session("only-in-root", root=roots["root"])
        == (roots["root"] / "only-in-root").resolve()
    )


def test_resolve_id_under_env(roots: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    (roots["env"] / "only-in-env").mkdir()
    monkeypatch.setenv(ENV_ROOT, str(roots["env"]))
    assert resolve_session("only-in-env") == (roots["env"] / "only-in-env").resolve()


def test_resolve_id_under_cwd(roots: dict[str, Path]) -> None:
    assert resolve_session("s1") == (roots["cwd"] / "s1").resolve()


def test_a_folder_in_cwd_wins_over_root(roots: dict[str, Path]) -> None:
    # SESSION is a path first: ./s1 exists, so --root is not consulted.
    assert resolve_session("s1", root=roots["root"]) == (roots["cwd"] / "s1").resolve()


@pytest.mark.parametrize(
    ("use", "named"),
    [("root", "--root"), ("env", f"${ENV_ROOT}"), ("cwd", "the current folder")],
)
def test_resolve_not_found_names_what_was_tried(
    roots: dict[str, Path], monkeypatch: pytest.MonkeyPatch, use: str, named: str
) -> None:
    root = roots["root"] if use == "root" else None
    if use == "env":
        monkeypatch.setenv(ENV_ROOT, str(roots["env"]))
    with pytest.raises(UsageError) as info:
        resolve_session("missing-id", root=root)
    message = str(info.value)
    assert "'missing-id'" in message
    assert named in message
    assert str(roots[use]) in message
    assert info.value.exit_code == 2


def test_resolve_a_file_is_not_a_session(roots: dict[str, Path]) -> None:
    (roots["cwd"] / "notes.txt").write_text("x")
    with pytest.raises(UsageError, match=r"notes\.txt is not a directory"):
        resolve_session("notes.txt")


def test_resolve_a_path_with_a_slash_is_not_an_id(roots: dict[str, Path]) -> None:
    (roots["root"] / "a" / "b").mkdir(parents=True)
    with pytest.raises(UsageError):
        resolve_session("a/b", root=roots["root"])


# -- the fixture sessions ----------------------------------------------------------------

SESSIONS = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()) if FIXTURES.is_dir() else []
INDEX: dict[str, Any] = (
    json.loads((FIXTURES / "index.json").read_text(encoding="utf-8"))
    if (FIXTURES / "index.json").is_file()
    else {}
)
# The loader's problem codes and the fixture index's kinds, for what the loader checks.
KIND = {
    "invalid_json": "invalid_json",
    "wrong_type": "wrong_type",
    "missing_findings": "no_findings",
    "empty_findings": "no_findings",
    "duplicate_claim_id": "duplicate_claim_id",
    "dangling_source": "dangling_source_id",
}


def test_fixture_sessions_exist() -> None:
    assert SESSIONS, f"no fixture sessions under {FIXTURES}"


@pytest.mark.parametrize("name", SESSIONS)
def test_fixture_session_loads(name: str) -> None:
    session = load_session(FIXTURES / name)
    assert session.session_id == name
    session.summary()
    expect = INDEX.get(name, {}).get("expect")
    if expect is None:
        return

    # The loader's problems, in the index's terms (claim-level kinds compared by claim).
    def ours(p: LoadProblem) -> tuple[str, ...]:
        kind = KIND[p.code]
        if kind == "duplicate_claim_id":
            return (kind, re.search(r"'([^']*)'", p.reason).group(1))  # type: ignore[union-attr]
        if kind == "dangling_source_id":
            return (kind, p.file, "/".join(p.pointer.split("/")[:3]))
        if kind == "no_findings":
            return (kind, p.file)
        return (kind, p.file, p.pointer)

    def theirs(p: dict[str, Any]) -> tuple[str, ...]:
        if p["kind"] == "duplicate_claim_id":
            return (p["kind"], p["claimId"])
        if p["kind"] == "no_findings":
            return (p["kind"], p["file"])
        return (p["kind"], p["file"], p["pointer"])

    loader_kinds = set(KIND.values())
    got = {ours(p) for p in session.problems if p.code in KIND}
    want = {
        theirs(p)
        for p in expect["problems"]
        if p["kind"] in loader_kinds and p["file"] != "answer.md"  # answer.md is the audit's
    }
    assert got == want
    assert {p.code for p in session.problems} <= set(KIND), session.problems

    files = expect["files"]
    summary = session.summary()
    assert summary["answer"] is files["answer"]
    assert summary["trace"] is files["trace"]
    assert summary["snapshots"] == files["snapshots"]
    assert summary["sourcesJson"] is files["sourcesJson"]
    assert len(session.findings) == expect["findings"]
    if expect["sources"] is not None:
        assert summary["sources"] == expect["sources"]
    if "trace" in expect and session.trace is not None:
        assert session.trace.calls == expect["trace"]["calls"]
        assert session.trace.failed == expect["trace"]["failed"]

    # Claims: all of them, except those whose id or text is unusable.
    skipped = {
        (p.file, p.pointer.split("/")[2])
        for p in session.problems
        if p.code == "wrong_type" and re.fullmatch(r"/claims/\d+(/id|/text)?", p.pointer)
    }
    expected_ids = list(expect["claimIds"])
    for file, index in skipped:
        raw = json.loads((FIXTURES / name / file).read_text(encoding="utf-8"))
        expected_ids.remove(raw["claims"][int(index)]["id"])
    assert [c.id for _, c in session.claims] == expected_ids
    if not any(p.code == "wrong_type" for p in session.problems):
        assert session.cited_source_ids() == set(expect["citedSourceIds"])


@pytest.mark.parametrize("arg", ["", "  "])
def test_resolve_empty_is_an_error_not_the_cwd(roots: dict[str, Path], arg: str) -> None:
    with pytest.raises(UsageError, match="SESSION is empty"):
        resolve_session(arg, root=roots["root"])


def test_snapshot_linking_outside_the_session_is_ignored(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("top secret")
    folder = tmp_path / "sess"
    (folder / "findings").mkdir(parents=True)
    (folder / "sources").mkdir()
    (folder / "sources" / "s1.txt").symlink_to(outside)
    (folder / "sources" / "s2.txt").write_text("fine")
    session = load_session(folder)
    assert set(session.snapshots) == {"s2"}
    assert any(p.code == "outside_session" and p.file == "sources/s1.txt" for p in session.problems)
