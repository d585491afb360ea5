"""`--against sources`: claims judged against their cited sources' passages."""

from __future__ import annotations

import itertools
import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from harness.audit import audit_session, expectation, judge_summary
from harness.audit.grounded import concern_names
from harness.cite import RecordingCiteClient, ScriptedClient
from harness.cli.main import cli
from harness.model.cite_prompt import compact, expand, user_message
from harness.session.loader import load_session
from harness.text.document import to_document
from tests.support.audit_builders import quoted

REPO = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((REPO / "schemas" / "citations.schema.json").read_text())

# Paragraphs long enough (over half of MAX_CHARS) to be one passage each.
TAIL = " Officials noted all of this at length in yearly reports, with tables, maps, notes."
TAIL += " Copies went to every district office of the region." + " They were kept in the archive."
DOC = "\n\n".join(
    [
        "The Volta dam was completed in 1965. It flooded a large area of the valley." + TAIL,
        "Cocoa exports from Ghana rose sharply during the decade that followed." + TAIL,
        "Fishing communities moved to new towns along the shore of the lake." + TAIL,
        "Aluminium smelting took most of the dam's electricity for many years." + TAIL,
    ]
)
PLAIN = to_document(DOC.encode(), name="sources/s1.txt").plain  # what offsets point into


def write(folder: Path, claims: list[dict[str, Any]], docs: dict[str, str]) -> Path:
    (folder / "findings").mkdir(parents=True)
    (folder / "sources").mkdir()
    finding = {"id": "sq1", "subQuestion": "q", "claims": claims}
    (folder / "findings" / "sq1.json").write_text(json.dumps(finding), encoding="utf-8")
    ids = sorted({s for c in claims for s in c["sourceIds"]} | set(docs))
    listed = {"sources": [{"id": s, "url": f"https://example.org/{s}"} for s in ids]}
    (folder / "sources.json").write_text(json.dumps(listed), encoding="utf-8")
    for sid, text in docs.items():
        (folder / "sources" / f"{sid}.txt").write_text(text, encoding="utf-8")
    return folder


def claim(cid: str, text: str, *quotes: str, source: str = "s1") -> dict[str, Any]:
    return {
        "id": cid,
        "text": text,
        "sourceIds": [source],
        "quotes": [{"sourceId": source, "text": q} for q in quotes],
    }


class Model:
    """Answers by word overlap: a passage supports a claim when it shares `needed` words."""

    def __init__(self, claims: dict[str, str], needed: int = 3) -> None:
        self.names = dict(zip(concern_names(claims), claims.values(), strict=True))
        self.needed = needed
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def _p(self, claim: str, text: str) -> float:
        shared = set(re.findall(r"\w+", claim.lower())) & set(re.findall(r"\w+", text.lower()))
        return 0.92 if len({w for w in shared if len(w) > 3}) >= self.needed else 0.05

    def __call__(self, request: dict[str, Any]) -> dict[str, object]:
        with self._lock:
            self.requests.append(request)
        state = request["state"]["passages"]
        # Round 2 is one request per claim: `confirm:<id>` and the descriptor `c-<claim>`.
        name = next((k for k in request["questions"] if k in self.names), None)
        answers: dict[str, object] = {}
        for key in request["questions"]:
            if key in self.names:
                answers[key] = 0.9
            elif key.startswith("confirm:"):
                assert name is not None
                answers[key] = self._p(self.names[name], state[key[8:]]["text"])
            else:
                pid, concern = key.split(":")
                answers[key] = self._p(self.names[concern], state[pid]["text"])
        return answers


