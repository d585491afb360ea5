"""Benchmark the citation engine's scheduling against the ideal bound.

A synthetic workload of claims (each a source of 1-3 quotes and one screened concern,
"supports the claim") goes through `judge_many` with a `ScriptedClient` that sleeps a fixed
latency per request. For each concurrency it reports requests per claim, wall time against
the ideal (total request latency / concurrency) and the harness's CPU time as a share of wall.

    python bench/bench_cite.py                      # 2,000 claims at concurrency 4 and 16
    python bench/bench_cite.py --claims 200 --concurrency 16
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.cite import (
    Concerns,
    Criterion,
    Noul,
    NoulCriteria,
    ScreenedConcern,
    ScriptedClient,
    Source,
    judge_many,
)

CRITERIA = NoulCriteria(
    true=Criterion(what="The quote states what the claim says, or directly implies it."),
    false=Criterion(
        what="The quote does not state the claim.",
        not_for="a quote that is merely on the same topic",
    ),
)


def claims(n: int, seed: int) -> list[tuple[Source, Concerns]]:
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
        source = Source.model_validate({"as": "quotes", "passages": quotes})
        out.append((source, Concerns(concerns=[supports])))
    return out


def _probability(key: str) -> float:
    # Deterministic per question key: the same replies at every concurrency.
    return int(hashlib.blake2b(key.encode(), digest_size=4).hexdigest(), 16) / 0xFFFFFFFF


def answers(request: dict[str, Any]) -> dict[str, object]:
    return {key: _probability(key) for key in request["questions"]}


def run(work: list[tuple[Source, Concerns]], concurrency: int, latency: float) -> dict[str, float]:
    client = ScriptedClient(answers, delay=latency, keep=False)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    reports = judge_many(work, client, {"concurrency": concurrency})
    wall = time.perf_counter() - wall0
    cpu = time.process_time() - cpu0
    requests = sum(r.requests for r in reports)
    ideal = requests * latency / concurrency
    return {
        "concurrency": concurrency,
        "requests": requests,
        "per_claim": requests / len(work),
        "wall": wall,
        "ideal": ideal,
        "over": wall / ideal - 1 if ideal else 0.0,
        "cpu_share": cpu / wall,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--claims", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per request")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[4, 16])
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    work = claims(args.claims, args.seed)
    print(f"{args.claims} claims, {args.latency * 1000:.0f} ms per request")
    print(
        f"{'conc':>5} {'requests':>9} {'req/claim':>9} {'wall s':>8} {'ideal s':>8} "
        f"{'over ideal':>10} {'cpu/wall':>8}"
    )
    for concurrency in args.concurrency:
        r = run(work, concurrency, args.latency)
        print(
            f"{concurrency:>5} {r['requests']:>9.0f} {r['per_claim']:>9.2f} {r['wall']:>8.2f} "
            f"{r['ideal']:>8.2f} {r['over']:>10.1%} {r['cpu_share']:>8.1%}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
