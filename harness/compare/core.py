"""`judge compare A B`: the whole comparison of two sides, as a typed result.

`compare` reads both sides (harness.compare.read), pairs them (harness.compare.pair) and
computes every figure (harness.compare.stats); `compare_sides` is the pure part, from two
sides already read. No model request; nothing is written.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from harness.audit.report import CHECKS, VERDICTS
from harness.compare.conditions import Gate, holds, parse_condition
from harness.compare.pair import PairBy, Paired, pair
from harness.compare.read import read_side
from harness.compare.result import (
    Bootstrap,
    ClaimsResult,
    CompareResult,
    Condition,
    Cost,
    CostSide,
    DimensionResult,
    FairnessWarning,
    Interval,
    LeftOut,
    Mover,
    Movers,
    Noise,
    Pairing,
    PairScores,
    ShareResult,
    SideInfo,
    SignedRankTest,
    Spend,
)
from harness.compare.sides import ComparedSession, Side
from harness.compare.stats import (
    LEVEL,
    NOISE_Z,
    RESAMPLES,
    SEED,
    mean_interval,
    pooled_sd,
    ratio_difference,
    signed_rank,
)
from harness.contract.rubric import DIMENSIONS
from harness.errors import UsageError

MOVERS = 5  # the largest drops and rises shown per figure
TOKENS = ("input", "output", "cacheWrite", "cacheRead")
CHANNELS = ("batchRequests", "batchTokens", "ordinaryRequests", "ordinaryTokens")


def compare(
    a: str | Path,
    b: str | Path,
    *,
    pair_by: PairBy = "id",
    fail_if: Sequence[str] = (),
) -> CompareResult:
    """Compare two folders of judged sessions (or results files): B − A, paired.

    Raises `UsageError` for a side that is neither, a malformed results file, a bad
    `--fail-if` condition, an unknown `pair_by`, or sides of which no session pairs."""
    if pair_by not in ("id", "question"):
        raise UsageError(f"pair_by {pair_by!r}: use 'id' or 'question'")
    gates = [parse_condition(text) for text in fail_if]  # before anything is read
    side_a, side_b = read_side(Path(a)), read_side(Path(b))
    if pair_by == "question" and "results" in (side_a.kind, side_b.kind):
        raise UsageError(
            "--pair-by question needs folders of sessions (a results file does not carry "
            "the question); pair by id, or pass the folders"
        )
    return compare_sides(side_a, side_b, pair_by=pair_by, gates=gates)


def compare_sides(
    a: Side, b: Side, *, pair_by: PairBy = "id", gates: Sequence[Gate] = ()
) -> CompareResult:
    """The comparison of two sides already read; a `UsageError` when no session pairs
    (there is no difference to show, and a gate must not pass on nothing)."""
    paired = pair(a, b, pair_by)
    if not paired.pairs:
        raise no_pair(a, b, paired, pair_by)
    dims = [dimension(d, paired.pairs) for d in DIMENSIONS]
    claims = claims_result(paired.pairs)
    warnings, unchecked = fairness(paired.pairs, a, b)
    conditions = [_condition(g, dims, claims) for g in gates]
    return CompareResult(
        a=_info(a),
        b=_info(b),
        pairing=Pairing(
            by=pair_by,
            pairs=len(paired.pairs),
            unpairedA=paired.unpaired_a,
            unpairedB=paired.unpaired_b,
            ambiguous=paired.ambiguous,
        ),
        pairs=[
            PairScores(a=sa.id, b=sb.id, scoresA=dict(sa.scores), scoresB=dict(sb.scores))
            for sa, sb in paired.pairs
        ],
        warnings=warnings,
        unchecked=unchecked,
        dimensions=dims,
        claims=claims,
        cost=cost(paired, a, b),
        movers=movers(paired.pairs),
        conditions=conditions,
        failed=any(c.failed for c in conditions),
        bootstrap=Bootstrap(resamples=RESAMPLES, seed=SEED, level=LEVEL),
    )


JUDGED_SIDE = (
    "a folder `judge batch` judged, or the file `judge batch --results` or `--merge-results` wrote"
)
EXAMPLES = 3  # session names quoted per side when none pairs


def _counted(label: str, side: Side) -> str:
    """A side as the refusal names it: its path, its kind, what it counted and left out,
    and the commonest reason it left sessions out when it counted none."""
    kind = "results file" if side.kind == "results" else "folder"
    text = (
        f"{label} {side.source} ({kind}: {len(side.sessions)} counted, "
        f"{len(side.left_out)} left out"
    )
    if side.left_out and not side.sessions:
        why, n = Counter(w for _, w in side.left_out).most_common(1)[0]
        text += f"; {n} of them because {why}"
    if side.hint is not None and not side.sessions:
        text += f"; {side.hint}"
    return text + ")"


def _examples(names: Iterable[str]) -> str:
    names = sorted(names)
    more = f" … and {len(names) - EXAMPLES} more" if len(names) > EXAMPLES else ""
    return ", ".join(names[:EXAMPLES]) + more


def no_pair(a: Side, b: Side, paired: Paired, pair_by: PairBy) -> UsageError:
    """Why nothing can be compared: a side holds no session that counts, or none of A's
    pairs with one of B's; both sides named with what they counted and left out, and
    the fix."""
    sides = f"{_counted('A', a)}; {_counted('B', b)}"
    empty = [label for label, side in (("A", a), ("B", b)) if not side.sessions]
    if empty:
        who = "A and B each hold" if len(empty) == 2 else f"{empty[0]} holds"
        point = "each side" if len(empty) == 2 else empty[0]
        return UsageError(
            f"nothing to compare: {who} no judged session that counts. {sides}. Fix: point "
            f"{point} at {JUDGED_SIDE}"
        )
    if pair_by == "id":
        fix = (
            "check that A and B are the sides you meant (a results file pairs by id only)"
            if "results" in (a.kind, b.kind)
            else "if the two runs name their folders differently, try --pair-by question; "
            "else check that A and B are the folders you meant"
        )
        return UsageError(
            "nothing to compare: no session of A pairs with one of B by id (the folder's "
            f"name). {sides}. A has {_examples(a.sessions)}; B has {_examples(b.sessions)}. "
            f"Fix: {fix}"
        )
    ambiguous = (
        f"; {len(paired.ambiguous)} not paired for want of one question per session "
        "(answer.md without a heading, or a question asked twice on a side)"
        if paired.ambiguous
        else ""
    )
    return UsageError(
        "nothing to compare: no session of A pairs with one of B by question (answer.md's "
        f"first heading){ambiguous}. {sides}. Fix: try --pair-by id, or check that the "
        "sessions' answer.md begin with their question as a heading"
    )


def _info(side: Side) -> SideInfo:
    return SideInfo(
        source=side.source,
        kind=side.kind,
        sessions=len(side.sessions),
        leftOut=[LeftOut(name=n, why=w) for n, w in side.left_out],
        auditsLeftOut=[LeftOut(name=n, why=w) for n, w in side.audits_left_out],
    )


# -- scores ------------------------------------------------------------------------------------


def _number(score: object) -> float | None:
    return float(score) if isinstance(score, int) and not isinstance(score, bool) else None


def dimension(
    name: str, pairs: Sequence[tuple[ComparedSession, ComparedSession]]
) -> DimensionResult:
    a_vals: list[float] = []
    b_vals: list[float] = []
    unknown_a = unknown_b = 0
    for sa, sb in pairs:
        va, vb = _number(sa.scores.get(name)), _number(sb.scores.get(name))
        unknown_a += va is None
        unknown_b += vb is None
        if va is not None and vb is not None:
            a_vals.append(va)
            b_vals.append(vb)
    diffs = np.asarray(b_vals, dtype=np.float64) - np.asarray(a_vals, dtype=np.float64)
    n = len(diffs)
    low, high = mean_interval(diffs)
    test = signed_rank(diffs)
    better, worse = int((diffs > 0).sum()), int((diffs < 0).sum())
    equal = n - better - worse
    mean = float(diffs.mean()) if n else None
    return DimensionResult(
        dimension=name,
        pairs=n,
        meanA=float(np.mean(a_vals)) if n else None,
        meanB=float(np.mean(b_vals)) if n else None,
        difference=mean,
        interval=Interval(low=low, high=high),
        wilcoxon=SignedRankTest(
            statistic=test.statistic, pValue=test.p, nonZero=test.nonzero, note=test.note
        ),
        better=better,
        worse=worse,
        equal=equal,
        betterShare=better / n if n else None,
        worseShare=worse / n if n else None,
        equalShare=equal / n if n else None,
        unknownA=unknown_a,
        unknownB=unknown_b,
        noise=noise(name, pairs, mean, n),
    )


def _sample_groups(sessions: Iterable[ComparedSession], name: str) -> list[list[float]]:
    groups = []
    for s in sessions:
        values = [v for v in (_number(x.get(name)) for x in s.samples) if v is not None]
        groups.append(values)
    return groups


def noise(
    name: str, pairs: Sequence[tuple[ComparedSession, ComparedSession]], mean: float | None, n: int
) -> Noise:
    """The judge's spread beside the difference, from `--samples` runs; else not measured."""
    sd_a = pooled_sd(_sample_groups((a for a, _ in pairs), name))
    sd_b = pooled_sd(_sample_groups((b for _, b in pairs), name))
    if sd_a is None and sd_b is None:
        return Noise(
            measured=False,
            note="the judge's noise was not measured: no run on either side carries "
            "--samples K (judge run --samples 3 measures it)",
        )
    note = "pooled within-session SD of the --samples judgments"
    if sd_a is None or sd_b is None:
        note += f"; measured on side {'B' if sd_a is None else 'A'} only, taken for both"
    sa = sd_a if sd_a is not None else sd_b
    sb = sd_b if sd_b is not None else sd_a
    assert sa is not None and sb is not None
    band = NOISE_Z * float(np.sqrt(sa**2 + sb**2)) / float(np.sqrt(n)) if n else None
    within = None if band is None or mean is None else abs(mean) <= band
    return Noise(measured=True, sdA=sd_a, sdB=sd_b, band=band, withinNoise=within, note=note)


