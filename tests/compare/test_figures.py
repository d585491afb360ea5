"""Every figure of `judge compare` against an independent computation in the test: the
scores read plainly from judge.json, the bootstrap redone with the documented seed, SciPy's
Wilcoxon, the shares counted from citations.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.stats import wilcoxon

from harness.cli.main import cli
from harness.contract.rubric import DIMENSIONS
from tests.support.compare_roots import ONLY_A, ONLY_B, SHIFTS, scores, verdicts

SEED, RESAMPLES = 20261206, 2000  # as docs/compare.md documents them
CHECK_NAMES = (
    "dangling_source",
    "quote_not_in_source",
    "number_mismatch",
    "no_quote",
    "quote_source_not_cited",
    "source_unreadable",
    "source_does_not_support",
)


def run_json(*args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(cli, ["compare", *args, "--json"])
    assert result.stdout, result.stderr
    return result.exit_code, json.loads(result.stdout)


def bootstrap(values: np.ndarray, statistic: Any) -> tuple[float, float]:
    n = len(values) if not isinstance(values, tuple) else len(values[0])
    idx = np.random.default_rng(SEED).integers(0, n, size=(RESAMPLES, n))
    stats = np.array([statistic(row) for row in idx])
    stats = stats[np.isfinite(stats)]
    lo, hi = np.percentile(stats, [2.5, 97.5])
    return float(lo), float(hi)


@pytest.fixture(scope="module")
def compared(roots: tuple[Path, Path]) -> dict[str, Any]:
    a, b = roots
    code, doc = run_json(str(a), str(b))
    assert code == 0
    return doc


def test_pairing_names_the_unpaired_sessions_on_both_sides(compared: dict[str, Any]) -> None:
    assert compared["pairing"]["pairs"] == 22
    assert compared["pairing"]["unpairedA"] == [ONLY_A]
    assert compared["pairing"]["unpairedB"] == [ONLY_B]
    assert compared["a"]["leftOut"] == [] and compared["b"]["leftOut"] == []
    assert compared["warnings"] == []  # both sides judged alike


@pytest.mark.parametrize("dim", DIMENSIONS)
def test_each_dimension_equals_an_independent_computation(
    roots: tuple[Path, Path], compared: dict[str, Any], dim: str
) -> None:
    a, b = roots
    sa, sb = scores(a), scores(b)
    paired = sorted(set(sa) & set(sb))
    numbers = [
        (sa[n][dim], sb[n][dim])
        for n in paired
        if isinstance(sa[n][dim], int) and isinstance(sb[n][dim], int)
    ]
    d = np.array([y - x for x, y in numbers], dtype=float)
    got = next(x for x in compared["dimensions"] if x["dimension"] == dim)
    assert got["pairs"] == len(d)
    assert got["unknownA"] == sum(sa[n][dim] == "Unknown" for n in paired)
    assert got["unknownB"] == sum(sb[n][dim] == "Unknown" for n in paired)
    assert got["difference"] == pytest.approx(d.mean())
    assert got["meanA"] == pytest.approx(np.mean([x for x, _ in numbers]))
    assert got["meanB"] == pytest.approx(np.mean([y for _, y in numbers]))
    lo, hi = bootstrap(d, lambda i: d[i].mean())
    assert got["interval"] == {"low": pytest.approx(lo), "high": pytest.approx(hi)}
    assert (got["better"], got["worse"], got["equal"]) == (
        int((d > 0).sum()),
        int((d < 0).sum()),
        int((d == 0).sum()),
    )
    assert got["betterShare"] == pytest.approx((d > 0).mean())
    if np.count_nonzero(d):
        expected = wilcoxon(d)
        assert got["wilcoxon"]["pValue"] == pytest.approx(expected.pvalue)
        assert got["wilcoxon"]["statistic"] == pytest.approx(expected.statistic)
        assert got["wilcoxon"]["nonZero"] == np.count_nonzero(d)
    else:  # all-equal pairs: nothing to test, an interval of exactly 0
        assert got["wilcoxon"]["pValue"] is None
        assert "every pair is equal" in got["wilcoxon"]["note"]
        assert got["interval"] == {"low": 0.0, "high": 0.0}
    assert got["noise"]["measured"] is False
    assert "not measured" in got["noise"]["note"]


def test_the_known_shifts_show(compared: dict[str, Any]) -> None:
    dims = {x["dimension"]: x for x in compared["dimensions"]}
    assert dims["toolEfficiency"]["equal"] == 22  # all-equal pairs
    assert dims["completeness"]["unknownB"] == 1 and dims["completeness"]["unknownA"] == 0
    assert dims["completeness"]["pairs"] == 21  # the Unknown pair is left out, not a 0
    assert dims["factualAccuracy"]["equal"] > 0  # ties (eqa-04 among them)
    assert dims["citationAccuracy"]["interval"]["low"] > 0  # a clear rise
    assert len(SHIFTS) == 11
    movers = {m["what"]: m for m in compared["movers"]}
    drops = movers["sourceQuality"]["drops"]
    assert [(m["a"], m["change"]) for m in drops] == [("eqa-07", -3), ("eqa-06", -2)]
    assert drops[0]["pageA"].endswith("eqa-07/.judge/report.html")
    assert drops[0]["pageB"].endswith("eqa-07/.judge/report.html")
    assert movers["supported"]["rises"][0]["a"] == "eqa-01"


def test_claim_shares_and_problem_rates_equal_an_independent_computation(
    roots: tuple[Path, Path], compared: dict[str, Any]
) -> None:
    a, b = roots
    va, vb = verdicts(a), verdicts(b)
    paired = sorted(set(va) & set(vb))
    claims = compared["claims"]
    assert claims["sessions"] == len(paired)

    def problems(root: Path, name: str) -> list[set[str]]:
        doc = json.loads((root / name / ".judge" / "citations.json").read_text("utf-8"))
        return [{p["check"] for p in c["problems"]} for c in doc["claims"]]

    total_a = np.array([len(va[n]) for n in paired], float)
    total_b = np.array([len(vb[n]) for n in paired], float)
    assert claims["claimsA"] == total_a.sum() and claims["claimsB"] == total_b.sum()

    def check(name: str, ca: np.ndarray, cb: np.ndarray, got: dict[str, Any]) -> None:
        share_a, share_b = ca.sum() / total_a.sum(), cb.sum() / total_b.sum()
        assert got["name"] == name
        assert got["shareA"] == pytest.approx(share_a)
        assert got["shareB"] == pytest.approx(share_b)
        assert got["difference"] == pytest.approx(share_b - share_a)
        lo, hi = bootstrap(
            ca,
            lambda i: cb[i].sum() / total_b[i].sum() - ca[i].sum() / total_a[i].sum(),
        )
        assert got["interval"] == {"low": pytest.approx(lo), "high": pytest.approx(hi)}

    for got in claims["verdicts"]:
        v = got["name"]
        ca = np.array([va[n].count(v) for n in paired], float)
        cb = np.array([vb[n].count(v) for n in paired], float)
        check(v, ca, cb, got)
    assert [g["name"] for g in claims["verdicts"]] == [
        "supported",
        "uncertain",
        "unsupported",
        "error",
        "unchecked",
    ]
    for got in claims["problems"]:
        kind = got["name"]
        ca = np.array([sum(kind in p for p in problems(a, n)) for n in paired], float)
        cb = np.array([sum(kind in p for p in problems(b, n)) for n in paired], float)
        check(kind, ca, cb, got)
    assert [g["name"] for g in claims["problems"]] == list(CHECK_NAMES)
    errors = next(g for g in claims["verdicts"] if g["name"] == "error")
    assert errors["shareA"] == 0 and errors["shareB"] > 0  # eqa-05's claim on B only


def test_cost_and_time_come_from_the_run_records(
    roots: tuple[Path, Path], compared: dict[str, Any]
) -> None:
    a, _ = roots
    names = sorted(set(p["a"] for p in compared["pairs"]))
    records = [json.loads((a / n / ".judge" / "run.json").read_text("utf-8")) for n in names]
    requests = [r["turns"] + r["citations"]["requests"] for r in records]
    seconds = [r["seconds"] for r in records]
    cost = compared["cost"]["a"]
    assert cost["sessions"] == len(names)
    assert cost["requests"]["mean"] == pytest.approx(np.mean(requests))
    assert cost["seconds"]["total"] == pytest.approx(sum(seconds))
    judge_in = sum(r["usage"]["input_tokens"] for r in records)
    audit_in = sum(r["citations"]["usage"]["input_tokens"] for r in records)
    assert cost["tokens"]["input"]["total"] == judge_in + audit_in