def test_all_claims_of_a_source_are_screened_in_the_same_windows(tmp_path: Path) -> None:
    texts = {
        "c1": "The Volta dam was completed in 1965.",
        "c2": "Cocoa exports from Ghana rose sharply.",
        "c3": "Fishing communities moved to new towns.",
        "c4": "Aluminium smelting took the dam's electricity.",
        "c5": "Wheat yields in Kansas doubled.",
    }
    claims = [claim(cid, text) for cid, text in texts.items()]
    model = Model(texts)
    session = load_session(write(tmp_path / "s", claims, {"s1": DOC}))
    report = audit_session(session, client=ScriptedClient(model), against="sources")

    screens = [r for r in model.requests if not any("confirm:" in k for k in r["questions"])]
    assert len(screens) == 1  # one window of four passages, for all five claims
    (screen,) = screens
    assert len(screen["state"]["passages"]) == 4
    assert len(screen["questions"]) == 4 * 5
    assert {k.rsplit(":", 1)[1] for k in screen["questions"]} == set(concern_names(texts))
    # The document's text is in the request once, however many claims cite it.
    assert user_message(screen).count("during the decade that followed") == 1
    # Round 2: one request per claim that matched (c5 matched nothing), each holding that
    # claim's questions and the passages it gathered, nothing of another claim's.
    assert report.totals.requests == len(model.requests) == 1 + 4
    confirms = [r for r in model.requests if r is not screen]
    assert sorted(n for r in confirms for n in r["questions"] if n in model.names) == [
        "c-c1",
        "c-c2",
        "c-c3",
        "c-c4",
    ]
    for confirm in confirms:
        assert sum(1 for k in confirm["questions"] if k in model.names) == 1
        assert sorted(confirm["state"]["passages"]) == sorted(
            k.removeprefix("confirm:") for k in confirm["questions"] if k.startswith("confirm:")
        )

    verdicts = {c.claimId: c.verdict for c in report.claims}
    assert verdicts == {
        "c1": "supported",
        "c2": "supported",
        "c3": "supported",
        "c4": "supported",
        "c5": "unsupported",
    }
    by_id = {c.claimId: c for c in report.claims}
    assert [p.passageId for p in by_id["c2"].passages] == ["s1:p2"]
    # Offsets are into the source's plain text (the text pipeline's, one paragraph a line).
    plain = to_document(DOC.encode(), name="sources/s1.txt").plain
    for c in report.claims:
        assert c.against == "sources"
        for p in c.passages:
            assert plain[p.start : p.end] == p.text  # offsets into the source's text
    assert by_id["c1"].passages[0].verdict == "holds"
    assert [p.check for p in by_id["c5"].problems] == ["no_quote", "source_does_not_support"]
    assert by_id["c5"].passages == [] and by_id["c5"].quoteOverlap == "no_quote"
    assert report.totals.checks.source_does_not_support == 1
    Draft202012Validator(SCHEMA).validate(report.to_dict())


def test_quote_overlap(tmp_path: Path) -> None:
    texts = {
        "within": "The Volta dam was completed in 1965.",
        "apart": "Cocoa exports from Ghana rose sharply.",
        "unlocated": "Fishing communities moved to new towns.",
    }
    claims = [
        claim("within", texts["within"], "The Volta dam was completed in 1965."),
        claim("apart", texts["apart"], "Aluminium smelting took most of the dam's electricity"),
        claim("unlocated", texts["unlocated"], "Nothing like this is in the source."),
    ]
    session = load_session(write(tmp_path / "s", claims, {"s1": DOC}))
    report = audit_session(session, client=ScriptedClient(Model(texts)), against="sources")
    overlap = {c.claimId: c.quoteOverlap for c in report.claims}
    assert overlap == {"within": "within", "apart": "apart", "unlocated": "unlocated"}
    # A fabricated quote is still caught by the deterministic check, whatever the source says.
    unlocated = next(c for c in report.claims if c.claimId == "unlocated")
    assert [p.check for p in unlocated.problems] == ["quote_not_in_source"]


def test_a_quote_across_two_passages_overlaps(tmp_path: Path) -> None:
    texts = {"c1": "The Volta dam flooded a large area of the valley."}
    quote = "They were kept in the archive. Cocoa exports from Ghana rose sharply"
    session = load_session(write(tmp_path / "s", [claim("c1", texts["c1"], quote)], {"s1": DOC}))
    report = audit_session(session, client=ScriptedClient(Model(texts)), against="sources")
    (result,) = report.claims
    assert [p.passageId for p in result.passages if p.verdict == "holds"] == ["s1:p1"]
    assert result.quoteOverlap == "overlaps"