# -- claims ------------------------------------------------------------------------------------


def claims_result(pairs: Sequence[tuple[ComparedSession, ComparedSession]]) -> ClaimsResult | None:
    audited = [
        (sa.claims, sb.claims)
        for sa, sb in pairs
        if sa.claims is not None and sb.claims is not None
    ]
    if not audited:
        return None
    # A results file carries three verdicts and no problems: both sides are then read alike.
    verdicts = [
        v for v in VERDICTS if all(v in ca.verdicts and v in cb.verdicts for ca, cb in audited)
    ]
    with_problems = all(ca.problems is not None and cb.problems is not None for ca, cb in audited)
    total_a = np.asarray([sum(ca.verdicts[v] for v in verdicts) for ca, _ in audited], float)
    total_b = np.asarray([sum(cb.verdicts[v] for v in verdicts) for _, cb in audited], float)

    def share(name: str, a_counts: list[int], b_counts: list[int]) -> ShareResult:
        sa, sb, diff, lo, hi = ratio_difference(
            np.asarray(a_counts, float), total_a, np.asarray(b_counts, float), total_b
        )
        return ShareResult(
            name=name, shareA=sa, shareB=sb, difference=diff, interval=Interval(low=lo, high=hi)
        )

    shares = [
        share(v, [ca.verdicts[v] for ca, _ in audited], [cb.verdicts[v] for _, cb in audited])
        for v in verdicts
    ]
    problems: list[ShareResult] = []
    only_a: list[str] = []
    only_b: list[str] = []
    if with_problems:
        for check in CHECKS:
            ca_counts = [(ca.problems or {}).get(check, 0) for ca, _ in audited]
            cb_counts = [(cb.problems or {}).get(check, 0) for _, cb in audited]
            if sum(ca_counts) and not sum(cb_counts):
                only_a.append(check)
            if sum(cb_counts) and not sum(ca_counts):
                only_b.append(check)
            problems.append(share(check, ca_counts, cb_counts))
    note = None
    if len(verdicts) < len(VERDICTS) or not with_problems:
        note = (
            "a side is a results file: shares are over "
            + ", ".join(verdicts)
            + " claims only, and problems are not compared"
        )
    return ClaimsResult(
        sessions=len(audited),
        claimsA=int(total_a.sum()),
        claimsB=int(total_b.sum()),
        verdicts=shares,
        problems=problems,
        onlyA=only_a,
        onlyB=only_b,
        note=note,
    )


