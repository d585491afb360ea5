"""Benchmark the citation audit's cost by mode, side by side with another revision, in one run.

Requests per claim and input tokens per checked claim, `--against quotes` and `--against
sources`, on `sessions_fixture/large` and a synthetic session (`bench/synth.py`, 2,000
claims by default, about five claims per source), through `audit_session` at concurrency
16 against a counting fake model (50 ms a request, answers following the fixture's labels
the way `scripts/make_cite_replays.py` writes them: a passage holding a claim's quote
answers as the quote would, others hardly support it, so the passages gathered are
realistic in number).

Each code tree is measured in a child process of its own with that tree's `harness` (and
its `scripts/make_cite_replays.py`, whose scripted model reads that tree's keys) first on
the path: this checkout, and `--baseline REV` (default: where this branch left `main`,
`git merge-base HEAD main`) unpacked from git into a temporary folder. The baseline runs
twice: as it shipped, and, where it had the engine option `pack` (round 2 packing the
findings of a source into one request), with `pack: false` (one request per finding, the
baseline's wire), so the wire's own savings show apart from packing's.

Tokens are estimated as characters / 4 (`estimate_tokens`) of what each tree's
`AnthropicCiteClient` sends: the system prompt plus the user message (`tok/claim`, the
figure the targets are for); `schema` is the answer schema (`output_config`) beside it,
counted the same way, since the API may read it too. `multi` counts the round-2 requests
holding more than one finding (a packed request's keys are `<concern>:confirm:<id>`).
`vs labels`: the share of claims with a claim-level label whose verdict is the one the
label calls for (Complete and unlabelled: supported; Partial, Incomplete, injected:
uncertain; Missing, number: unsupported).

    python bench/bench_sources.py [--claims 2000] [--baseline REV] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "bench"
LARGE = REPO / "sessions_fixture" / "large"
TARGET_TOKENS = {"quotes": 600, "sources": 1000}  # input tokens per checked claim (#18)
EXPECTED = {
    "Complete": "supported",
    "other": "supported",
    "Partial": "uncertain",
    "Incomplete": "uncertain",
    "injected": "uncertain",
    "Missing": "unsupported",
    "number": "unsupported",
}
_PACKED = re.compile(r"^(.+):confirm:")


# -- the child: one code tree, one session, one mode ----------------------------------------


def worker(args: argparse.Namespace) -> dict[str, Any]:
    code = Path(args.code)
    for path in (BENCH, code / "scripts", code):  # the measured tree's harness first
        sys.path.insert(0, str(path))
    import make_cite_replays as replays
    from fake import measure

    from harness.audit import audit_session
    from harness.model.cite_client import answer_schema
    from harness.model.cite_prompt import estimate_tokens, wire
    from harness.session.loader import load_session

    session = load_session(Path(args.session))
    # A tree from before per-claim budgets takes --max-passages; this one --passage-chars.
    import inspect

    takes = inspect.signature(audit_session).parameters
    budget: dict[str, int] = (
        {"passage_chars": args.passage_chars}
        if "passage_chars" in takes
        else {"max_passages": args.max_passages}
    )
    labels: dict[str, str] = {}
    if args.fixture:
        index = json.loads((replays.FIXTURES / "index.json").read_text(encoding="utf-8"))
        labels = replays._labels(args.fixture, index[args.fixture]["expect"])
    quotes = {c.id: [replays._words(q.text) for q in c.quotes] for _, c in session.claims}
    inner = replays._scripted(labels, quotes)
    lock = threading.Lock()
    count = {"requests": 0, "round2": 0, "multi": 0, "system": 0, "user": 0, "schema": 0}
    asked: list[dict[str, Any]] = []

    class Counting:
        def ask(self, request: dict[str, Any]) -> Any:
            reply = inner.ask(request)
            with lock:
                asked.append(request)
            time.sleep(args.latency)
            return reply

    options = json.loads(args.options) if args.options else None
    report, figures = measure(
        args.latency,
        args.concurrency,
        lambda _timed: audit_session(
            session,
            client=Counting(),
            concurrency=args.concurrency,
            against=args.against,
            options=options,
            **budget,
        ),
        lambda report: report.totals.requests,
    )
    # Counted after the run, not inside each timed request: bookkeeping no client does.
    for request in asked:
        system, user = wire(request)
        count["requests"] += 1
        count["system"] += estimate_tokens(system)
        count["user"] += estimate_tokens(user)
        schema = answer_schema(request["questions"])[0]
        count["schema"] += estimate_tokens(json.dumps(schema, separators=(",", ":")))
        confirms = [k for k in request["questions"] if "confirm:" in k]
        if confirms:
            count["round2"] += 1
            owners = {m.group(1) if (m := _PACKED.match(k)) else "" for k in confirms}
            count["multi"] += len(owners) > 1
    checked = sum(1 for c in report.claims if c.against == "sources" or c.requests)
    by_claim: dict[str, str] = {}
    for c in report.claims:
        by_claim.setdefault(c.claimId, c.verdict)
    quoted = {k.rsplit("-q", 1)[0] for k in labels if "-q" in k}
    graded = [
        (by_claim[cid], EXPECTED[label])
        for cid, label in labels.items()
        if cid in by_claim and label in EXPECTED and cid not in quoted
    ]
    if not labels:  # synthetic: every quote is verbatim and supports its claim
        graded = [(v, "supported") for v in by_claim.values()]
    return {
        **figures,
        **count,
        "claims": len(report.claims),
        "checked": checked,
        "vs_labels": sum(1 for got, want in graded if got == want) / max(1, len(graded)),
    }


# -- the parent: every tree, session and mode, side by side --------------------------------


def baseline_tree(rev: str, into: Path) -> tuple[str, Path]:
    """`rev`'s files (as committed) unpacked into `into`; its short hash."""
    short = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", rev],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    archive = into / "tree.tar"
    subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", "-o", str(archive), rev],
        check=True,
    )
    with tarfile.open(archive) as tar:
        tar.extractall(into / "tree", filter="data")
    archive.unlink()
    return short, into / "tree"


