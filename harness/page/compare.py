"""`judge compare A B --html FILE`: the comparison as a self-contained, inert page.

Styled like the report's pages (the same environment, CSS and Content-Security-Policy:
nothing is fetched, untrusted names are shown as text). Per dimension a slope chart of
the paired scores (A left, B right; a line per distinct pair of scores, its width the
number of sessions) and the difference with its 95% interval (the judge's noise band
beside it when measured); the claims' verdict shares as bars; the movers with links to
both sides' report pages (relative to the page, as `judge report ROOT` writes them); the
warnings on top. The pictures are drawn from view objects computed here.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from markupsafe import Markup

from harness.compare.result import CompareResult, DimensionResult, ShareResult
from harness.page.render import LABELS, _common, environment

SLOPE_W, SLOPE_H, TOP, BOTTOM = 220, 170, 14, 150
BAR_W = 300
VERDICT_ORDER = ("supported", "uncertain", "unsupported", "error", "unchecked")

# The comparison's own pictures (added to the report's CSS, same nonce).
CSS = (
    ".cmp-warn{background:var(--badbg);border-color:var(--bad)}"
    ".slope .up{stroke:#1f7a3d}"
    ".slope .down{stroke:#a3221b}"
    ".slope .same{stroke:#9aa5b1}"
    ".slope line{stroke-linecap:round;stroke-opacity:.8}"
    ".slope .axis{stroke:#9aa5b1;stroke-width:1}"
    ".ci .zero{stroke:#5b6673;stroke-dasharray:3 3}"
    ".ci .bar{stroke:#2c4f86;stroke-width:4}"
    ".ci .noise{fill:#fdf1d8;stroke:#efd79f}"
    ".ci .dot{fill:#2c4f86}"
    ".ci .thr{stroke:#a3221b}"
    ".stack .supported{fill:#1f7a3d}"
    ".stack .uncertain{fill:#c48a00}"
    ".stack .unsupported{fill:#a3221b}"
    ".stack .error{fill:#6b1f1a}"
    ".stack .unchecked{fill:#9aa5b1}"
    ".key .sw{display:inline-block;width:.8em;height:.8em;margin:0 .25em 0 .6em;"
    "vertical-align:-.05em}"
    ".key .supported{background:#1f7a3d}"
    ".key .uncertain{background:#c48a00}"
    ".key .unsupported{background:#a3221b}"
    ".key .error{background:#6b1f1a}"
    ".key .unchecked{background:#9aa5b1}"
    ".cmp-table td:first-child{overflow-wrap:anywhere;min-width:5rem}"
    ".cmp-dims{grid-template-columns:repeat(auto-fit,minmax(250px,1fr))}"
    ".stack{display:block;width:100%;max-width:640px;height:auto}"
    ".stack text{font-size:11px}"
    ".chart svg.slope{max-width:260px;margin:0 auto}"
    ".chart svg.ci{max-width:360px;margin:0 auto}"
    ".cmp-table td.num,.cmp-table th.num{white-space:nowrap}"
    ".key .item{white-space:nowrap}"
    "@media (max-width:640px){.cmp-table{font-size:.78rem}"
    ".cmp-table th,.cmp-table td{padding:.25rem .3rem}}"
    ".fig-num{font-size:1.1rem;font-weight:700;white-space:nowrap}"
    ".fail{color:var(--bad);font-weight:700}"
)


@dataclass(slots=True)
class Line:
    y1: float
    y2: float
    width: float
    kind: str  # up, down, same
    label: str


@dataclass(slots=True)
class IntervalBar:
    x_low: float | None
    x_high: float | None
    x_mean: float | None
    x_zero: float
    noise: tuple[float, float] | None
    scale: str  # the axis' end, e.g. ±1.5


@dataclass(slots=True)
class DimensionView:
    name: str
    label: str
    d: DimensionResult
    lines: list[Line]
    bar: IntervalBar
    aria: str
    headline: str


@dataclass(slots=True)
class Segment:
    verdict: str
    x: float
    w: float
    share: float


@dataclass(slots=True)
class StackView:
    side: str
    segments: list[Segment]


@dataclass(slots=True)
class MoverRow:
    what: str
    direction: str
    a: str
    b: str
    before: str
    after: str
    change: str
    href_a: str | None
    href_b: str | None


@dataclass(slots=True)
class CompareView:
    r: CompareResult
    dims: list[DimensionView]
    stacks: list[StackView] = field(default_factory=list)
    shares: list[ShareResult] = field(default_factory=list)
    movers: list[MoverRow] = field(default_factory=list)


def _y(score: float) -> float:
    return round(BOTTOM - (BOTTOM - TOP) * score / 5, 1)


def slope_lines(pairs: list[tuple[float, float]]) -> list[Line]:
    counts = Counter(pairs)
    top = max(counts.values(), default=1)
    return [
        Line(
            _y(a),
            _y(b),
            round(1.5 + 7 * (n / top) ** 0.5, 1),
            "up" if b > a else "down" if b < a else "same",
            f"A {a:g} → B {b:g}: {n} session(s)",
        )
        for (a, b), n in sorted(counts.items())
    ]


def interval_bar(d: DimensionResult) -> IntervalBar:
    ends = [abs(v) for v in (d.interval.low, d.interval.high, d.difference) if v is not None]
    if d.noise.band is not None:
        ends.append(d.noise.band)
    scale = max([0.5, *ends]) * 1.1
    mid = BAR_W / 2

    def x(v: float | None) -> float | None:
        return None if v is None else round(mid + (BAR_W / 2 - 10) * v / scale, 1)

    noise = None
    if d.noise.band is not None:
        lo, hi = x(-d.noise.band), x(d.noise.band)
        assert lo is not None and hi is not None
        noise = (lo, hi - lo)
    return IntervalBar(
        x(d.interval.low), x(d.interval.high), x(d.difference), mid, noise, f"±{scale:.2f}"
    )


def _pairs(name: str, result: CompareResult) -> list[tuple[float, float]]:
    out = []
    for p in result.pairs:
        va, vb = p.scoresA.get(name), p.scoresB.get(name)
        if isinstance(va, int) and isinstance(vb, int):
            out.append((float(va), float(vb)))
    return out


def _headline(d: DimensionResult) -> str:
    if d.difference is None:
        return "no pair scored on both sides"
    ci = (
        "no interval"
        if d.interval.low is None or d.interval.high is None
        else f"[{d.interval.low:+.2f}, {d.interval.high:+.2f}]"
    )
    return f"{d.difference:+.2f} {ci}"


def _href(page: str | None, base: Path) -> str | None:
    if page is None:
        return None
    rel = os.path.relpath(page, base)
    return quote(Path(rel).as_posix(), safe="/")


def view(result: CompareResult, base: Path) -> CompareView:
    dims = []
    for d in result.dimensions:
        lines = slope_lines(_pairs(d.dimension, result))
        aria = f"{LABELS[d.dimension]}, A against B: " + "; ".join(x.label for x in lines)
        dims.append(
            DimensionView(
                d.dimension, LABELS[d.dimension], d, lines, interval_bar(d), aria, _headline(d)
            )
        )
    out = CompareView(result, dims)
    if result.claims is not None:
        for side in ("A", "B"):
            x = 0.0
            segments = []
            for s in result.claims.verdicts:
                share = (s.shareA if side == "A" else s.shareB) or 0.0
                segments.append(Segment(s.name, round(x, 1), round(share * BAR_W, 1), share))
                x += share * BAR_W
            out.stacks.append(StackView(side, segments))
        out.shares = [
            *result.claims.verdicts,
            *(p for p in result.claims.problems if p.shareA or p.shareB),
        ]
    for m in result.movers:
        spec = "+.0%" if m.what == "supported" else "+.0f"
        plain = ".0%" if m.what == "supported" else ".0f"
        for direction, items in (("drop", m.drops), ("rise", m.rises)):
            for x_ in items:
                out.movers.append(
                    MoverRow(
                        LABELS.get(m.what, "claims supported"),
                        direction,
                        x_.a,
                        x_.b,
                        format(x_.before, plain),
                        format(x_.after, plain),
                        format(x_.change, spec),
                        _href(x_.pageA, base),
                        _href(x_.pageB, base),
                    )
                )
    return out


def render_compare(
    result: CompareResult,
    base: Path,
    *,
    nonce: str | None = None,
) -> str:
    common = _common(nonce)
    common["css"] = common["css"] + Markup(CSS)
    return (
        environment()
        .get_template("compare.html.j2")
        .render(
            c=view(result, base),
            bar_w=BAR_W,
            slope_w=SLOPE_W,
            slope_h=SLOPE_H,
            writer="judge compare",
            **common,
        )
    )


def write_compare_page(result: CompareResult, path: Path) -> Path:
    from harness.page.build import write_atomic

    base = path.absolute().parent
    write_atomic(path, render_compare(result, base))
    return path


__all__ = ["render_compare", "slope_lines", "view", "write_compare_page"]