# -- cost, movers, fairness ---------------------------------------------------------------------


def _spend(values: list[float]) -> Spend:
    return Spend(
        mean=statistics.fmean(values) if values else None,
        median=float(statistics.median(values)) if values else None,
        total=float(sum(values)),
    )


def _cost_side(sessions: list[ComparedSession]) -> CostSide | None:
    costs = [s.cost for s in sessions if s.cost is not None]
    if not costs:
        return None
    channelled = [c.channels for c in costs if c.channels is not None]
    return CostSide(
        sessions=len(costs),
        requests=_spend([float(c.requests) for c in costs]),
        tokens={t: _spend([float(c.tokens.get(t, 0)) for c in costs]) for t in TOKENS},
        seconds=_spend([c.seconds for c in costs if c.seconds is not None]),
        channelSessions=len(channelled),
        channels={k: _spend([float(c[k]) for c in channelled]) for k in CHANNELS}
        if channelled
        else {},
    )


def cost(paired: Paired, a: Side, b: Side) -> Cost:
    cost_a = _cost_side([sa for sa, _ in paired.pairs])
    cost_b = _cost_side([sb for _, sb in paired.pairs])
    if a.kind == b.kind == "results":
        note: str | None = (
            "A and B are results files, which carry no run record: their cost and time are "
            "not known"
        )
    else:
        notes = [
            said
            for label, side, spent in (("A", a, cost_a), ("B", b, cost_b))
            if (said := _cost_note(label, side, spent, len(paired.pairs))) is not None
        ]
        note = "; ".join(notes) or None
    return Cost(a=cost_a, b=cost_b, note=note)