def has_pack(code: Path) -> bool:
    return "pack: bool" in (code / "harness" / "cite" / "options.py").read_text("utf-8")


def child(code: Path, session: Path, fixture: str, against: str, options: Any, args: Any) -> Any:
    argv = [sys.executable, str(Path(__file__).resolve()), "--worker", "--code", str(code)]
    argv += ["--session", str(session), "--fixture", fixture, "--against", against]
    argv += ["--latency", str(args.latency), "--concurrency", str(args.concurrency)]
    argv += ["--max-passages", str(args.max_passages)]
    if options is not None:
        argv += ["--options", json.dumps(options)]
    env = {**os.environ, "PYTHONPATH": str(code)}
    out = subprocess.run(argv, check=True, capture_output=True, text=True, env=env)
    return json.loads(out.stdout.splitlines()[-1])


def bench(
    name: str, session: Path, fixture: str, trees: list[tuple[str, Path, Any]], args: Any
) -> bool:
    print(f"\n{name}")
    print(
        f"  {'against':>8} {'code':<24} {'req':>6} {'req/claim':>9} {'round 2':>7} "
        f"{'multi':>5} {'tok/claim':>9} {'(system)':>8} {'schema':>6} {'over':>6} "
        f"{'vs labels':>9}"
    )
    ok = True
    for against in ("quotes", "sources"):
        for label, code, options in trees:
            r = child(code, session, fixture, against, options, args)
            checked = max(1, r["checked"])
            tokens = (r["system"] + r["user"]) / checked
            print(
                f"  {against:>8} {label:<24} {r['requests']:>6.0f} "
                f"{r['requests'] / max(1, r['claims']):>9.2f} {r['round2']:>7.0f} "
                f"{r['multi']:>5.0f} {tokens:>9.0f} {r['system'] / checked:>8.0f} "
                f"{r['schema'] / checked:>6.0f} {r['over']:>6.1%} {r['vs_labels']:>9.1%}"
            )
            if code == REPO:
                ok = ok and tokens <= TARGET_TOKENS[against] and r["multi"] == 0
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--claims", type=int, default=2000, help="synthetic session size")
    parser.add_argument("--per-source", type=int, default=5, help="synthetic claims per source")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per request")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--max-passages", type=int, default=10, help="a baseline's budget")
    parser.add_argument("--passage-chars", type=int, default=5400, help="this checkout's budget")
    parser.add_argument("--baseline", help="the revision to compare with (default: merge-base)")
    parser.add_argument("--strict", action="store_true", help="exit 1 if a target is missed")
    # The child's own options (one tree, one session, one mode; prints JSON).
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--code", help=argparse.SUPPRESS)
    parser.add_argument("--session", help=argparse.SUPPRESS)
    parser.add_argument("--fixture", default="", help=argparse.SUPPRESS)
    parser.add_argument("--against", default="quotes", help=argparse.SUPPRESS)
    parser.add_argument("--options", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args)))
        return 0

    rev = (
        args.baseline
        or subprocess.run(
            ["git", "-C", str(REPO), "merge-base", "HEAD", "main"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    print(
        f"{args.latency * 1000:.0f} ms per request, concurrency {args.concurrency}, "
        f"--passage-chars {args.passage_chars} (a baseline without it: --max-passages "
        f"{args.max_passages}); targets (this checkout): input tokens per "
        f"checked claim <= {TARGET_TOKENS['quotes']} quotes, <= {TARGET_TOKENS['sources']} "
        "sources, no round-2 request holding more than one finding"
    )
    print(f"load average {os.getloadavg()[0]:.1f} at the start")
    with tempfile.TemporaryDirectory() as tmp:
        short, base = baseline_tree(rev, Path(tmp))
        trees: list[tuple[str, Path, Any]] = [(f"{short} as shipped", base, None)]
        if has_pack(base):
            trees.append((f"{short} pack: false", base, {"pack": False}))
        trees.append(("this checkout", REPO, None))
        ok = bench("large (320 claims)", LARGE, "large", trees, args)
        sys.path.insert(0, str(BENCH))
        import synth

        folder = Path(tmp) / "synthetic"
        synth.CLAIMS_PER_SOURCE = args.per_source
        synth.make_session(folder, args.claims, seed=1)
        name = f"synthetic ({args.claims:,} claims, {args.per_source} per source)"
        ok = bench(name, folder, "", trees, args) and ok
    # The walls (`over`: past the ideal bound) vary with the shared machine's load.
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")
    print("all targets met" if ok else "A TARGET WAS MISSED")
    return 0 if ok or not args.strict else 1


if __name__ == "__main__":
    raise SystemExit(main())