def test_auto_chooses_sources_where_they_have_text(tmp_path: Path) -> None:
    claims = [
        claim("read", "The Volta dam was completed in 1965.", "The Volta dam was completed"),
        claim("unread", "Wheat yields doubled.", "Wheat yields doubled.", source="s2"),
        claim("bare", "Wheat yields doubled.", source="s2"),
    ]
    folder = write(tmp_path / "s", claims, {"s1": DOC})
    session = load_session(folder)

    def reply(request: dict[str, Any]) -> dict[str, object]:
        return dict.fromkeys(request["questions"], 0.9)

    def against(mode: str) -> dict[str, tuple[str | None, str]]:
        report = audit_session(session, client=ScriptedClient(reply), against=mode)  # type: ignore[arg-type]
        return {c.claimId: (c.against, c.verdict) for c in report.claims}

    assert against("auto") == {
        "read": ("sources", "supported"),
        "unread": ("quotes", "supported"),
        "bare": ("quotes", "unsupported"),
    }
    assert against("sources") == {
        "read": ("sources", "supported"),
        "unread": (None, "unchecked"),
        "bare": (None, "unchecked"),
    }
    assert against("quotes") == {
        "read": ("quotes", "supported"),
        "unread": ("quotes", "supported"),
        "bare": ("quotes", "unsupported"),
    }


def test_a_failed_window_is_an_error_not_unsupported(tmp_path: Path) -> None:
    texts = {"c1": "The Volta dam was completed in 1965."}
    session = load_session(write(tmp_path / "s", [claim("c1", texts["c1"])], {"s1": DOC}))
    report = audit_session(
        session, client=ScriptedClient(lambda request: {}), against="sources"
    )  # every answer missing
    (result,) = report.claims
    assert result.verdict == "error" and result.error is not None
    assert result.error.kind == "missing_answers"
    assert not any(p.check == "source_does_not_support" for p in result.problems)


def test_passage_chars_keeps_the_relevant_ones(tmp_path: Path) -> None:
    filler = [f"Filler paragraph {i} says nothing about anything at all.{TAIL}" for i in range(30)]
    filler[17] = "Cocoa exports from Ghana rose sharply during the decade." + TAIL
    texts = {"c1": "Cocoa exports from Ghana rose sharply."}
    folder = write(tmp_path / "s", [claim("c1", texts["c1"])], {"s1": "\n\n".join(filler)})
    model = Model(texts)
    report = audit_session(
        load_session(folder), client=ScriptedClient(model), against="sources", passage_chars=450
    )
    first = model.requests[0]
    sent = first["state"]["passages"]
    assert sum(len(p["text"]) for p in sent.values()) <= 450 < len("\n\n".join(filler))
    (result,) = report.claims
    assert result.verdict == "supported"
    assert len(result.passages) == 1 and filler[17] in result.passages[0].text


def test_replayed_sources_run_through_the_cli(tmp_path: Path) -> None:
    texts = {
        "c1": "The Volta dam was completed in 1965.",
        "c2": "Cocoa exports from Ghana rose sharply.",
        "c3": "Cocoa exports from Ghana rose sharply.",  # same passages as c2: kept apart
    }
    claims = [claim(cid, text) for cid, text in texts.items()]
    folder = write(tmp_path / "s", claims, {"s1": DOC})
    recorder = RecordingCiteClient(ScriptedClient(Model(texts)))
    recorded = audit_session(load_session(folder), client=recorder, against="sources")
    replay = tmp_path / "s.cite.jsonl"
    recorder.save(replay)
    lines = [json.loads(line) for line in replay.read_text().splitlines()]
    # Keyed by passage ids and question keys, never by wording.
    assert all(set(e) >= {"state", "questions", "answers"} for e in lines)
    # c2 and c3 gathered the same passage: a request each, kept apart by the descriptor.
    assert {"confirm:s1-p2", "c-c2"} in [set(e["questions"]) for e in lines]
    assert {"confirm:s1-p2", "c-c3"} in [set(e["questions"]) for e in lines]

    result = CliRunner().invoke(
        cli, ["cite", str(folder), "--replay", str(replay), "--against", "sources", "--json"]
    )
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["version"] == "citations-v3" and report["against"] == "sources"
    assert [c["verdict"] for c in report["claims"]] == [c.verdict for c in recorded.claims]
    assert report["claims"][1]["passages"] == [
        {
            "sourceId": "s1",
            "passageId": "s1:p2",
            "start": PLAIN.index("Cocoa"),
            "end": PLAIN.index("Cocoa") + len(DOC.split("\n\n")[1]),
            "text": DOC.split("\n\n")[1],
            "verdict": "holds",
            "confirm": 0.92,
        }
    ]
    Draft202012Validator(SCHEMA).validate(report)


