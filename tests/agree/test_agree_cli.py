"""`judge agree` end to end on the shipped labelled set (judged from its recorded replies),
and on labels whose disagreement with the saved results is known by construction."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sklearn.metrics import cohen_kappa_score

from harness.cli.main import cli

REPO = Path(__file__).resolve().parents[2]
LABELLED = REPO / "sessions_fixture" / "labelled"
CLASS_OF = {"supported": "supported", "uncertain": "partial", "unsupported": "unsupported"}


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The labelled sessions, copied and judged once from their recorded replies."""
    root = tmp_path_factory.mktemp("labelled") / "sessions"
    shutil.copytree(LABELLED / "sessions", root)
    result = CliRunner().invoke(
        cli, ["batch", str(root), "--replay-dir", str(LABELLED / "replays"), "-q"]
    )
    assert result.exit_code == 0, result.output
    lines = [json.loads(x) for x in result.stdout.splitlines()]
    assert {x["outcome"] for x in lines} == {"model-written"}
    return root


def _agree(*args: str) -> tuple[int, dict[str, Any], str]:
    result = CliRunner().invoke(cli, ["agree", *args, "--json"])
    return result.exit_code, json.loads(result.stdout) if result.stdout else {}, result.stderr


def _copy(judged: Path, tmp_path: Path) -> Path:
    root = tmp_path / "sessions"
    shutil.copytree(judged, root, symlinks=True)
    return root


def _verdicts(root: Path) -> list[tuple[str, str, str]]:
    out = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        report = json.loads((folder / ".judge" / "citations.json").read_text(encoding="utf-8"))
        out += [(folder.name, c["claimId"], c["verdict"]) for c in report["claims"]]
    return out


def _line(**fields: Any) -> str:
    return json.dumps({"version": "labels-v1", **fields})


def test_the_shipped_set_pairs_every_label(judged: Path) -> None:
    code, report, _ = _agree(str(LABELLED / "labels.jsonl"), "--root", str(judged))
    assert code == 0
    cov = report["coverage"]
    lines = (LABELLED / "labels.jsonl").read_text(encoding="utf-8").splitlines()
    claims = sum(1 for x in lines if '"kind": "claim"' in x)
    assert cov["claimLabels"] == claims and cov["labelledSessions"] == 24
    for key in ("unlabelled", "missing", "unjudged", "unaudited", "unknownClaims", "changed"):
        assert cov[key] == [], key
    matrix = report["claims"]["confusion"]
    no_verdict = sum(report["claims"]["noVerdict"].values())
    assert sum(map(sum, matrix)) + no_verdict == claims
    dims = {d["dimension"]: d for d in report["scores"]}
    assert set(dims) == {"factualAccuracy", "citationAccuracy", "sourceQuality"}
    assert all(d["rows"] > 0 and d["humanAlpha"] is None for d in dims.values())  # one rater


def test_a_tenth_flipped_gives_exactly_that_matrix_and_kappa(judged: Path, tmp_path: Path) -> None:
    verdicts = [v for v in _verdicts(judged) if v[2] in CLASS_OF]
    assert len(verdicts) >= 100
    truth, pred, lines = [], [], []
    for i, (session, claim, verdict) in enumerate(verdicts):
        human = CLASS_OF[verdict]
        if i % 10 == 0:  # every tenth: the other extreme
            human = "unsupported" if human != "unsupported" else "supported"
        truth.append(human)
        pred.append(CLASS_OF[verdict])
        lines.append(_line(kind="claim", session=session, claimId=claim, support=human, rater="r"))
    labels = tmp_path / "labels.jsonl"
    labels.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, report, _ = _agree(str(labels), "--root", str(judged))
    assert code == 0
    classes = ["supported", "partial", "unsupported"]
    expected = [[0] * 3 for _ in classes]
    for t, p in zip(truth, pred, strict=True):
        expected[classes.index(t)][classes.index(p)] += 1
    c = report["claims"]
    assert c["confusion"] == expected
    flipped = len(range(0, len(verdicts), 10))
    assert sum(expected[i][i] for i in range(3)) == len(verdicts) - flipped
    assert c["accuracy"]["value"] == pytest.approx(1 - flipped / len(verdicts))
    assert c["kappa"]["value"] == pytest.approx(cohen_kappa_score(truth, pred, labels=classes))
    assert c["kappa"]["low"] <= c["kappa"]["value"] <= c["kappa"]["high"]


