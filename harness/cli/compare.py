"""`judge compare A B`: the click command and the terminal summary (the library is
harness.compare; the page, harness.page.compare).

The summary fits the width it is given (a terminal's, `COLUMNS`, else 120): warnings
first, then one row per dimension with as many columns as fit (the difference and its
interval always), the claims' shares, cost and time, the movers, what was left out and
the `--fail-if` conditions. Every name from a session is shown escaped.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from harness.compare.result import CompareResult, DimensionResult, Interval

WIDE = 120
LIST_CAP = 8  # names listed per kind of left-out before "… and N more"

EPILOG = """Pairs the sessions of A and B (folders `judge batch` judged, or results files
it wrote) and shows B − A per rubric dimension with a 95% paired bootstrap interval, the
Wilcoxon signed-rank test, the claims' shares, cost and time, and the sessions that moved.
Warnings come first when the sides were judged differently. No model request.

\b
Exit codes: 0 compared (no --fail-if condition held); 1 a --fail-if condition held
over its whole interval; 2 usage (a bad side, results file or condition, or no
session of A pairs with one of B: nothing is compared, nothing written).

\b
Example:
  judge compare runs/before runs/after --fail-if 'factualAccuracy<-0.3' --html cmp.html
"""


def _fmt(value: float | None, spec: str = "+.2f") -> str:
    return "—" if value is None else format(value, spec)


def _interval(i: Interval, spec: str = "+.2f") -> str:
    if i.low is None or i.high is None:
        return "no interval"
    return f"[{format(i.low, spec)}, {format(i.high, spec)}]"


def _points(i: Interval) -> Interval:
    """A share's interval in percentage points."""
    return i.model_copy(
        update={
            "low": None if i.low is None else i.low * 100,
            "high": None if i.high is None else i.high * 100,
        }
    )


def _safe(text: str) -> str:
    from harness.text.terminal import printable

    return printable(text, keep="")


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _wrap(text: str, width: int, indent: str = "") -> list[str]:
    return textwrap.wrap(
        text, width, initial_indent=indent, subsequent_indent=indent + "  ", break_on_hyphens=False
    ) or [indent]


Column = tuple[str, int, Callable[["DimensionResult"], str]]


def _columns() -> list[Column]:
    """Dimension-table columns in the order they are given room: (title, width, cell)."""

    def shares(d: DimensionResult) -> str:
        return f"{d.better}/{d.worse}/{d.equal}"

    def noise(d: DimensionResult) -> str:
        if not d.noise.measured or d.noise.band is None:
            return "not measured"
        return f"±{d.noise.band:.2f}" + (" (inside)" if d.noise.withinNoise else "")

    return [
        ("n", 4, lambda d: str(d.pairs)),
        ("B−A", 6, lambda d: _fmt(d.difference)),
        ("95% interval", 15, lambda d: _interval(d.interval)),
        ("p", 6, lambda d: _fmt(d.wilcoxon.pValue, ".3f")),
        ("+/−/=", 9, shares),
        ("unk A/B", 7, lambda d: f"{d.unknownA}/{d.unknownB}"),
        ("A→B", 11, lambda d: f"{_fmt(d.meanA, '.2f')}→{_fmt(d.meanB, '.2f')}"),
        ("noise", 14, noise),
    ]


def _dimension_table(result: CompareResult, width: int) -> list[str]:
    name_w = min(18, max(len(d.dimension) for d in result.dimensions))
    used = name_w
    chosen: list[Column] = []
    for col in _columns():
        if used + 1 + col[1] <= width or len(chosen) < 3:
            chosen.append(col)
            used += 1 + col[1]
    if used > width:  # too narrow for the name column too: shorten it
        name_w = max(6, name_w - (used - width))
    head = _cut("dimension", name_w).ljust(name_w) + "".join(" " + t.rjust(w) for t, w, _ in chosen)
    lines = [head]
    for d in result.dimensions:
        lines.append(
            _cut(d.dimension, name_w).ljust(name_w)
            + "".join(" " + _cut(cell(d), w).rjust(w) for _, w, cell in chosen)
        )
    shown = {t for t, _, _ in chosen}
    if "noise" not in shown:
        notes = {d.noise.note for d in result.dimensions if not d.noise.measured}
        lines += [x for n in sorted(notes) for x in _wrap(n, width)]
    return lines


def _names(label: str, items: list[str], width: int) -> list[str]:
    if not items:
        return []
    shown = [_safe(x) for x in items[:LIST_CAP]]
    more = f" … and {len(items) - LIST_CAP} more" if len(items) > LIST_CAP else ""
    return _wrap(f"{label} ({len(items)}): " + "; ".join(shown) + more, width)