def _requests_of_two_claims_on_one_source(tmp_path: Path, against: str) -> list[dict[str, Any]]:
    """Every request the audit sends for two claims citing one source, each answered 0.9."""
    seen: list[dict[str, Any]] = []

    def reply(request: dict[str, Any]) -> dict[str, object]:
        seen.append(request)
        return dict.fromkeys(request["questions"], 0.9)

    claims = [
        quoted("c1", "Aspirin is used to reduce fever and pain."),
        quoted("c2", "It was first made in 1897.", text="Aspirin was first made in 1897."),
    ]
    folder = write(tmp_path / "s", claims, {"s1": DOC})
    audit_session(load_session(folder), client=ScriptedClient(reply), against=against)  # type: ignore[arg-type]
    return seen


@pytest.mark.parametrize("against", ["quotes", "sources"])
def test_compact_encoding_loses_nothing(tmp_path: Path, against: str) -> None:
    seen = _requests_of_two_claims_on_one_source(tmp_path, against)
    assert seen
    for request in seen:
        assert expand(json.loads(user_message(request))) == request
        assert len(user_message(request)) < len(json.dumps(request))
        packed = compact(request)
        assert len(packed["criteria"]) == 1  # the same criteria, written once


def test_a_sources_request_asks_each_passage_once_and_writes_no_passage_twice(
    tmp_path: Path,
) -> None:
    """#32: a round-1 window asks each claim once for every passage (`*`), a round-2
    finding confirms every passage once (`confirm:*`) and compares them all as
    `passages.*.text`; each passage's text is written once, as itself."""
    seen = _requests_of_two_claims_on_one_source(tmp_path, "sources")
    rounds = {1: 0, 2: 0}
    for request in seen:
        message = json.loads(user_message(request))
        (passages,) = message["state"].values()
        assert len(passages) >= 2 and all(isinstance(t, str) for t in passages.values())
        user = user_message(request)
        for text in passages.values():
            assert user.count(json.dumps(text, ensure_ascii=False)[1:-1]) == 1
        if any(k.startswith("confirm:") for k in request["questions"]):
            rounds[2] += 1
            (name,) = [k for k in request["questions"] if k.startswith("c-")]
            assert message["questions"]["confirm:*"]
            assert message["questions"][name][1] == ["passages.*.text"]
            assert len(message["questions"]) == 2
        else:
            rounds[1] += 1
            assert set(message["questions"]) == {"*:c-c1", "*:c-c2"}
        assert expand(message) == request
    assert rounds[1] >= 1 and rounds[2] == 2  # one finding a claim, each in its own request


def test_a_round_1_wording_names_its_claim_only_beside_another(tmp_path: Path) -> None:
    """A source cited by one claim asks "the claim"; by two, each wording names its own."""
    seen: list[dict[str, Any]] = []

    def reply(request: dict[str, Any]) -> dict[str, object]:
        seen.append(request)
        return dict.fromkeys(request["questions"], 0.1)  # nothing gathered: round 1 only

    one = [quoted("c1", "Aspirin is used to reduce fever and pain.")]
    two = [*one, quoted("c2", "It was first made in 1897.", text="Aspirin was first made in 1897.")]
    asked: list[set[str]] = []
    for n, claims in enumerate((one, two)):
        seen.clear()
        folder = write(tmp_path / f"s{n}", claims, {"s1": DOC})
        audit_session(load_session(folder), client=ScriptedClient(reply), against="sources")  # type: ignore[arg-type]
        asked.append(
            {
                q["instructions"]["question"].split(":")[0].split("` ")[-1]
                for request in seen
                for q in request["questions"].values()
            }
        )
    assert asked == [{"support the claim"}, {"support claim c-c1", "support claim c-c2"}]


