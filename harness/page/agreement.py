"""The agreement section (`judge report ROOT --labels FILE`, `judge agree --html FILE`).

Three pictures as inline SVG, drawn from view objects computed here (the template only places
them): the confusion matrix of the audit against people, the reliability diagram of the
engine's confidences, and one scatter a rubric dimension of the judge's score against each
person's. Same environment as every page: autoescaped, nothing fetched.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from markupsafe import Markup

from harness.agree.report import (
    VERDICT_OF,
    AgreementReport,
    ClaimAgreement,
    DimensionAgreement,
    fmt,
)
from harness.page.render import LABELS, _common, environment

# A cell wide enough for its column's word ("unsupported") at the charts' text size.
CELL = 80
PLOT = 200


@dataclass(slots=True)
class Cell:
    x: int
    y: int
    count: int
    shade: float  # 0..1 of the row's total: the share of people's label the audit gave
    diagonal: bool


@dataclass(slots=True)
class Matrix:
    rows: list[str]
    columns: list[str]
    cells: list[Cell]
    aria: str
    size: int
    cell: int = CELL


@dataclass(slots=True)
class Point:
    x: float
    y: float
    r: float
    label: str


@dataclass(slots=True)
class Reliability:
    points: list[Point]
    ece: str
    aria: str
    size: int = PLOT


@dataclass(slots=True)
class Scatter:
    dimension: str
    label: str
    points: list[Point]
    summary: str
    aria: str
    size: int = PLOT


@dataclass(slots=True)
class AgreementView:
    labels: str
    root: str
    claims: ClaimAgreement | None
    matrix: Matrix | None
    reliability: Reliability | None
    scatters: list[Scatter] = field(default_factory=list)
    headline: list[tuple[str, str]] = field(default_factory=list)
    coverage: list[tuple[str, list[str]]] = field(default_factory=list)


def matrix(c: ClaimAgreement) -> Matrix:
    cells: list[Cell] = []
    for i, row in enumerate(c.confusion):
        total = sum(row) or 1
        for j, count in enumerate(row):
            cells.append(Cell(j * CELL, i * CELL, count, round(count / total, 3), i == j))
    aria = "Confusion matrix, rows people, columns audit: " + "; ".join(
        f"{r}: "
        + ", ".join(f"{VERDICT_OF[col]} {n}" for col, n in zip(c.classes, row, strict=True))
        for r, row in zip(c.classes, c.confusion, strict=True)
    )
    return Matrix(c.classes, [VERDICT_OF[x] for x in c.classes], cells, aria, CELL * len(c.classes))


def reliability(c: ClaimAgreement) -> Reliability:
    top = max((b.n for b in c.calibration), default=0) or 1
    points = [
        Point(
            round(b.confidence * PLOT, 1),
            round(PLOT - b.observed * PLOT, 1),
            round(3 + 7 * (b.n / top) ** 0.5, 1),
            f"{b.low:.1f}–{b.high:.1f}: {b.n} claims, confidence {b.confidence:.2f}, "
            f"people {b.observed:.2f}",
        )
        for b in c.calibration
        if b.n and b.confidence is not None and b.observed is not None
    ]
    ece = "—" if c.ece is None else f"{c.ece:.3f}"
    aria = f"Reliability diagram, expected calibration error {ece}: " + "; ".join(
        p.label for p in points
    )
    return Reliability(points, ece, aria)


def scatter(d: DimensionAgreement) -> Scatter:
    step = PLOT / 5
    counts = Counter((h, j) for h, j in d.pairs)
    top = max(counts.values(), default=1)
    points = [
        Point(
            round(h * step, 1),
            round(PLOT - j * step, 1),
            round(3 + 6 * (n / top) ** 0.5, 1),
            f"people {h:g}, judge {j:g}: {n}",
        )
        for (h, j), n in sorted(counts.items())
    ]
    summary = (
        f"n {d.rows} · ρ {fmt(d.spearman)} · MAE "
        f"{'—' if d.mae.value is None else f'{d.mae.value:.2f}'} · within one "
        f"{'—' if d.withinOne.value is None else f'{d.withinOne.value:.0%}'}"
    )
    aria = f"{LABELS[d.dimension]}: people against the judge: " + "; ".join(p.label for p in points)
    return Scatter(d.dimension, LABELS[d.dimension], points, summary, aria)


def view(report: AgreementReport) -> AgreementView:
    c = report.claims
    headline: list[tuple[str, str]] = []
    if c is not None:
        headline = [
            ("claim pairs", str(c.rows)),
            ("accuracy", fmt(c.accuracy)),
            ("Cohen's κ", fmt(c.kappa)),
            ("F1 of unsupported", fmt(c.unsupported["f1"])),
        ]
    cov = report.coverage
    coverage = [
        ("Unlabelled sessions", cov.unlabelled),
        ("Labelled sessions not found", cov.missing),
        ("Without a valid judge.json", cov.unjudged),
        ("Without a readable audit", cov.unaudited),
        ("Claim labels naming no audited claim", cov.unknownClaims),
        ("Inputs changed after labelling", cov.changed),
    ]
    return AgreementView(
        labels=report.labels,
        root=report.root,
        claims=c,
        matrix=matrix(c) if c is not None and c.rows else None,
        reliability=reliability(c) if c is not None and c.calibrated else None,
        scatters=[scatter(d) for d in report.scores if d.rows],
        headline=headline,
        coverage=[(k, v) for k, v in coverage if v],
    )


def agreement_section(report: AgreementReport) -> Markup:
    """The section's HTML, for a page that already has the common head."""
    module = environment().get_template("agreement_section.html.j2").module
    return Markup(module.section(view(report)))  # type: ignore[attr-defined]


def render_agreement(report: AgreementReport, *, nonce: str | None = None) -> str:
    return (
        environment()
        .get_template("agreement.html.j2")
        .render(a=view(report), writer="judge agree", **_common(nonce))
    )


def write_agreement_page(report: AgreementReport, path: Path) -> Path:
    from harness.page.build import write_atomic

    write_atomic(path, render_agreement(report))
    return path


__all__ = ["agreement_section", "render_agreement", "view", "write_agreement_page"]
