"""Benchmark the citation engine's scheduling against the ideal bound.

A synthetic workload of claims (each a source of 1-3 quotes and one screened concern,
"supports the claim") goes through `judge_each` with a fake model that sleeps a fixed
latency per request (`bench/fake.py`). For each concurrency it reports requests per claim,
wall time against the ideal (total request latency / concurrency) and the engine's CPU time
as a share of wall: the process's CPU less the fake model's own (shown beside it).

    python bench/bench_cite.py                      # 2,000 claims at concurrency 4 and 16
    python bench/bench_cite.py --claims 200 --concurrency 16 --repeat 5 --strict
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from fake import Timed, measure  # noqa: E402

from harness.cite import (  # noqa: E402
    CiteSource,
    Concerns,
    Criterion,
    Noul,
    NoulCriteria,
    ScreenedConcern,
    judge_each,
)

TARGET_OVER = 0.15  # wall within 15% of the ideal at concurrency 16
TARGET_CPU = 0.05  # harness CPU under 5% of wall

CRITERIA = NoulCriteria(
    true=Criterion(what="The quote states what the claim says, or directly implies it."),
    false=Criterion(
        what="The quote does not state the claim.",
        not_for="a quote that is merely on the same topic",
    ),
)


def claims(n: int, seed: int) -> list[tuple[CiteSource, Concerns]]:
    """n claims, each with its own concern (the claim text is in the question) and quotes."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        claim = f"Claim {i}: the measured effect was {rng.randint(1, 90)}% in trial {i}."
        supports = ScreenedConcern(
            name="supports",
            detect=Noul(
                question=f"Does {{passage}} support this claim? {claim}", criteria=CRITERIA
            ),
            confirm=Noul(
                question=f"Does {{passage}} evidence this claim? {claim}", criteria=CRITERIA
            ),
        )
        quotes = [
            {"id": f"c{i}-q{j}", "sourceId": f"s{j}", "text": f"Quote {j} for claim {i}. " * 8}
            for j in range(rng.randint(1, 3))
        ]
        source = CiteSource.model_validate({"as": "quotes", "passages": quotes})
        out.append((source, Concerns(concerns=[supports])))
    return out


def meets(concurrency: int, over: float, cpu_share: float) -> bool:
    """The issue's targets: within 15% of ideal at concurrency 16, harness CPU under 5%."""
    return (concurrency < 16 or over <= TARGET_OVER) and cpu_share < TARGET_CPU


def run(
    work: list[tuple[CiteSource, Concerns]], concurrency: int, latency: float
) -> dict[str, float]:
    def requests(client: Timed) -> int:
        return sum(r.requests for r in judge_each(work, client, {"concurrency": concurrency}))

    _, figures = measure(latency, concurrency, requests, lambda asked: asked)
    return {**figures, "per_claim": figures["requests"] / len(work)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--claims", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per request")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[4, 16])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1, help="runs per concurrency")
    parser.add_argument("--strict", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args(argv)

    work = claims(args.claims, args.seed)
    print(f"{args.claims} claims, {args.latency * 1000:.0f} ms per request")
    print(
        f"{'conc':>5} {'requests':>9} {'req/claim':>9} {'wall s':>8} {'ideal s':>8} "
        f"{'over ideal':>10} {'cpu/wall':>8} {'(process)':>9}"
    )
    ok = True
    for concurrency in args.concurrency:
        for _ in range(args.repeat):
            r = run(work, concurrency, args.latency)
            print(
                f"{concurrency:>5} {r['requests']:>9.0f} {r['per_claim']:>9.2f} "
                f"{r['wall']:>8.2f} {r['ideal']:>8.2f} {r['over']:>10.1%} "
                f"{r['cpu_share']:>8.1%} {r['process_share']:>9.1%}"
            )
            ok = ok and meets(concurrency, r["over"], r["cpu_share"])
    print("all targets met" if ok else "A TARGET WAS MISSED")
    return 0 if ok or not args.strict else 1


if __name__ == "__main__":
    raise SystemExit(main())