def test_agreement_and_summary_use_the_source_grounded_verdicts(tmp_path: Path) -> None:
    texts = {
        "bare": "The Volta dam was completed in 1965.",  # no quote, but the source holds it
        "weak": "Fishing communities moved to new towns along the lake.",
    }
    claims = [claim("bare", texts["bare"]), claim("weak", texts["weak"])]
    session = load_session(write(tmp_path / "s", claims, {"s1": DOC}))

    def reply(request: dict[str, Any]) -> dict[str, object]:
        # "bare" matches everywhere and holds; "weak" matches one passage, for review.
        weak = "c-weak" in request["questions"]  # round 2 of "weak"
        answers: dict[str, object] = {}
        for k in request["questions"]:
            if weak:
                answers[k] = 0.6
            elif k.endswith(":c-weak"):  # round 1: only the fishing passage matches
                answers[k] = 0.6 if k.startswith("s1-p3:") else 0.1
            else:
                answers[k] = 0.9
        return answers

    report = audit_session(session, client=ScriptedClient(reply), against="sources")
    verdicts = {c.claimId: c.verdict for c in report.claims}
    assert verdicts == {"bare": "supported", "weak": "uncertain"}
    expected = expectation(report)
    assert expected is not None and expected.grounded == 2
    # The source was read: a missing quote does not zero a supported claim (1 + 0.5) / 2.
    assert expected.rate == 0.75 and expected.expected == 4
    quotes = audit_session(session, client=ScriptedClient(reply), against="quotes")
    by_quotes = expectation(quotes)
    assert by_quotes is not None and by_quotes.grounded == 0 and by_quotes.rate < 0.75

    summary = judge_summary(report, ".judge/citations.json")
    assert "judged against their sources' stored text" in summary
    listed = summary.split("Claims to look at first:")[1]
    assert "untrusted data" in listed
    weak = next(line for line in listed.splitlines() if line.startswith("- weak"))
    assert "passage s1:p3 (review)" in weak and "Fishing communities moved" in weak


def test_a_cut_in_ranking_is_said_in_the_report(tmp_path: Path) -> None:
    # 80 distinct terms (letters only: digits would split a word), all in the source.
    words = ["".join(w) + "o" for w in itertools.product("bdfgkz", repeat=3)][:80]
    text = " ".join(words)
    source = "\n\n".join(f"Paragraph {i}: {' '.join(words[i::4])}." for i in range(4))
    folder = write(tmp_path / "s", [claim("c1", text)], {"s1": source})
    report = audit_session(
        load_session(folder), client=ScriptedClient(Model({"c1": text})), against="sources"
    )
    assert report.cuts is not None
    assert any(cut.startswith("c1: only its 64 rarest of 80 terms") for cut in report.cuts)
    quiet = write(tmp_path / "q", [claim("c1", "Paragraph two")], {"s1": source})
    plain = audit_session(
        load_session(quiet), client=ScriptedClient(Model({"c1": "x"})), against="sources"
    )
    assert plain.cuts is None and "cuts" not in plain.to_dict()


def test_passage_chars_below_one_passage_is_refused(tmp_path: Path) -> None:
    folder = write(tmp_path / "s", [claim("c1", "The Volta dam.")], {"s1": DOC})
    result = CliRunner().invoke(cli, ["cite", str(folder), "--passage-chars", "100"], env={})
    assert result.exit_code == 2
    assert "--passage-chars" in result.output and "450" in result.output