def summary_lines(result: CompareResult, width: int | None = None) -> list[str]:
    """The terminal summary, every line at most `width` columns."""
    w = max(40, width or WIDE)
    out: list[str] = []
    for warning in result.warnings:
        text = (
            f"WARNING: {warning.message}. {warning.what}: A "
            + ", ".join(_safe(v) for v in warning.a)
            + "; B "
            + ", ".join(_safe(v) for v in warning.b)
        )
        out += _wrap(text, w)
    p = result.pairing
    out += _wrap(
        f"judge compare: B − A over {p.pairs} paired session(s), paired by {p.by}; 95% "
        f"paired bootstrap intervals ({result.bootstrap.resamples} resamples, seed "
        f"{result.bootstrap.seed}); p: Wilcoxon signed-rank",
        w,
    )
    for label, side in (("A", result.a), ("B", result.b)):
        out += _wrap(
            f"{label}: {_safe(side.source)} ({side.kind}: {side.sessions} counted, "
            f"{len(side.leftOut)} left out)",
            w,
        )
    out.append("")
    out += _dimension_table(result, w)
    out += _claims_lines(result, w)
    out += _cost_lines(result, w)
    out += _mover_lines(result, w)
    out += _left_out_lines(result, w)
    for note in result.unchecked:
        out += _wrap(f"not compared: {note}", w)
    for c in result.conditions:
        verdict = "" if c.verdict is None else f"{'FAILED' if c.failed else c.verdict}: "
        out += _wrap(f"--fail-if {_safe(c.text)}: {verdict}{c.why}", w)
    return out


def _claims_lines(result: CompareResult, w: int) -> list[str]:
    c = result.claims
    if c is None:
        return ["", *_wrap("claims: no pair has a counted audit on both sides", w)]
    out = [
        "",
        *_wrap(
            f"claims over {c.sessions} pair(s) with an audit on both sides "
            f"({c.claimsA} claims on A, {c.claimsB} on B): B − A in points of share, its "
            "interval over sessions, A→B:",
            w,
        ),
    ]
    rows = [s for s in c.verdicts] + [s for s in c.problems if s.shareA or s.shareB]
    name_w = min(24, max((len(s.name) for s in rows), default=8), max(w - 40, 8))
    for s in rows:
        cells = [  # by priority: the difference, its interval, then the shares
            _fmt(None if s.difference is None else s.difference * 100, "+.1f") + " pts",
            _interval(_points(s.interval), "+.1f"),
            f"{_fmt(s.shareA, '.1%')}→{_fmt(s.shareB, '.1%')}",
        ]
        line = _cut(s.name, name_w).ljust(name_w)
        for cell, cell_w in zip(cells, (9, 14, 13), strict=True):
            if len(line) + 1 + max(len(cell), cell_w) <= w:
                line += " " + cell.rjust(cell_w)
        out.append(line)
    if c.onlyA or c.onlyB:
        out += _wrap(
            f"problem kinds on one side only: A {', '.join(c.onlyA) or 'none'}; "
            f"B {', '.join(c.onlyB) or 'none'}",
            w,
        )
    if c.note:
        out += _wrap(c.note, w)
    return out


def _cost_lines(result: CompareResult, w: int) -> list[str]:
    out = ["", "cost and time per session (mean; total):"]
    for label, side in (("A", result.cost.a), ("B", result.cost.b)):
        if side is None:
            out += _wrap(f"{label}: not known (no run record)", w)
            continue
        tokens = ", ".join(f"{k} {_fmt(v.mean, ',.0f')}" for k, v in side.tokens.items())
        out += _wrap(
            f"{label}: {_fmt(side.requests.mean, ',.1f')} requests ({side.requests.total:,.0f}); "
            f"tokens {tokens}; {_fmt(side.seconds.mean, ',.1f')} s ({side.seconds.total:,.0f} s)",
            w,
        )
        if side.channelSessions:
            ch = side.channels
            out += _wrap(
                f"{label} via --batch-api ({side.channelSessions} sessions): "
                f"{_fmt(ch['batchRequests'].mean, ',.1f')} batch requests "
                f"({_fmt(ch['batchTokens'].mean, ',.0f')} tokens), "
                f"{_fmt(ch['ordinaryRequests'].mean, ',.1f')} ordinary "
                f"({_fmt(ch['ordinaryTokens'].mean, ',.0f')} tokens)",
                w,
            )
    if result.cost.note:
        out += _wrap(result.cost.note, w)
    return out


