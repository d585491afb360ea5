"""`judge compare` through the command line: what is left out and named, the fairness
warnings, the gate's exit codes, usage errors as one JSON object, the summary's widths,
pairing by question, results files and the page."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

import harness
from harness.cli.compare import summary_lines
from harness.cli.main import cli
from harness.compare import CompareResult
from tests.support.compare_roots import ONLY_A, ONLY_B, edit_run, judged_root, set_scores, sha


def invoke(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(cli, ["compare", *args], env=env)


def as_json(*args: str) -> tuple[int, dict[str, Any]]:
    result = invoke(*args, "--json")
    return result.exit_code, json.loads(result.stdout)


# -- what is not counted -------------------------------------------------------------------------


def test_a_copied_or_planted_run_record_is_named_and_not_counted(tmp_path: Path) -> None:
    a = judged_root(tmp_path / "A", ["eqa-01", "eqa-06", "eqa-07"])
    b = judged_root(tmp_path / "B", ["eqa-01", "eqa-06", "eqa-07"])
    # B/eqa-06 gets eqa-07's record and judge.json (sealed here, but another session's).
    for rel in (".judge/run.json", "judge.json"):
        shutil.copyfile(b / "eqa-07" / rel, b / "eqa-06" / rel)
    # A/eqa-01's record is replaced by a hand-made one (no seal of this installation).
    record = json.loads((a / "eqa-01" / ".judge" / "run.json").read_text("utf-8"))
    record["origin"] = {"mac": "hmac-sha256:" + "0" * 64, "key": "planted"}
    (a / "eqa-01" / ".judge" / "run.json").write_text(json.dumps(record), encoding="utf-8")
    code, doc = as_json(str(a), str(b))
    assert code == 0
    left_a = {x["name"]: x["why"] for x in doc["a"]["leftOut"]}
    left_b = {x["name"]: x["why"] for x in doc["b"]["leftOut"]}
    assert list(left_a) == ["eqa-01"] and "did not write" in left_a["eqa-01"]
    assert list(left_b) == ["eqa-06"] and "another session" in left_b["eqa-06"]
    assert doc["pairing"]["pairs"] == 1  # only eqa-07 counts on both sides
    assert doc["pairing"]["unpairedA"] == ["eqa-06"] and doc["pairing"]["unpairedB"] == ["eqa-01"]
    # The same, read by the summary: each named with why.
    text = invoke(str(a), str(b)).stderr
    assert "left out of A" in text and "eqa-01" in text and "eqa-06" in text


def test_a_record_for_other_contents_or_a_replaced_judgment_is_named(tmp_path: Path) -> None:
    a = judged_root(tmp_path / "A", ["eqa-01", "eqa-06", "eqa-07"])
    b = judged_root(tmp_path / "B", ["eqa-01", "eqa-06", "eqa-07"])
    (b / "eqa-01" / "answer.md").write_text("# changed after judging\n", encoding="utf-8")
    judge = json.loads((b / "eqa-06" / "judge.json").read_text("utf-8"))
    judge["scores"]["factualAccuracy"] = 5
    (b / "eqa-06" / "judge.json").write_text(json.dumps(judge), encoding="utf-8")
    code, doc = as_json(str(a), str(b))
    why = {x["name"]: x["why"] for x in doc["b"]["leftOut"]}
    assert "other session contents" in why["eqa-01"]
    assert "not the file its sealed run record vouches for" in why["eqa-06"]
    assert doc["pairing"]["pairs"] == 1 and code == 0  # eqa-07, untouched


def test_an_audit_of_another_run_set_is_named_and_its_claims_not_counted(tmp_path: Path) -> None:
    a = judged_root(tmp_path / "A", ["eqa-01", "eqa-06"])
    b = judged_root(tmp_path / "B", ["eqa-01", "eqa-06"])
    shutil.copyfile(b / "eqa-06/.judge/citations.json", b / "eqa-01/.judge/citations.json")
    code, doc = as_json(str(a), str(b))
    assert code == 0
    assert doc["pairing"]["pairs"] == 2  # the scores still count
    assert [x["name"] for x in doc["b"]["auditsLeftOut"]] == ["eqa-01"]
    assert doc["claims"]["sessions"] == 1


# -- fairness ----------------------------------------------------------------------------------


def test_different_judge_models_give_the_warning_first(tmp_path: Path) -> None:
    a = judged_root(tmp_path / "A", ["eqa-01", "eqa-06"])
    b = judged_root(tmp_path / "B", ["eqa-01", "eqa-06"])
    for name in ("eqa-01", "eqa-06"):
        edit_run(b / name, model="claude-other-model")
    code, doc = as_json(str(a), str(b))
    assert [w["what"] for w in doc["warnings"]] == ["judge model"]
    assert doc["warnings"][0]["b"] == ["claude-other-model (2)"]
    lines = invoke(str(a), str(b)).stderr.splitlines()
    assert lines[0].startswith("WARNING: the sides were judged with different judge models")
    assert code == 0


def test_samples_set_the_judges_noise_beside_the_difference(tmp_path: Path) -> None:
    a = judged_root(tmp_path / "A", ["eqa-01", "eqa-06", "eqa-07"])
    b = judged_root(tmp_path / "B", ["eqa-01", "eqa-06", "eqa-07"])
    spreads = {"eqa-01": [0, 1, 2], "eqa-06": [4, 4, 3], "eqa-07": [3, 3, 3]}
    for root in (a, b):
        for name, values in spreads.items():
            made = [
                {
                    "index": i + 1,
                    "file": f".judge/samples/{i + 1}.json",
                    "sha256": "sha256:" + "0" * 64,
                    "scores": {"factualAccuracy": v},
                    "turns": 1,
                }
                for i, v in enumerate(values)
            ]
            edit_run(root / name, samples={"asked": 3, "made": made, "chosen": 1, "rule": "t"})
    code, doc = as_json(str(a), str(b))
    assert code == 0
    noise = next(d for d in doc["dimensions"] if d["dimension"] == "factualAccuracy")["noise"]
    groups = [np.array(v, float) for v in spreads.values()]
    pooled = np.sqrt(
        sum(((g - g.mean()) ** 2).sum() for g in groups) / sum(len(g) - 1 for g in groups)
    )
    assert noise["measured"] and noise["sdA"] == pytest.approx(pooled)
    assert noise["band"] == pytest.approx(1.96 * np.sqrt(2 * pooled**2) / np.sqrt(3))
    assert noise["withinNoise"] is True  # B == A: a zero difference is inside any noise
    other = next(d for d in doc["dimensions"] if d["dimension"] == "completeness")["noise"]
    assert other["measured"] is False


# -- the gate ------------------------------------------------------------------------------------


def test_fail_if_exits_1_only_when_the_whole_interval_lies_beyond(
    roots: tuple[Path, Path],
) -> None:
    a, b = map(str, roots)
    _, doc = as_json(a, b)
    ci = next(d for d in doc["dimensions"] if d["dimension"] == "citationAccuracy")["interval"]
    low, high = ci["low"], ci["high"]
    assert low > 0
    beyond = invoke(a, b, "--fail-if", f"citationAccuracy>{low - 0.01:.3f}")
    assert beyond.exit_code == 1
    assert "FAILED" in beyond.stderr and "citationAccuracy" in beyond.stderr
    inside = invoke(a, b, "--fail-if", f"citationAccuracy>{low + 0.01:.3f}")
    assert inside.exit_code == 0, inside.stderr
    below = invoke(a, b, "--fail-if", f"citationAccuracy<{high + 0.01:.3f}")
    assert below.exit_code == 1
    assert invoke(a, b, "--fail-if", f"citationAccuracy<{high - 0.01:.3f}").exit_code == 0
    # Several conditions: the failing ones are named; a claim share gates too.
    code, many = as_json(
        a,
        b,
        "--fail-if",
        "factualAccuracy<-0.3",
        "--fail-if",
        f"citationAccuracy>{low - 0.01:.3f}",
        "--fail-if",
        "supported<-0.05",
    )
    assert code == 1
    assert [c["failed"] for c in many["conditions"]] == [False, True, False]
    assert many["failed"] is True


def test_a_condition_without_an_interval_is_not_evaluated(tmp_path: Path) -> None:
    a = judged_root(tmp_path / "A", ["eqa-06"])
    b = judged_root(tmp_path / "B", ["eqa-06"])
    set_scores(b / "eqa-06", factualAccuracy=0)  # one session per side: a drop of 4
    code, doc = as_json(str(a), str(b), "--fail-if", "factualAccuracy<-0.3")
    assert code == 0
    dim = doc["dimensions"][0]
    assert dim["pairs"] == 1 and dim["difference"] == -4
    assert dim["interval"] == {"low": None, "high": None}
    assert dim["wilcoxon"]["nonZero"] == 1 and "below 6" in dim["wilcoxon"]["note"]
    assert doc["conditions"][0]["evaluated"] is False
    assert doc["conditions"][0]["why"].count("not evaluated") == 1
    # Said once on the terminal and on the page too (each had put its verdict before a
    # why that already began with it).
    page = tmp_path / "cmp.html"
    text = invoke(str(a), str(b), "--fail-if", "factualAccuracy<-0.3", "--html", str(page))
    assert text.exit_code == 0
    said = text.stderr.split("--fail-if factualAccuracy<-0.3: ", 1)[1]
    assert said.startswith("not evaluated: factualAccuracy has no interval")
    assert said.count("not evaluated") == 1
    [line] = [x for x in page.read_text("utf-8").splitlines() if "--fail-if <code>" in x]
    assert line.count("not evaluated") == 1 and "not evaluated: factualAccuracy" in line


@pytest.mark.parametrize(
    "condition",
    ["factualAccuracy<<1", "nonsense<1", "factualAccuracy<1e309", "x" * 500, "supported<\x1b[2J"],
)
def test_a_bad_condition_is_a_usage_error_as_one_json_object(
    roots: tuple[Path, Path], condition: str
) -> None:
    result = invoke(*map(str, roots), "--fail-if", condition, "--json")
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert list(doc) == ["error"] and doc["error"]["code"] == "usage"
    assert "--fail-if" in doc["error"]["message"]
    assert "\x1b" not in result.stdout + result.stderr


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


# A side that is no side: the message names it, what it is not, and what to pass.
NO_SIDE: dict[str, tuple[Any, str]] = {
    "missing": (lambda t, r: t / "nope", "nope does not exist; pass a folder"),
    "a text file": (
        lambda t, r: _write(t / "notes.txt", "hello\n"),
        "notes.txt is neither a folder of judged sessions nor a results file (the extension",
    ),
    "a FIFO": (
        lambda t, r: _fifo(t / "pipe.csv"),
        "pipe.csv is neither a folder of judged sessions nor a results file; pass a folder",
    ),
    "one session's folder": (
        lambda t, r: r[0] / "eqa-01",
        "it is one session's folder itself: point at the folder that holds it",
    ),
}


@pytest.mark.parametrize("case", list(NO_SIDE))
def test_a_side_that_is_no_side_is_a_usage_error_naming_it(
    roots: tuple[Path, Path], tmp_path: Path, case: str
) -> None:
    build, said = NO_SIDE[case]
    result = invoke(str(build(tmp_path, roots)), str(roots[1]), "--json")
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "usage" and said in error["message"], error["message"]


# -- no pair: nothing to compare ------------------------------------------------------------------


def _empty(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    folder.mkdir(exist_ok=True)
    return folder


def _results(tmp_path: Path, *rows: str) -> Path:
    from harness.batch.table import COLUMNS

    path = tmp_path / "results.csv"
    path.write_text("\n".join([",".join(COLUMNS), *rows]) + "\n", encoding="utf-8")
    return path


def _one_session(tmp_path: Path, root: Path, name: str, side: str) -> Path:
    """A folder holding one judged session copied whole from `root` (its record holds)."""
    shutil.copytree(root / name, tmp_path / side / name)
    return tmp_path / side


def _unjudged(tmp_path: Path) -> Path:
    from tests.support.compare_roots import LABELLED

    shutil.copytree(LABELLED / "sessions" / "eqa-01", tmp_path / "raw" / "eqa-01")
    return tmp_path / "raw"


# Each case: its sides (and options), and what the refusal must say besides both sides'
# paths: which side holds nothing or how nothing paired, the counts, and the fix.
NO_PAIR: dict[str, tuple[Any, list[str]]] = {
    "both empty": (
        lambda t, r: [_empty(t, "a"), _empty(t, "b")],
        ["A and B each hold no judged session", "(folder: 0 counted, 0 left out)", "each side"],
    ),
    "the same empty folder twice": (
        lambda t, r: [_empty(t, "a"), _empty(t, "a")],
        ["A and B each hold no judged session", "(folder: 0 counted, 0 left out)"],
    ),
    "A empty": (
        lambda t, r: [_empty(t, "a"), r[1]],
        ["A holds no judged session", "(folder: 23 counted, 0 left out)", "point A at"],
    ),
    "B never judged": (
        lambda t, r: [r[0], _unjudged(t)],
        ["B holds no judged session", "(folder: 0 counted, 1 left out; 1 of them because"],
    ),
    "a results file without a row": (
        lambda t, r: [_results(t), r[1]],
        ["A holds no judged session", "(results file: 0 counted, 0 left out)", "--results"],
    ),
    "no folder name in common": (
        lambda t, r: [_one_session(t, r[0], ONLY_A, "a"), _one_session(t, r[1], ONLY_B, "b")],
        [
            "no session of A pairs with one of B by id",
            f"A has {ONLY_A}; B has {ONLY_B}",
            "try --pair-by question",
        ],
    ),
    "no question in common": (
        lambda t, r: [
            _one_session(t, r[0], ONLY_A, "a"),
            _one_session(t, r[1], ONLY_B, "b"),
            "--pair-by",
            "question",
        ],
        ["no session of A pairs with one of B by question", "try --pair-by id"],
    ),
    "a results file of other sessions": (
        lambda t, r: [_results(t, "elsewhere,model-written,3,3,3,3,3,0,1,0,0,no"), r[1]],
        ["(results file: 1 counted, 0 left out)", "a results file pairs by id only"],
    ),
}


@pytest.mark.parametrize("case", list(NO_PAIR))
def test_no_pair_is_a_usage_error_naming_both_sides_and_the_fix(
    roots: tuple[Path, Path], tmp_path: Path, case: str
) -> None:
    """A gate pointed at a wrong or empty folder must not pass on nothing (exit 0 over
    "0 paired sessions" was the old answer): exit 2, the one JSON error object with
    --json, nothing written."""
    build, said = NO_PAIR[case]
    args = [str(x) for x in build(tmp_path, roots)]
    sides = [Path(args[0]).resolve(), Path(args[1]).resolve()]
    page = tmp_path / "out" / "cmp.html"
    page.parent.mkdir()
    gate = ["--fail-if", "factualAccuracy<-0.3"]
    as_doc = invoke(*args, *gate, "--json", "--html", str(page))
    assert as_doc.exit_code == 2, as_doc.stdout
    assert not page.exists() and list(page.parent.iterdir()) == []
    doc = json.loads(as_doc.stdout)
    assert list(doc) == ["error"] and doc["error"]["code"] == "usage"
    message = doc["error"]["message"]
    assert f"A {sides[0]} (" in message and f"B {sides[1]} (" in message
    for words in ["nothing to compare", "Fix: ", *said]:
        assert words in message, message
    as_text = invoke(*args, *gate)
    assert as_text.exit_code == 2 and as_text.stdout == ""
    assert as_text.stderr.startswith("judge: error: nothing to compare")
    assert "paired session(s)" not in as_text.stderr  # no table over nothing


def test_the_api_refuses_no_pair_too(tmp_path: Path) -> None:
    from harness.errors import UsageError

    with pytest.raises(UsageError, match="A and B each hold no judged session"):
        harness.compare(_empty(tmp_path, "a"), _empty(tmp_path, "b"))


# -- results files ---------------------------------------------------------------------------------


def test_a_results_file_is_a_side(roots: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = roots
    for ext in ("csv", "jsonl"):
        results = tmp_path / f"a.{ext}"
        merged = CliRunner().invoke(cli, ["batch", str(a), "--merge-results", str(results)])
        assert merged.exit_code == 0, merged.stderr
        _, from_file = as_json(str(results), str(b))
        _, from_root = as_json(str(a), str(b))
        assert from_file["a"]["kind"] == "results"
        for got, want in zip(from_file["dimensions"], from_root["dimensions"], strict=True):
            assert got == want  # the same scores give the same figures, noise note included
        assert [s["name"] for s in from_file["claims"]["verdicts"]] == [
            "supported",
            "uncertain",
            "unsupported",
        ]
        assert from_file["claims"]["problems"] == []
        assert from_file["cost"]["a"] is None and from_file["warnings"] == []
        assert from_file["cost"]["note"] == (
            "A is a results file, which carries no run record: its cost and time are not known"
        )
        assert any("results file" in u for u in from_file["unchecked"])


def test_a_results_file_saved_with_a_byte_order_mark_reads_the_same(
    roots: tuple[Path, Path], tmp_path: Path
) -> None:
    """A spreadsheet saving the CSV again puts U+FEFF first; it is not part of the header."""
    a, b = roots
    plain, marked = tmp_path / "a.csv", tmp_path / "marked.csv"
    merged = CliRunner().invoke(cli, ["batch", str(a), "--merge-results", str(plain)])
    assert merged.exit_code == 0, merged.stderr
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    code, from_marked = as_json(str(marked), str(b))
    assert code == 0
    _, from_plain = as_json(str(plain), str(b))
    assert from_marked["dimensions"] == from_plain["dimensions"]
    assert from_marked["pairing"]["pairs"] == from_plain["pairing"]["pairs"] > 0


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("r.csv", "session,outcome\n", ":1:"),
        (
            "r.csv",
            "session,outcome,factualAccuracy,citationAccuracy,completeness,sourceQuality,"
            "toolEfficiency,unknowns,supported,uncertain,unsupported,disagrees\n"
            "eqa-01,model-written,9,0,2,2,4,0,0,0,4,no\n",
            ":2:",
        ),
        ("r.jsonl", '{"session": "x"}\n', ":1:"),
        ("r.jsonl", "not json\n", ":1:"),
        ("r.txt", "", "extension"),
    ],
)
def test_a_malformed_results_file_is_a_usage_error_naming_file_and_line(
    roots: tuple[Path, Path], tmp_path: Path, name: str, text: str, where: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    result = invoke(str(path), str(roots[1]), "--json")
    assert result.exit_code == 2
    message = json.loads(result.stdout)["error"]["message"]
    assert where in message and (name in message)


# -- pairing by question ---------------------------------------------------------------------------


def test_pair_by_question_pairs_renamed_folders_and_names_the_ambiguous(tmp_path: Path) -> None:
    from tests.support.compare_roots import LABELLED

    a = judged_root(tmp_path / "A", ["eqa-01", "eqa-06", "eqa-07"])
    b = tmp_path / "B"
    b.mkdir()
    renamed = {"eqa-01": "run2-first", "eqa-06": "run2-second", "eqa-07": "run2-third"}
    for old, new in renamed.items():
        shutil.copytree(LABELLED / "sessions" / old, b / new)
    shutil.copytree(LABELLED / "sessions" / "eqa-07", b / "run2-again")  # eqa-07's twin
    replays = tmp_path / "replays"
    replays.mkdir()
    for old, new in {**renamed, "eqa-07": "run2-third"}.items():
        for suffix in (".jsonl", ".cite.jsonl"):
            shutil.copyfile(LABELLED / "replays" / f"{old}{suffix}", replays / f"{new}{suffix}")
    for suffix in (".jsonl", ".cite.jsonl"):
        shutil.copyfile(LABELLED / "replays" / f"eqa-07{suffix}", replays / f"run2-again{suffix}")
    judged = CliRunner().invoke(cli, ["batch", str(b), "--replay-dir", str(replays), "-q"])
    assert judged.exit_code == 0, judged.stderr
    by_id = invoke(str(a), str(b), "--json")  # no folder name in common: nothing to compare
    assert by_id.exit_code == 2
    assert "try --pair-by question" in json.loads(by_id.stdout)["error"]["message"]
    _, by_q = as_json(str(a), str(b), "--pair-by", "question")
    assert by_q["pairing"]["pairs"] == 2
    assert [(p["a"], p["b"]) for p in by_q["pairs"]] == [
        ("eqa-01", "run2-first"),
        ("eqa-06", "run2-second"),
    ]
    assert by_q["pairing"]["unpairedA"] == ["eqa-07"]
    assert by_q["pairing"]["unpairedB"] == ["run2-again", "run2-third"]
    [ambiguous] = by_q["pairing"]["ambiguous"]
    assert "B: 2 sessions ask" in ambiguous and "run2-again, run2-third" in ambiguous


# -- outputs -------------------------------------------------------------------------------


@pytest.mark.parametrize("width", [60, 80, 120])
def test_the_summary_fits_the_width(roots: tuple[Path, Path], width: int) -> None:
    result = harness.compare(*roots)
    assert isinstance(result, CompareResult)
    lines = summary_lines(result, width)
    assert lines and all(len(line) <= width for line in lines), [
        line for line in lines if len(line) > width
    ]
    text = "\n".join(lines)
    for dim in ("factualAccuracy", "citationAccuracy", "completeness"):
        assert dim in text
    cli_text = invoke(*map(str, roots), env={"COLUMNS": str(width)}).stderr
    assert all(len(line) <= width for line in cli_text.splitlines())


def test_the_api_and_the_json_agree(roots: tuple[Path, Path]) -> None:
    _, doc = as_json(*map(str, roots))
    assert harness.compare(*roots).to_dict() == doc
    assert doc["version"] == "compare-v1"


def test_the_page_is_self_contained_and_inert(roots: tuple[Path, Path], tmp_path: Path) -> None:
    page = tmp_path / "out" / "cmp.html"
    page.parent.mkdir()
    result = invoke(*map(str, roots), "--html", str(page), "--fail-if", "citationAccuracy>0")
    assert result.exit_code == 1
    html = page.read_text("utf-8")
    assert "Content-Security-Policy" in html and "default-src &#39;none&#39;" in html
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", html)
    assert "http://" not in html and "https://" not in html
    assert html.index("--fail-if citationAccuracy&gt;0: failed") < html.index("Scores, B")
    hrefs = re.findall(r'href="([^"]+)"', html)
    assert hrefs and all(
        h.startswith("../../") and h.endswith("/.judge/report.html") for h in hrefs
    )
    assert html.count('<svg class="slope"') == 5


def test_a_warning_is_on_top_of_the_page(tmp_path: Path) -> None:
    a = judged_root(tmp_path / "A", ["eqa-01"])
    b = judged_root(tmp_path / "B", ["eqa-01"])
    edit_run(b / "eqa-01", model="claude-other-model")
    page = tmp_path / "cmp.html"
    assert invoke(str(a), str(b), "--html", str(page)).exit_code == 0
    html = page.read_text("utf-8")
    assert html.index("Warning: the sides were judged with different judge models") < html.index(
        "Scores, B"
    )


def test_an_output_inside_a_session_is_refused(roots: tuple[Path, Path]) -> None:
    a, b = roots
    inside = a / "eqa-01" / "cmp.html"
    result = invoke(str(a), str(b), "--html", str(inside), "--json")
    assert result.exit_code == 2
    assert "inside the session" in json.loads(result.stdout)["error"]["message"]
    assert not inside.exists()


def test_hashes_helper_matches() -> None:  # the tests' own helper, used by the reseal
    assert sha(Path(__file__)).startswith("sha256:")


def test_batch_api_channels_are_summed_per_session(tmp_path: Path) -> None:
    a = judged_root(tmp_path / "A", ["eqa-01", "eqa-06"])
    b = judged_root(tmp_path / "B", ["eqa-01", "eqa-06"])
    use = {"eqa-01": (3, 900, 1, 400), "eqa-06": (5, 1500, 0, 0)}
    for name, (br, bt, orq, ot) in use.items():
        judge = {
            "batch": {"requests": br, "tokens": bt},
            "ordinary": {"requests": orq, "tokens": ot},
        }
        audit = {"batch": {"requests": 1, "tokens": 100}, "ordinary": {"requests": 0, "tokens": 0}}
        edit_run(b / name, channels={"judge": judge, "audit": audit})
    code, doc = as_json(str(a), str(b))
    assert code == 0 and doc["cost"]["a"]["channelSessions"] == 0
    side = doc["cost"]["b"]
    assert side["channelSessions"] == 2
    assert side["channels"]["batchRequests"]["total"] == 3 + 5 + 2
    assert side["channels"]["batchTokens"]["mean"] == pytest.approx((900 + 1500 + 200) / 2)
    assert side["channels"]["ordinaryTokens"]["total"] == 400
    assert "via --batch-api (2 sessions)" in invoke(str(a), str(b)).stderr


def test_a_click_usage_error_is_one_json_object_too(tmp_path: Path) -> None:
    result = invoke(str(tmp_path), "--json")  # B missing
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["code"] == "usage"
    bad = invoke(str(tmp_path), str(tmp_path), "--pair-by", "name", "--json")
    assert bad.exit_code == 2 and json.loads(bad.stdout)["error"]["code"] == "usage"


def test_different_harness_versions_are_warned_first(tmp_path: Path) -> None:
    """Issue 34: two sides judged by different harness versions mix a pipeline change with
    a judge change: said before anything else."""
    a = judged_root(tmp_path / "A", ["eqa-01", "eqa-06"])
    b = judged_root(tmp_path / "B", ["eqa-01", "eqa-06"])
    for name in ("eqa-01", "eqa-06"):
        edit_run(b / name, harnessVersion="9.9.9")
    code, doc = as_json(str(a), str(b))
    assert code == 0
    assert any(w["what"] == "harness version" for w in doc["warnings"]), doc["warnings"]


def test_a_root_copied_whole_compares_as_equal(tmp_path: Path) -> None:
    """Every reader of run.json keeps a root's records when the root is moved or copied
    whole (the sessions keep their names and contents); compare reads by the same rule."""
    a = judged_root(tmp_path / "A", ["eqa-01", "eqa-06", "eqa-07"])
    b = tmp_path / "B"
    shutil.copytree(a, b)
    code, doc = as_json(str(a), str(b))
    assert code == 0 and doc["b"]["leftOut"] == [] and doc["pairing"]["pairs"] == 3