def test_a_claim_with_no_finding_never_takes_a_siblings_error(tmp_path: Path) -> None:
    """Two claims cite one source: c1 matches and its round-2 request is refused as too
    large (that finding's error); c2 matches nothing in round 1 (no finding, no request of
    its own). c2's verdict comes from its own evidence: unsupported, never c1's error."""
    texts = {
        "c1": "The Volta dam was completed in 1965.",
        "c2": "Wheat yields in Kansas doubled.",
    }
    claims = [claim(cid, text) for cid, text in texts.items()]
    model = Model(texts)
    session = load_session(write(tmp_path / "s", claims, {"s1": DOC}))

    def round_two(request: dict[str, Any]) -> bool:
        return any(k.startswith("confirm:") for k in request["questions"])

    client = ScriptedClient(model, too_large=round_two)
    report = audit_session(session, client=client, against="sources")
    by_id = {c.claimId: c for c in report.claims}
    assert by_id["c1"].verdict == "error"
    assert by_id["c1"].error is not None and by_id["c1"].error.kind == "request_too_large"
    assert by_id["c2"].verdict == "unsupported" and by_id["c2"].error is None
    assert by_id["c2"].requests == 0
    assert "source_does_not_support" in [p.check for p in by_id["c2"].problems]


def test_a_claim_takes_the_error_of_its_own_failed_window(tmp_path: Path) -> None:
    """A round-1 window that held the claim's own passages failed: that is the claim's error
    (its evidence was never read), with the window's kind."""
    texts = {"c1": "The Volta dam was completed in 1965."}
    session = load_session(write(tmp_path / "s", [claim("c1", texts["c1"])], {"s1": DOC}))

    def answers(request: dict[str, Any]) -> dict[str, object]:
        return {}  # every answer missing: the window fails as missing_answers

    report = audit_session(session, client=ScriptedClient(answers), against="sources")
    (result,) = report.claims
    assert result.verdict == "error" and result.error is not None
    assert result.error.kind == "missing_answers" and result.confidence is None


@pytest.mark.parametrize("against", ["sources", "quotes"])
def test_every_claim_with_a_verdict_has_the_confidence_that_decided_it(
    tmp_path: Path, against: str
) -> None:
    """One rule in both modes (docs/citation-audit.md): the highest round-2 confirm (the
    strongest holding one, else the highest that failed), else with nothing gathered the
    highest round-1 score; an error carries none."""
    texts = {
        "holds": "The Volta dam was completed in 1965.",
        "fails": "Cocoa exports from Ghana rose sharply.",
        "none": "Wheat yields in Kansas doubled.",
    }
    quotes = {
        "holds": "The Volta dam was completed in 1965.",
        "fails": "Cocoa exports from Ghana rose sharply during the decade that followed.",
        "none": "Aluminium smelting took most of the dam's electricity.",
    }
    claims = [claim(cid, text, quotes[cid]) for cid, text in texts.items()]
    session = load_session(write(tmp_path / "s", claims, {"s1": DOC}))
    confirm_of = {"holds": 0.93, "fails": 0.12}  # the claim's confirm, whatever the passage
    detect_of = {"holds": 0.9, "fails": 0.8, "none": 0.31}  # round 1, every passage alike
    names = dict(zip(concern_names(texts), texts, strict=True))

    def owner(request: dict[str, Any], key: str) -> str:
        if against == "sources":
            if key.startswith("confirm:"):
                name = next(k for k in request["questions"] if k in names)
                return names[name]
            return names[key.rsplit(":", 1)[1]]
        pid = key.removeprefix("confirm:").split(":")[0]
        return next(cid for cid in texts if pid.startswith(cid))

    def answers(request: dict[str, Any]) -> dict[str, object]:
        out: dict[str, object] = {}
        for key in request["questions"]:
            if key in names:  # the sources-mode descriptor: taken together
                out[key] = 0.5
            elif key.startswith("confirm:"):
                out[key] = confirm_of[owner(request, key)]
            else:
                out[key] = detect_of[owner(request, key)]
        return out

    report = audit_session(session, client=ScriptedClient(answers), against=against)
    by_id = {c.claimId: c for c in report.claims}
    assert {c: r.verdict for c, r in by_id.items()} == {
        "holds": "supported",
        "fails": "unsupported",
        "none": "unsupported",
    }
    assert by_id["holds"].confidence == pytest.approx(0.93)
    assert by_id["fails"].confidence == pytest.approx(0.12)  # its confirm failed: still said
    assert by_id["none"].confidence == pytest.approx(0.31)  # nothing gathered: round 1's best
    Draft202012Validator(SCHEMA).validate(report.to_dict())
