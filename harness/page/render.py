"""HTML from view objects: one Jinja2 environment, autoescaping on, nothing undefined.

Every value printed goes through `_finalize` first (bidi controls and control characters
made visible, see `harness.page.text`) and then through autoescaping. Only our own CSS,
script and numbers are ever marked safe. The page carries a Content-Security-Policy that
allows nothing but its own inline style and script (by a fresh nonce per page): no
request of any kind, so a link is only followed when the reader clicks it.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from harness.audit.report import CHECKS, VERDICTS
from harness.contract.rubric import DIMENSIONS
from harness.page.inputs import SessionPage
from harness.page.text import clean, safe_url

LABELS = {
    "factualAccuracy": "Factual accuracy",
    "citationAccuracy": "Citation accuracy",
    "completeness": "Completeness",
    "sourceQuality": "Source quality",
    "toolEfficiency": "Tool efficiency",
}
SHORT = {
    "factualAccuracy": "fact.",
    "citationAccuracy": "cite.",
    "completeness": "compl.",
    "sourceQuality": "src.",
    "toolEfficiency": "tools",
}
# Every verdict and problem kind in plain words (the page's legend).
LEGEND: tuple[tuple[str, str], ...] = (
    ("supported", "The support model found that the evidence backs the claim."),
    ("uncertain", "Support is partial or doubtful: worth a reader's look."),
    ("unsupported", "The evidence read does not back the claim."),
    ("error", "The audit's request for this claim failed, so it was not judged."),
    ("unchecked", "Support was not judged: the audit ran offline, or had no text to judge."),
    ("dangling_source", "The claim or one of its quotes cites a source id sources.json lacks."),
    (
        "quote_not_in_source",
        "The source's stored text does not hold the quote, even with case, spaces, quote "
        "marks and dashes folded; the nearest passage is shown against it word by word.",
    ),
    (
        "number_mismatch",
        "A number of the claim is in none of its quotes, nor anywhere in its sources' text.",
    ),
    ("no_quote", "The claim carries no quote to back it."),
    ("quote_source_not_cited", "A quote comes from a source the claim does not cite."),
    (
        "source_unreadable",
        "The quote's stored source could not be turned into text, so it could not be checked.",
    ),
    (
        "source_does_not_support",
        "The cited sources' text was read, and no passage of it supports the claim.",
    ),
)
# Findings start open up to this many claims; beyond it they are closed <details>, which
# the browser neither lays out nor paints until opened (the page stays quick at 2,000+).
OPEN_ALL_UP_TO = 400


def csp(nonce: str) -> str:
    return (
        "default-src 'none'; "
        f"style-src 'nonce-{nonce}'; script-src 'nonce-{nonce}'; "
        "img-src 'none'; font-src 'none'; connect-src 'none'; media-src 'none'; "
        "object-src 'none'; frame-src 'none'; worker-src 'none'; manifest-src 'none'; "
        "base-uri 'none'; form-action 'none'"
    )


def _finalize(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, Markup):
        return value
    if isinstance(value, str):
        return clean(value)
    return value


@cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("harness.page", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        finalize=_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["safe_url"] = safe_url
    return env


@cache
def _static(name: str) -> Markup:
    text = resources.files("harness.page").joinpath("static", name).read_text("utf-8")
    # Ours, but checked anyway: nothing in it may end the element it is inlined into.
    assert "</" not in text, f"harness/page/static/{name} must not contain '</'"
    return Markup(text)


def _common(nonce: str | None = None) -> dict[str, Any]:
    nonce = nonce or secrets.token_hex(16)
    return {
        "nonce": nonce,
        "csp": csp(nonce),
        "css": _static("page.css"),
        "script": _static("page.js"),
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "dimensions": [(d, LABELS[d]) for d in DIMENSIONS],
        "short": SHORT,
    }


def render_session(page: SessionPage, *, nonce: str | None = None) -> str:
    verdicts: list[str] = [v for v in VERDICTS if v != "unchecked" or page.verdicts.get(v)]
    if page.verdicts.get("not audited"):
        verdicts.append("not audited")
    return (
        environment()
        .get_template("session.html.j2")
        .render(
            p=page,
            open_all=page.claims <= OPEN_ALL_UP_TO,
            verdict_names=verdicts,
            check_names=list(CHECKS),
            legend=LEGEND,
            **_common(nonce),
        )
    )


@dataclass(slots=True)
class IndexRow:
    name: str
    href: str | None  # relative link to the session's page; None when it has none
    scores: dict[str, int | str]
    outcome: str
    claims: int
    verdicts: dict[str, int]
    with_problems: int
    compared: bool
    disagrees: bool
    why: str
    versus: str = ""  # "judge 1 vs 3": the judge's citationAccuracy against the audit's
    problem: str | None = None
    # What computed the counts: "model" (a saved audit that judged support), "offline"
    # (deterministic checks only: no support count is known), "" (nothing: not audited).
    audited: str = "model"
    # "N problems in the session's files; the first: …" (harness.session.file_problems)
    files: str | None = None


@dataclass(slots=True)
class Bar:
    label: str
    count: int
    kind: str
    x: float
    y: float
    w: float
    h: float


@dataclass(slots=True)
class Chart:
    dimension: str
    label: str
    bars: list[Bar]
    mean: float | None
    aria: str
    width: int = 210
    height: int = 90


def chart(dimension: str, rows: list[IndexRow]) -> Chart:
    """Sessions per score 0-5, Unknown, and no judgment, as bars scaled to the tallest."""
    buckets: list[tuple[str, str, int]] = []
    values = [r.scores.get(dimension) for r in rows]
    for score in range(6):
        buckets.append((str(score), "", sum(1 for v in values if v == score)))
    buckets.append(("?", "unk", sum(1 for v in values if isinstance(v, str))))
    buckets.append(("—", "none", sum(1 for v in values if v is None)))
    top = max((n for _, _, n in buckets), default=0) or 1
    slot, plot, base = 210 / len(buckets), 62.0, 76.0
    bars = []
    for i, (label, kind, count) in enumerate(buckets):
        h = round(plot * count / top, 1)
        bars.append(
            Bar(label, count, kind, round(i * slot + 3, 1), base - h, round(slot - 6, 1), h)
        )
    numbers = [v for v in values if isinstance(v, int)]
    mean = sum(numbers) / len(numbers) if numbers else None
    aria = f"{LABELS[dimension]}: " + ", ".join(f"{b.label}: {b.count}" for b in bars)
    return Chart(dimension, LABELS[dimension], bars, mean, aria)


def render_index(
    title: str, rows: list[IndexRow], *, nonce: str | None = None, agreement: Markup | None = None
) -> str:
    """The index; `agreement`: the section of `judge report ROOT --labels FILE`."""
    return (
        environment()
        .get_template("index.html.j2")
        .render(
            title=title,
            rows=rows,
            charts=[chart(d, rows) for d in DIMENSIONS],
            judged=sum(1 for r in rows if r.scores),
            disagreements=sum(1 for r in rows if r.disagrees),
            agreement=agreement,
            **_common(nonce),
        )
    )
