"""Benchmark the citation audit's cost by mode: requests and input tokens per claim, wall time.

Sessions: `sessions_fixture/large`, and a synthetic session (`bench/synth.py`, 2,000 claims
by default) written with about five claims per source. Each runs with `--against quotes`
and `--against sources` through `audit_session` at concurrency 16 against a counting fake
model: 50 ms a request, answers following the fixture's labels the way
`scripts/make_cite_replays.py` writes them (a passage holding a claim's quote answers as the
quote would; others hardly support it), so the passages gathered are realistic in number.

Tokens are estimated as characters / 4 (`harness.model.cite_prompt.estimate_tokens`) of
what the client sends: the system prompt plus the user message, as `AnthropicCiteClient`
writes them. The answer schema (`output_config`) is not counted. Beside it, `before` counts
the same requests as the client wrote them before `cite_prompt` (the request's JSON as is,
with the earlier 1,195-character system prompt), for comparison.

    python bench/bench_sources.py [--claims 2000] [--latency 0.05] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "scripts"))

import make_cite_replays as replays  # noqa: E402
import synth  # noqa: E402
from fake import measure  # noqa: E402

from harness.audit import audit_session  # noqa: E402
from harness.cite import Reply  # noqa: E402
from harness.model.cite_prompt import SYSTEM, estimate_tokens, user_message  # noqa: E402
from harness.session.loader import Session, load_session  # noqa: E402

LARGE = REPO / "sessions_fixture" / "large"
BEFORE_SYSTEM_CHARS = 1195  # the system prompt before cite_prompt (git history)
TARGET_REQUESTS = 1.5  # per claim, sources mode
TARGET_TOKENS = 800  # input tokens per checked claim, both modes
TARGET_OVER = 0.15  # wall past the ideal bound at concurrency 16


class Counting:
    """The fake model: sleeps `latency`, answers like the replays, counts what it is sent."""

    def __init__(self, session: Session, labels: dict[str, str], latency: float) -> None:
        quotes = {c.id: [replays._words(q.text) for q in c.quotes] for _, c in session.claims}
        self._inner = replays._scripted(labels, quotes)
        self._latency = latency
        self._lock = threading.Lock()
        self.requests = 0
        self.system = 0
        self.user = 0
        self.before = 0
        self.cpu = 0.0

    def ask(self, request: dict[str, Any]) -> Reply:
        start = time.thread_time()
        user = estimate_tokens(user_message(request))
        before = (BEFORE_SYSTEM_CHARS + 3) // 4 + estimate_tokens(
            json.dumps(request, ensure_ascii=False)
        )
        reply = self._inner.ask(request)
        with self._lock:
            self.requests += 1
            self.system += estimate_tokens(SYSTEM)
            self.user += user
            self.before += before
            self.cpu += time.thread_time() - start
        time.sleep(self._latency)
        return reply


def labels_of(name: str, folder: Path) -> dict[str, str]:
    index = json.loads((REPO / "sessions_fixture" / "index.json").read_text(encoding="utf-8"))
    if folder.parent == REPO / "sessions_fixture" and name in index:
        return replays._labels(name, index[name]["expect"])
    return {}  # synthetic: every quote is verbatim and supports its claim


def run(
    session: Session, labels: dict[str, str], against: str, args: argparse.Namespace
) -> dict[str, float]:
    fake = Counting(session, labels, args.latency)
    report, figures = measure(
        args.latency,
        args.concurrency,
        lambda _timed: audit_session(
            session,
            client=fake,
            concurrency=args.concurrency,
            against=against,  # type: ignore[arg-type]
            max_passages=args.max_passages,
        ),
        lambda report: report.totals.requests,
    )
    # Checked: asked about (a quotes-mode claim without a quote is not).
    checked = sum(1 for c in report.claims if c.against == "sources" or c.requests)
    verdicts = report.totals.verdicts
    return {
        **figures,
        "claims": len(report.claims),
        "checked": checked,
        "per_claim": fake.requests / max(1, len(report.claims)),
        "per_checked": fake.requests / max(1, checked),
        "tokens": (fake.system + fake.user) / max(1, checked),
        "system": fake.system / max(1, checked),
        "before": fake.before / max(1, checked),
        "supported": verdicts.supported,
        "uncertain": verdicts.uncertain,
        "unsupported": verdicts.unsupported,
        "error": verdicts.error,
    }


def bench(name: str, folder: Path, args: argparse.Namespace) -> bool:
    session = load_session(folder)
    labels = labels_of(name, folder)
    cites: dict[str, int] = {}
    for _, claim in session.claims:
        for sid in dict.fromkeys([*claim.sourceIds, *(q.sourceId for q in claim.quotes)]):
            cites[sid] = cites.get(sid, 0) + 1
    print(
        f"\n{name}: {sum(1 for _ in session.claims):,} claims, {len(session.snapshots):,} "
        f"snapshots, {sum(cites.values()) / max(1, len(cites)):.1f} claims per cited source"
    )
    print(
        f"  {'against':>8} {'checked':>7} {'req':>6} {'req/claim':>9} {'tok/claim':>9} "
        f"{'(system)':>8} {'(before)':>8} {'wall s':>7} {'ideal s':>7} {'over':>6}  verdicts"
    )
    ok = True
    for against in ("quotes", "sources"):
        r = run(session, labels, against, args)
        print(
            f"  {against:>8} {r['checked']:>7.0f} {r['requests']:>6.0f} {r['per_claim']:>9.2f} "
            f"{r['tokens']:>9.0f} {r['system']:>8.0f} {r['before']:>8.0f} {r['wall']:>7.2f} "
            f"{r['ideal']:>7.2f} {r['over']:>6.1%}  {r['supported']:.0f} supported, "
            f"{r['uncertain']:.0f} uncertain, {r['unsupported']:.0f} unsupported, "
            f"{r['error']:.0f} error"
        )
        ok = ok and r["tokens"] <= TARGET_TOKENS and r["over"] <= TARGET_OVER
        if against == "sources":
            ok = ok and r["per_claim"] <= TARGET_REQUESTS
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--claims", type=int, default=2000, help="synthetic session size")
    parser.add_argument("--per-source", type=int, default=5, help="synthetic claims per source")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per request")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--max-passages", type=int, default=10)
    parser.add_argument("--strict", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args(argv)
    print(
        f"{args.latency * 1000:.0f} ms per request, concurrency {args.concurrency}, "
        f"--max-passages {args.max_passages}; targets: sources <= {TARGET_REQUESTS} "
        f"requests/claim, <= {TARGET_TOKENS} input tokens per checked claim, wall within "
        f"{TARGET_OVER:.0%} of ideal"
    )
    ok = bench("large", LARGE, args)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "synthetic"
        synth.CLAIMS_PER_SOURCE = args.per_source
        synth.make_session(folder, args.claims, seed=1)
        ok = bench(f"synthetic ({args.claims:,} claims)", folder, args) and ok
    print("\nall targets met" if ok else "\nA TARGET WAS MISSED")
    return 0 if ok or not args.strict else 1


if __name__ == "__main__":
    raise SystemExit(main())
