"""The agreement report as lines a person reads (`judge agree` without --json)."""

from __future__ import annotations

from harness.agree.report import (
    VERDICT_OF,
    AgreementReport,
    ClaimAgreement,
    Estimate,
    SelfAgreement,
    fmt,
)


def _names(label: str, items: list[str], most: int = 8) -> list[str]:
    if not items:
        return []
    shown = ", ".join(items[:most]) + (
        f", … ({len(items) - most} more)" if len(items) > most else ""
    )
    return [f"  {label} ({len(items)}): {shown}"]


def claim_lines(c: ClaimAgreement) -> list[str]:
    out = [f"claims: {c.rows} (claim, rater) pairs with an audit verdict"]
    if c.noVerdict:
        out[0] += "; no verdict: " + ", ".join(f"{k} {v}" for k, v in c.noVerdict.items())
    width = max(len(x) for x in c.classes) + 2
    header = "people \\ audit".ljust(width + 4) + "".join(
        VERDICT_OF[x].rjust(13) for x in c.classes
    )
    out.append("  " + header)
    for name, row in zip(c.classes, c.confusion, strict=True):
        out.append("  " + name.ljust(width + 4) + "".join(str(v).rjust(13) for v in row))
    out.append(f"  accuracy {fmt(c.accuracy)}   Cohen's κ {fmt(c.kappa)}")
    u = c.unsupported
    out.append(
        f"  unsupported: precision {fmt(u['precision'])}, recall {fmt(u['recall'])}, "
        f"F1 {fmt(u['f1'])}"
    )
    for p in c.byProblem:
        out.append(
            f"  {p.check}: {p.claims} labelled, people reject {p.humanUnsupported} "
            f"({fmt(p.rejectedRate, percent=True)}), partial {p.humanPartial}, "
            f"supported {p.humanSupported}"
        )
    ece = "—" if c.ece is None else f"{c.ece:.3f}"
    out.append(
        f"  calibration: expected calibration error {ece} over {c.calibrated} pairs "
        "with an engine confidence"
    )
    return out


def self_lines(s: SelfAgreement) -> list[str]:
    out = [f"self: {s.samples} samples of {s.sessions} sessions"]
    for d in s.dimensions:
        mr = "—" if d.meanRange is None else f"{d.meanRange:.2f}"
        xr = "—" if d.maxRange is None else f"{d.maxRange:g}"
        sd = "—" if d.meanStd is None else f"{d.meanStd:.2f}"
        al = "—" if d.alpha is None else f"{d.alpha:.2f}"
        out.append(
            f"  {d.dimension:<17} sessions {d.sessions:>3}  mean range {mr}  max {xr}  "
            f"mean sd {sd}  α {al}"
        )
    for u in s.unsettled:
        dims = "; ".join(f"{k} {v}" for k, v in u.dimensions.items())
        out.append(f"  undecided: {u.session}: {dims}")
    out += _names("unreadable samples", s.unreadable)
    return out


def agreement_lines(report: AgreementReport) -> list[str]:
    cov = report.coverage
    out = [
        f"judge agree: {report.labels}: {cov.claimLabels} claim labels, {cov.ratings} ratings "
        f"of {cov.labelledSessions} sessions under {report.root} (no model request; 95% "
        f"intervals from {report.resamples} bootstrap resamples)"
    ]
    out += claim_lines(report.claims) if report.claims else ["claims: no claim label paired"]
    if report.scores:
        out.append("scores: the judge against each person's rating")
        out.append(
            "  dimension          n   Spearman ρ           Kendall τ            MAE   "
            "exact  within 1  QWK    judge ?  people ?  α people"
        )
        for d in report.scores:
            alpha = "—" if d.humanAlpha is None else f"{d.humanAlpha:.2f}"
            out.append(
                f"  {d.dimension:<17}{d.rows:>4}   {fmt(d.spearman):<20} {fmt(d.kendall):<20} "
                f"{fmt(d.mae, digits=2) if d.mae.value is None else f'{d.mae.value:.2f}':<5} "
                f"{fmt(Estimate(value=d.exact.value), percent=True):>5}  "
                f"{fmt(Estimate(value=d.withinOne.value), percent=True):>8}  "
                f"{fmt(Estimate(value=d.qwk.value)):<5}  {d.judgeUnknown:>7}  "
                f"{d.humanUnknown:>8}  {alpha}"
            )
    else:
        out.append("scores: no rating paired with a judgment")
    if report.self_ is not None:
        out += self_lines(report.self_)
    out += _names("unlabelled sessions", cov.unlabelled)
    out += _names("labelled sessions not found", cov.missing)
    out += _names("labelled sessions without a valid judge.json", cov.unjudged)
    out += _names("labelled sessions without a readable audit", cov.unaudited)
    out += _names("claim labels naming no audited claim", cov.unknownClaims)
    out += _names("sessions whose inputs changed after labelling", cov.changed)
    out += [f"  {p}" for p in cov.problems[:8]]
    return out


__all__ = ["agreement_lines", "fmt"]
