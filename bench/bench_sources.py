"""Benchmark the citation audit's cost by mode: requests and input tokens per claim, wall time.

Sessions: `sessions_fixture/large`, and a synthetic session (`bench/synth.py`, 2,000 claims
by default) written with about five claims per source. Each runs with `--against quotes`
and `--against sources` through `audit_session` at concurrency 16, sources mode twice:
`unpacked` asks each claim's round-2 set alone (the engine's `pack: false`, as before
round 2 was packed), `sources` packs the sets of a source's claims into one request (the
default). Against a counting fake model: 50 ms a request, answers following the fixture's
labels the way `scripts/make_cite_replays.py` writes them (a passage holding a claim's quote
answers as the quote would; others hardly support it), so the passages gathered are
realistic in number.

Tokens are estimated as characters / 4 (`harness.model.cite_prompt.estimate_tokens`) of
what the client sends: the system prompt plus the user message, as `AnthropicCiteClient`
writes them. The answer schema (`output_config`) is not counted. Beside it, `prev wire`
counts the same requests as the client wrote them before this change
(`bench/legacy_cite_prompt.py`: every question `[ask, path]` or a full `compare` object,
the 584-character system prompt), so `unpacked` with `prev wire` is the engine and wire
as they were, and `sources` with `tok/claim` as they are.

`vs labels` is the share of claims carrying a claim-level label (ExpertQA's support
label, or a planted number or injection; not a claim whose quote is planted) whose verdict
is the one that label calls for (Complete and unlabelled: supported; Partial, Incomplete,
injected: uncertain; Missing, number: unsupported). `same as unpacked` counts the claims
whose verdict the packed run leaves as the unpacked one gave it.

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

import legacy_cite_prompt as legacy  # noqa: E402
import make_cite_replays as replays  # noqa: E402
import synth  # noqa: E402
from fake import measure  # noqa: E402

from harness.audit import audit_session  # noqa: E402
from harness.cite import Reply  # noqa: E402
from harness.model.cite_prompt import estimate_tokens, wire  # noqa: E402
from harness.session.loader import Session, load_session  # noqa: E402

LARGE = REPO / "sessions_fixture" / "large"
TARGET_REQUESTS = 1.5  # per claim, sources mode
TARGET_TOKENS = 800  # input tokens per checked claim, both modes
TARGET_OVER = 0.15  # wall past the ideal bound at concurrency 16
EXPECTED = {
    "Complete": "supported",
    "other": "supported",
    "Partial": "uncertain",
    "Incomplete": "uncertain",
    "injected": "uncertain",
    "Missing": "unsupported",
    "number": "unsupported",
}


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
        self.asked: list[dict[str, Any]] = []
        self.cpu = 0.0

    def ask(self, request: dict[str, Any]) -> Reply:
        start = time.thread_time()
        system, user = wire(request)  # what AnthropicCiteClient writes for it
        reply = self._inner.ask(request)
        with self._lock:
            self.requests += 1
            self.system += estimate_tokens(system)
            self.user += estimate_tokens(user)
            self.asked.append(request)
            self.cpu += time.thread_time() - start
        time.sleep(self._latency)
        return reply

    def count_before(self) -> None:
        """`before`: the same requests as the previous wire wrote them. Counted after the
        run, not inside it: it is bookkeeping of the benchmark, which no client does."""
        for request in self.asked:
            self.before += estimate_tokens(legacy.SYSTEM)
            self.before += estimate_tokens(legacy.user_message(request))
        self.asked.clear()


def labels_of(name: str, folder: Path) -> dict[str, str]:
    index = json.loads((REPO / "sessions_fixture" / "index.json").read_text(encoding="utf-8"))
    if folder.parent == REPO / "sessions_fixture" and name in index:
        return replays._labels(name, index[name]["expect"])
    return {}  # synthetic: every quote is verbatim and supports its claim


def run(
    session: Session, labels: dict[str, str], against: str, args: argparse.Namespace
) -> tuple[dict[str, float], dict[str, str]]:
    fake = Counting(session, labels, args.latency)
    report, figures = measure(
        args.latency,
        args.concurrency,
        lambda _timed: audit_session(
            session,
            client=fake,
            concurrency=args.concurrency,
            against="sources" if against == "unpacked" else against,  # type: ignore[arg-type]
            passage_chars=args.passage_chars,
            options={"pack": against != "unpacked"},
        ),
        lambda report: report.totals.requests,
    )
    fake.count_before()
    # Checked: asked about (a quotes-mode claim without a quote is not).
    checked = sum(1 for c in report.claims if c.against == "sources" or c.requests)
    verdicts = report.totals.verdicts
    by_claim: dict[str, str] = {}
    for c in report.claims:
        by_claim.setdefault(c.claimId, c.verdict)
    in_order = {f"{c.file}#{c.pointer}": c.verdict for c in report.claims}
    quoted = {k.rsplit("-q", 1)[0] for k in labels if "-q" in k}
    graded = [
        (by_claim[cid], EXPECTED[label])
        for cid, label in labels.items()
        if cid in by_claim and label in EXPECTED and cid not in quoted
    ]
    if not labels:  # synthetic: every quote is verbatim and supports its claim
        graded = [(v, "supported") for v in by_claim.values()]
    right = sum(1 for got, want in graded if got == want)
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
        "vs_labels": right / max(1, len(graded)),
        "graded": len(graded),
    }, in_order


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
        f"{'(system)':>8} {'prev wire':>9} {'wall s':>7} {'ideal s':>7} {'over':>6} "
        f"{'vs labels':>9}  verdicts"
    )
    ok = True
    seen: dict[str, dict[str, str]] = {}
    for against in ("quotes", "unpacked", "sources"):
        r, seen[against] = run(session, labels, against, args)
        print(
            f"  {against:>8} {r['checked']:>7.0f} {r['requests']:>6.0f} {r['per_claim']:>9.2f} "
            f"{r['tokens']:>9.0f} {r['system']:>8.0f} {r['before']:>9.0f} {r['wall']:>7.2f} "
            f"{r['ideal']:>7.2f} {r['over']:>6.1%} {r['vs_labels']:>9.1%}  "
            f"{r['supported']:.0f} supported, {r['uncertain']:.0f} uncertain, "
            f"{r['unsupported']:.0f} unsupported, {r['error']:.0f} error"
        )
        if against == "unpacked":
            continue  # the comparison, not a target
        ok = ok and r["tokens"] <= TARGET_TOKENS and r["over"] <= TARGET_OVER
        if against == "sources":
            ok = ok and r["per_claim"] <= TARGET_REQUESTS
    before, after = seen["unpacked"], seen["sources"]
    same = sum(1 for cid, v in after.items() if before.get(cid) == v)
    print(
        f"  same as unpacked: {same:,} of {len(after):,} claims; vs labels over {r['graded']:.0f}"
    )
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--claims", type=int, default=2000, help="synthetic session size")
    parser.add_argument("--per-source", type=int, default=5, help="synthetic claims per source")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per request")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--passage-chars", type=int, default=5400)
    parser.add_argument("--strict", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args(argv)
    print(
        f"{args.latency * 1000:.0f} ms per request, concurrency {args.concurrency}, "
        f"--passage-chars {args.passage_chars}; targets: sources <= {TARGET_REQUESTS} "
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