def test_nothing_unpaired_goes_unnamed(judged: Path, tmp_path: Path) -> None:
    root = _copy(judged, tmp_path)
    (root / "eqa-02" / "judge.json").unlink()
    shutil.rmtree(root / "eqa-03" / ".judge")
    lines = [
        _line(kind="claim", session="eqa-01", claimId="sq1-c1", support="supported", rater="a"),
        _line(kind="claim", session="eqa-01", claimId="no-such", support="partial", rater="a"),
        _line(kind="claim", session="nowhere", claimId="x", support="partial", rater="a"),
        _line(kind="claim", session="../outside", claimId="x", support="partial", rater="a"),
        _line(kind="rating", session="eqa-02", rater="a", scores={"completeness": 3}),
        _line(kind="claim", session="eqa-03", claimId="sq1-c1", support="supported", rater="a"),
        _line(
            kind="rating",
            session="eqa-04",
            rater="a",
            scores={"completeness": 3},
            sessionDigest="sha256:" + "0" * 64,
        ),
    ]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, report, _ = _agree(str(labels), "--root", str(root))
    assert code == 0
    cov = report["coverage"]
    assert cov["missing"] == ["nowhere", "../outside"]
    # eqa-03's judge.json has no run record any more: not counted as a judgment (issue 31 §1)
    assert sorted(cov["unjudged"]) == ["eqa-02", "eqa-03"]
    assert cov["unaudited"] == ["eqa-03"]
    assert cov["unknownClaims"] == ["eqa-01#no-such"]
    assert cov["changed"] == ["eqa-04"]
    assert "eqa-05" in cov["unlabelled"] and "eqa-01" not in cov["unlabelled"]
    assert report["claims"]["rows"] == 1


def test_two_raters_give_their_own_alpha(judged: Path, tmp_path: Path) -> None:
    lines = []
    for n, session in enumerate(sorted(p.name for p in judged.iterdir() if p.is_dir())):
        for rater, score in (("a", n % 6), ("b", min(5, n % 6 + (n % 2)))):
            lines.append(
                _line(kind="rating", session=session, rater=rater, scores={"completeness": score})
            )
    labels = tmp_path / "labels.jsonl"
    labels.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, report, _ = _agree(str(labels), "--root", str(judged))
    assert code == 0
    (dim,) = report["scores"]
    assert dim["dimension"] == "completeness" and dim["rows"] == 48
    assert dim["humanAlpha"] is not None and 0.5 < dim["humanAlpha"] < 1
    assert dim["withJudgeAlpha"] is not None


def test_text_and_inert_page(judged: Path, tmp_path: Path) -> None:
    page = tmp_path / "agree.html"
    result = CliRunner().invoke(
        cli,
        ["agree", str(LABELLED / "labels.jsonl"), "--root", str(judged), "--html", str(page)],
    )
    assert result.exit_code == 0, result.output
    assert "Cohen's κ" in result.stderr and "people \\ audit" in result.stderr
    html = page.read_text(encoding="utf-8")
    assert html.count("<svg") >= 5  # matrix, reliability, three scatters
    assert "default-src &#39;none&#39;" in html and "<script src" not in html
    assert 'id="agree-confusion"' in html and 'id="agree-reliability"' in html


def test_a_bad_labels_file_is_a_usage_error(judged: Path, tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"kind": "claim"}\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["agree", str(labels), "--root", str(judged)])
    assert result.exit_code == 2
    assert f"{labels}:1:" in result.stderr
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["agree", str(empty), "--root", str(judged)])
    assert result.exit_code == 2 and "no label" in result.stderr


def test_report_index_gains_the_agreement_section(judged: Path, tmp_path: Path) -> None:
    root = _copy(judged, tmp_path)
    labels = str(LABELLED / "labels.jsonl")
    result = CliRunner().invoke(cli, ["report", str(root), "--labels", labels])
    assert result.exit_code == 0, result.output
    html = (root / "report.html").read_text(encoding="utf-8")
    assert 'id="agreement"' in html and 'id="agree-confusion"' in html
    assert html.index('id="agreement"') < html.index('id="sessions"')
    plain = CliRunner().invoke(cli, ["report", str(root)])
    assert plain.exit_code == 0
    assert 'id="agreement"' not in (root / "report.html").read_text(encoding="utf-8")
    one = CliRunner().invoke(cli, ["report", str(root / "eqa-01"), "--labels", labels])
    assert one.exit_code == 2 and "folder of sessions" in one.stderr