def _mover_lines(result: CompareResult, w: int) -> list[str]:
    out: list[str] = []
    for m in result.movers:
        if not m.drops and not m.rises:
            continue
        spec = "+.2f" if m.what != "supported" else "+.0%"
        for label, items in (("drops", m.drops), ("rises", m.rises)):
            if items:
                text = ", ".join(
                    f"{_safe(x.a) if x.a == x.b else _safe(x.a) + '→' + _safe(x.b)} "
                    f"{format(x.change, spec)}"
                    for x in items
                )
                out += _wrap(f"{m.what} {label}: {text}", w)
    if not out:
        return []
    head = _wrap("what moved (largest first; pages: SESSION/.judge/report.html):", w)
    return ["", *head, *out]


def _left_out_lines(result: CompareResult, w: int) -> list[str]:
    out: list[str] = []
    for label, side in (("A", result.a), ("B", result.b)):
        reasons: dict[str, list[str]] = {}
        for item in side.leftOut:
            reasons.setdefault(item.why, []).append(item.name)
        for why, names in reasons.items():
            out += _names(f"left out of {label}: {_safe(why)}", names, w)
        audits: dict[str, list[str]] = {}
        for item in side.auditsLeftOut:
            audits.setdefault(item.why, []).append(item.name)
        for why, names in audits.items():
            out += _names(f"audit not counted on {label}: {_safe(why)}", names, w)
    out += _names("unpaired on A", result.pairing.unpairedA, w)
    out += _names("unpaired on B", result.pairing.unpairedB, w)
    out += _names("not paired by question", result.pairing.ambiguous, w)
    return ["", *out] if out else []


def check_page(path: Path, a: Path, b: Path) -> None:
    """The page is never written inside a session under either side (a results file's side
    is the folder holding it), and goes where a page can be written
    (harness.session.discover.check_output, the one rule)."""
    from harness.session.discover import check_output

    sides = [s.expanduser() for s in (a, b)]
    check_output(path, [s if s.is_dir() else s.parent for s in sides], "--html")


@click.command(epilog=EPILOG)
@click.argument("a", metavar="A", type=click.Path(path_type=Path))
@click.argument("b", metavar="B", type=click.Path(path_type=Path))
@click.option(
    "--pair-by",
    type=click.Choice(["id", "question"]),
    default="id",
    show_default=True,
    help="Pair sessions by id (the folder's name) or by question (answer.md's heading; "
    "exactly one session per question per side, else named and left out).",
)
@click.option(
    "--fail-if",
    "fail_if",
    multiple=True,
    metavar="COND",
    help="Exit 1 when the whole 95% interval of a difference lies beyond a threshold, "
    "e.g. 'factualAccuracy<-0.3' or 'supported<-0.05' (repeatable).",
)
@click.option("--json", "as_json", is_flag=True, help="The result as one JSON document.")
@click.option(
    "--html",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the comparison as a self-contained, inert HTML page to FILE.",
)
def compare(
    a: Path, b: Path, pair_by: str, fail_if: tuple[str, ...], as_json: bool, html: Path | None
) -> None:
    """Compare two sets of judged sessions: B − A, paired (A and B: folders `judge batch`
    judged, or results files from `judge batch --results`). No model request."""
    from harness.cli.say import emit_json, err
    from harness.cli.width import stderr_width
    from harness.compare import compare as run_compare
    from harness.errors import EXIT_FAILED, EXIT_OK

    if html is not None:
        check_page(html, a, b)
    result = run_compare(
        a, b, pair_by="question" if pair_by == "question" else "id", fail_if=fail_if
    )
    if html is not None:
        from harness.page.compare import write_compare_page

        write_compare_page(result, html.expanduser())
    if as_json:
        emit_json(result.to_dict(), indent=2)
    else:
        for line in summary_lines(result, stderr_width()):
            err(line)
    if html is not None:
        err(f"wrote {html}")
    sys.exit(EXIT_FAILED if result.failed else EXIT_OK)


EXAMPLE = "  judge compare A B --fail-if 'factualAccuracy<-0.3'   B − A, paired, as a CI gate\n"


def register(cli: Any) -> None:
    """Add `compare` to the group and its example to the group's examples (its --json
    errors are one object: it is among harness.cli.main's JSON_COMMANDS)."""
    cli.add_command(compare)
    epilog = cli.epilog or ""
    cli.epilog = epilog.rstrip("\n") + "\n" + EXAMPLE if "Examples:" in epilog else epilog


__all__ = ["check_page", "compare", "summary_lines"]
