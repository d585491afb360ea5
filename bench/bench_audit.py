"""Benchmark the citation audit: offline checks, and support at scale against the ideal bound.

Sessions: the 320-claim fixture `sessions_fixture/large`, and a synthetic session
(`bench/synth.py`, 2,000 claims by default, every 10th quote altered so the nearest-passage
search runs too). Support goes through `audit_session` with a `ScriptedClient` that sleeps a
fixed latency per request (deterministic answers per question key, so about half the quotes
match in round 1). For each concurrency it reports requests per claim, wall time against the
ideal (total request latency / concurrency) and the harness's CPU time as a share of wall:
the process's CPU less what the fake model's own threads spent inside `ask` (hashing its
answers, going to sleep), which a real client spends in the SDK instead. The process figure
is shown beside it.

Requests for a session of N claims: sum over claims with q_i > 0 quotes of
ceil(q_i / 10) + [some quote matched] -- between 1 and 2 per quoted claim when q_i <= 10,
0 for a claim without quotes, 0 offline.

    python bench/bench_audit.py                          # large + 2,000 synthetic, conc 4 and 16
    python bench/bench_audit.py --claims 500 --concurrency 16 --strict
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_cite import TARGET_CPU, TARGET_OVER, meets  # noqa: E402
from bench_load import best_of  # noqa: E402
from fake import measure  # noqa: E402
from synth import make_session  # noqa: E402

from harness.audit import audit_session  # noqa: E402
from harness.audit.core import Against  # noqa: E402
from harness.session.loader import Session, load_session  # noqa: E402

LARGE = REPO / "sessions_fixture" / "large"


def offline(session: Session, runs: int) -> tuple[float, float, int]:
    """Best wall and CPU seconds of `runs` offline audits (checks read snapshots afresh)."""
    cpu, wall, report = best_of(runs, lambda: audit_session(session, offline=True))
    return wall, cpu, sum(len(c.problems) for c in report.claims)


def online(
    session: Session, concurrency: int, latency: float, against: Against
) -> dict[str, float]:
    report, figures = measure(
        latency,
        concurrency,
        lambda client: audit_session(
            session, client=client, concurrency=concurrency, against=against
        ),
        lambda report: report.totals.requests,
    )
    quoted = sum(1 for c in report.claims if c.requests)
    return {
        **figures,
        "per_claim": figures["requests"] / max(1, len(report.claims)),
        "per_quoted": figures["requests"] / max(1, quoted),
    }


def bench(name: str, session: Session, args: argparse.Namespace) -> bool:
    claims = sum(1 for _ in session.claims)
    quotes = sum(len(c.quotes) for _, c in session.claims)
    wall, cpu, problems = offline(session, args.runs)
    print(
        f"\n{name} (--against {args.against}): {claims:,} claims, {quotes:,} quotes, "
        f"{len(session.snapshots):,} snapshots"
    )
    print(
        f"  offline checks: {wall * 1000:.0f} ms wall, {cpu * 1000:.0f} ms CPU "
        f"(best of {args.runs}), {problems} problems"
    )
    print(
        f"  {'conc':>5} {'requests':>9} {'req/claim':>9} {'req/quoted':>10} {'wall s':>8} "
        f"{'ideal s':>8} {'over ideal':>10} {'cpu/wall':>8} {'(process)':>9}"
    )
    ok = True
    for concurrency in args.concurrency:
        for _ in range(args.repeat):
            r = online(session, concurrency, args.latency, args.against)
            print(
                f"  {concurrency:>5} {r['requests']:>9.0f} {r['per_claim']:>9.2f} "
                f"{r['per_quoted']:>10.2f} {r['wall']:>8.2f} {r['ideal']:>8.2f} "
                f"{r['over']:>10.1%} {r['cpu_share']:>8.1%} {r['process_share']:>9.1%}"
            )
            ok = ok and meets(concurrency, r["over"], r["cpu_share"])
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--claims", type=int, default=2000, help="synthetic session size")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per request")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[4, 16])
    parser.add_argument("--runs", type=int, default=3, help="offline runs (best is shown)")
    parser.add_argument("--repeat", type=int, default=1, help="support runs per concurrency")
    parser.add_argument("--strict", action="store_true", help="exit 1 if a target is missed")
    parser.add_argument(
        "--against",
        choices=["auto", "sources", "quotes"],
        default="quotes",
        help="what support is judged against (quotes: the claim-quote audit this bench "
        "was built for; bench_sources.py measures the modes side by side)",
    )
    args = parser.parse_args(argv)

    print(
        f"{args.latency * 1000:.0f} ms per request; targets: within {TARGET_OVER:.0%} of ideal "
        f"at concurrency 16, harness CPU under {TARGET_CPU:.0%} of wall"
    )
    ok = bench("sessions_fixture/large", load_session(LARGE), args)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "synthetic"
        make_session(folder, args.claims, seed=1, defect_every=10)
        ok = bench(f"synthetic ({args.claims:,} claims)", load_session(folder), args) and ok
    print("\nall targets met" if ok else "\nA TARGET WAS MISSED")
    return 0 if ok or not args.strict else 1


if __name__ == "__main__":
    raise SystemExit(main())