def _cost_note(label: str, side: Side, spent: CostSide | None, pairs: int) -> str | None:
    """What is not known of a side's cost and time, and why: a results file carries no
    run record; a folder's paired sessions may lack a usable one."""
    if side.kind == "results":
        return (
            f"{label} is a results file, which carries no run record: its cost and time are "
            "not known"
        )
    if spent is None:
        return (
            f"{label}'s paired sessions have no usable run record: their cost and time are "
            "not known"
        )
    if spent.sessions < pairs:
        return (
            f"{label}'s cost and time are over {spent.sessions} of its {pairs} paired "
            "sessions: the others have no usable run record"
        )
    return None


def _mover(sa: ComparedSession, sb: ComparedSession, before: float, after: float) -> Mover:
    return Mover(
        a=sa.id,
        b=sb.id,
        before=before,
        after=after,
        change=after - before,
        pageA=sa.page,
        pageB=sb.page,
    )


def _ranked(name: str, moved: list[Mover]) -> Movers:
    drops = sorted((m for m in moved if m.change < 0), key=lambda m: (m.change, m.a))
    rises = sorted((m for m in moved if m.change > 0), key=lambda m: (-m.change, m.a))
    return Movers(what=name, drops=drops[:MOVERS], rises=rises[:MOVERS])


def movers(pairs: Sequence[tuple[ComparedSession, ComparedSession]]) -> list[Movers]:
    out = []
    for name in DIMENSIONS:
        moved = []
        for sa, sb in pairs:
            va, vb = _number(sa.scores.get(name)), _number(sb.scores.get(name))
            if va is not None and vb is not None:
                moved.append(_mover(sa, sb, va, vb))
        out.append(_ranked(name, moved))
    support = []
    for sa, sb in pairs:
        if sa.claims and sb.claims and sa.claims.total and sb.claims.total:
            before = sa.claims.verdicts.get("supported", 0) / sa.claims.total
            after = sb.claims.verdicts.get("supported", 0) / sb.claims.total
            support.append(_mover(sa, sb, before, after))
    out.append(_ranked("supported", support))
    return out


FAIRNESS = (
    ("judge model", "model"),
    ("audit model", "auditModel"),
    ("brief", "brief"),
    ("judging options", "options"),
    ("run record version", "recordVersion"),
    ("rubric version", "rubricVersion"),
    ("harness version", "harnessVersion"),
)


def _values(sessions: Iterable[ComparedSession], attr: str) -> list[str]:
    found: dict[str, int] = {}
    for s in sessions:
        if s.judging is not None:
            value = getattr(s.judging, attr)
            key = "none" if value is None else str(value)
            found[key] = found.get(key, 0) + 1
    return [f"{k} ({n})" for k, n in sorted(found.items())]


def fairness(
    pairs: Sequence[tuple[ComparedSession, ComparedSession]], a: Side, b: Side
) -> tuple[list[FairnessWarning], list[str]]:
    """Warnings when the paired sessions of the two sides were judged differently, and
    what could not be checked."""
    unchecked: list[str] = []
    if "results" in (a.kind, b.kind):
        unchecked.append(
            "a side is a results file, which carries no run record: how it was judged "
            "(models, brief, options) could not be compared"
        )
        return [], unchecked
    warnings = []
    for what, attr in FAIRNESS:
        va = _values((s for s, _ in pairs), attr)
        vb = _values((s for _, s in pairs), attr)
        if {v.rsplit(" (", 1)[0] for v in va} != {v.rsplit(" (", 1)[0] for v in vb}:
            warnings.append(
                FairnessWarning(
                    what=what,
                    a=va,
                    b=vb,
                    message=f"the sides were judged with different {what}s: each "
                    "difference mixes a pipeline change with a judge change",
                )
            )
    return warnings, unchecked


def _condition(gate: Gate, dims: list[DimensionResult], claims: ClaimsResult | None) -> Condition:
    interval = Interval(low=None, high=None)
    found = False
    for d in dims:
        if d.dimension == gate.name:
            interval, found = d.interval, True
    if claims is not None:
        for s in (*claims.verdicts, *claims.problems):
            if s.name == gate.name:
                interval, found = s.interval, True
    verdict = holds(gate, interval.low, interval.high)
    if verdict is None:
        why = (
            f"not evaluated: {gate.name} has no interval (fewer than 2 pairs, or no audit)"
            if found
            else f"not evaluated: {gate.name} was not compared (no audit on a side, or a "
            "results file that does not carry it)"
        )
    else:
        side = "upper" if gate.op == "<" else "lower"
        end = interval.high if gate.op == "<" else interval.low
        beyond = "below" if gate.op == "<" else "above"
        why = (
            f"the whole interval lies {beyond} {gate.threshold:g} ({side} end {end:+.3f})"
            if verdict
            else f"the interval does not lie wholly {beyond} {gate.threshold:g} "
            f"({side} end {end:+.3f})"
        )
    return Condition(
        text=gate.text,
        name=gate.name,
        op=gate.op,
        threshold=gate.threshold,
        interval=interval,
        evaluated=verdict is not None,
        failed=bool(verdict),
        why=why,
    )


__all__ = ["compare", "compare_sides"]
