"""Evidence recall of sources-mode retrieval: today's `harness.audit.passages` beside main's
and the branch point's.

In sources mode a claim is judged only on the passages the audit sends for its cited source.
This bench measures, on two evidence sets, whether the marked evidence is among them, for
three codes in one run:

- the sets: ``expertqa`` (``bench/data/evidence/``, built from ExpertQA, MIT; a claim's
  evidence is a whole human-marked passage) and ``articles`` (``bench/data/evidence2/``,
  generated, CC0; a claim's evidence is one line of an encyclopedia-like article); see their
  READMEs;
- ``main``: main's `split` + `narrow(passages, claims, 10)` (`bench/legacy_passages.py`, the
  default `--max-passages 10`): one set of passages per source, shared by its claims;
- ``d872468``: `harness/audit/passages.py` as it was at the branch point d872468, loaded
  from `git show` into a module of its own (left out where git or the commit is missing);
- ``today``: `harness.audit.passages.select(source, text, claims)` with the default
  per-claim budget (`CLAIM_CHARS`), each claim its own passages, the source their union.

For each set's two shapes (``long`` / ``short``: one stored passage, or one sentence, per
paragraph; ``lines`` / ``paragraphs``: sentences one per line, or each its own paragraph) and
each document kind (``single``: one claim cites it; ``quad``: four claims cite it) it prints,
per claim: full recall against the claim's own passages and against all passages the source
sends (the round-1 set every claim of the source is screened over; for main the two are the
same), partial recall, characters of the claim's own passages, and characters the source
sends (per source, and divided by its claims). Definitions are in `bench/evidence.py`.
``--variants`` measures today's code with one thing changed, ``--budgets`` the branch point's
ranking and today's at several per-claim budgets, both on every configuration of both sets.

It also times the hostile case of issue #22: a 4,000-word claim against 8 MiB of tiny
paragraphs (today on the full 8 MiB; main on ``--hostile-main-mib`` MiB of the same text,
since main needs tens of seconds on 8 MiB), says which cuts today's code reported, and times
claims stating rounded numbers against 8 MiB of numbers.

Usage: ``PYTHONPATH=. python bench/bench_retrieval.py [--variants] [--budgets] [--misses]
[--set expertqa|articles] [--no-main] [--no-hostile] [--hostile-main-mib 1]``.
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
import time
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import evidence as ev  # noqa: E402
import legacy_passages as legacy  # noqa: E402

from harness.audit import passages  # noqa: E402

LEGACY_LIMIT = 10  # main's default --max-passages
Spans = list[list[tuple[int, int]]]


def main_retrieve(source_id: str, text: str, claims: Sequence[str]) -> Spans:
    kept = legacy.narrow(legacy.split(source_id, text), list(claims), LEGACY_LIMIT)
    spans = [(p.start, p.end) for p in kept]
    return [spans for _ in claims]


def today_retrieve(source_id: str, text: str, claims: Sequence[str]) -> Spans:
    found = passages.select(source_id, text, list(claims))
    return [[(p.start, p.end) for p in own] for own in found.by_query]


_CLAUSE = re.compile(r"[,;:()]|\b(?:and|but|while|which|whereas|because|although)\b")


def clauses_retrieve(source_id: str, text: str, claims: Sequence[str]) -> Spans:
    """Today's, with each claim's clauses (3+ words, split at , ; : and conjunctions) as
    extra queries, their rankings interleaved with the whole claim's (tried, not kept)."""
    pool = passages.split(source_id, text)
    out: Spans = []
    for claim in claims:
        parts = [c.strip() for c in _CLAUSE.split(claim) if c and len(c.split()) >= 3]
        queries = [claim, *parts] if len(parts) > 1 else [claim]
        labels = [f"q{i}" for i in range(len(queries))]
        rankings = [
            sorted(s, key=lambda i, s=s: (-s[i], i))  # type: ignore[misc]
            for s in passages._score(pool, queries, labels, passages.MAX_QUERY_TERMS, [])
        ]
        order: list[int] = []
        seen: set[int] = set()
        for depth in range(max(map(len, rankings), default=0)):
            for ranking in rankings:
                if depth < len(ranking) and ranking[depth] not in seen:
                    seen.add(ranking[depth])
                    order.append(ranking[depth])
        kept = passages._take(pool, order or list(range(len(pool))), passages.CLAIM_CHARS, 2)
        out.append([(pool[i].start, pool[i].end) for i in kept])
    return out


def variant(max_chars: int = passages.MAX_CHARS, **options: Any) -> ev.Retrieve:
    def retrieve(source_id: str, text: str, claims: Sequence[str]) -> Spans:
        pool = passages.split(source_id, text, max_chars=max_chars)
        found = passages.narrow(pool, list(claims), **options)
        return [[(p.start, p.end) for p in own] for own in found.by_query]

    return retrieve


VARIANTS: dict[str, ev.Retrieve] = {
    "no neighbours": variant(neighbours=0),
    "1 neighbour each side": variant(neighbours=1),
    "no neighbour in the rank": variant(neighbour_weight=0.0),
    "700-character passages, 1 neighbour": variant(700, neighbours=1),
    "clauses as extra queries": clauses_retrieve,
    "specific weight 1 (off)": variant(specific_weight=1.0),
    "specific weight 2": variant(specific_weight=2.0),
    "specific weight 4": variant(specific_weight=4.0),
}
Config = tuple[str, str, str, list[ev.Document]]


def _configs() -> list[Config]:
    """(set, shape, kind, documents) of every configuration of both sets."""
    out: list[Config] = []
    for name, (shapes, load) in ev.SETS.items():
        for shape in shapes:
            docs = load(shape)
            out.extend(
                (name, shape, kind, [d for d in docs if d.kind == kind]) for kind in ev.KINDS
            )
    return out


def _header(first: str, configs: list[Config]) -> list[str]:
    labels = [f"{n} {s}, {1 if k == 'single' else 4}" for n, s, k, _ in configs]
    return [f"| {first} | " + " | ".join(labels) + " |", "|---" * (len(labels) + 1) + "|"]


def _row(label: str, retrieve: ev.Retrieve, configs: list[Config]) -> str:
    cells = []
    for *_, group in configs:
        s, _ = ev.score(group, retrieve)
        cells.append(f"{s.full_recall:.1%} / {s.source_recall:.1%}, {s.chars_per_claim:,.0f}")
    return f"| {label} | " + " | ".join(cells) + " |"


def variants_table() -> list[str]:
    """Today's code with one thing changed, on both sets: full recall own / source, and
    characters per claim (own)."""
    configs = _configs()
    lines = _header("variant (else as today)", configs)
    lines.append(_row("today", today_retrieve, configs))
    lines.extend(_row(name, retrieve, configs) for name, retrieve in VARIANTS.items())
    return lines


BUDGETS = (3600, 4500, 5000, 5400)


def budgets_table() -> list[str]:
    """The branch point's ranking and today's at several per-claim budgets (`CLAIM_CHARS`),
    on both sets: full recall own / source, and characters per claim (own)."""
    configs = _configs()
    lines = _header("code, budget", configs)
    base = base_module()
    for budget in BUDGETS:
        for code, module in ((BASE, base), ("today", passages)):
            if module is None:
                continue

            def retrieve(
                sid: str, text: str, claims: Sequence[str], m: Any = module, b: int = budget
            ) -> Spans:
                found = m.narrow(m.split(sid, text), list(claims), b)
                return [[(p.start, p.end) for p in own] for own in found.by_query]

            lines.append(_row(f"{code}, {budget:,}", retrieve, configs))
    return lines


BASE = "d872468"  # the branch point of the ranking change measured beside today's


def base_module(commit: str = BASE) -> Any | None:
    """`harness/audit/passages.py` as it is at `commit`, loaded from git into a module of
    its own (None where git or the commit is not at hand)."""
    try:
        source = subprocess.run(
            ["git", "-C", str(REPO), "show", f"{commit}:harness/audit/passages.py"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    # The clock moved from `harness.audit.clock` to `harness.clock` after that commit.
    source = source.replace("from harness.audit.clock import", "from harness.clock import")
    module = types.ModuleType(f"passages_{commit}")
    module.__file__ = f"{commit}:harness/audit/passages.py"
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def select_retrieve(module: Any) -> ev.Retrieve:
    def retrieve(source_id: str, text: str, claims: Sequence[str]) -> Spans:
        found = module.select(source_id, text, list(claims))
        return [[(p.start, p.end) for p in own] for own in found.by_query]

    return retrieve


def codes(with_main: bool = True) -> list[tuple[str, ev.Retrieve]]:
    out: list[tuple[str, ev.Retrieve]] = [("main", main_retrieve)] if with_main else []
    base = base_module()
    if base is not None:
        out.append((BASE, select_retrieve(base)))
    out.append(("today", today_retrieve))
    return out


def recall_table(
    sets: Sequence[str] = tuple(ev.SETS), with_main: bool = True, misses: bool = False
) -> list[str]:
    lines = [
        "| set | shape | claims per source | code | full recall (own) | full recall (source) "
        "| partial recall | chars per claim (own) | chars per source | source chars / claim "
        "| seconds |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    missed_lines: list[str] = []
    retrievals = codes(with_main)
    for name in sets:
        shapes, load = ev.SETS[name]
        for shape in shapes:
            docs = load(shape)
            for kind in ev.KINDS:
                group = [d for d in docs if d.kind == kind]
                for code, retrieve in retrievals:
                    start = time.perf_counter()
                    s, missed = ev.score(group, retrieve)
                    took = time.perf_counter() - start
                    lines.append(
                        f"| {name} | {shape} | {1 if kind == 'single' else 4} ({s.claims} claims) "
                        f"| {code} | {s.full_recall:.1%} | {s.source_recall:.1%} "
                        f"| {s.partial_recall:.1%} | {s.chars_per_claim:,.0f} "
                        f"| {s.chars_per_source:,.0f} | {s.source_chars / s.claims:,.0f} "
                        f"| {took:.2f} |"
                    )
                    if misses and code == "today":
                        missed_lines.append(f"{name} {shape} {kind}: {' '.join(missed)}")
    return [*lines, *(["", *missed_lines] if missed_lines else [])]


def hostile_text(mib: float, seed: int = 22) -> tuple[str, str]:
    """Tiny paragraphs (two words and a full stop each) up to `mib` MiB, and a 4,000-word
    claim drawn from the same words."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(5000)] + ["river", "dam", "cocoa", "export", "volta"]
    paras: list[str] = []
    size = 0
    while size < mib * 1024 * 1024:
        p = f"{rng.choice(words)} {rng.choice(words)}."
        paras.append(p)
        size += len(p) + 1
    claim = " ".join(rng.choice(words) for _ in range(4000))
    return "\n".join(paras), claim


def _timed(call: Any) -> tuple[Any, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = call()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def hostile(main_mib: float) -> list[str]:
    """Wall and CPU seconds (the machine's cores are shared: CPU time is the steadier)."""
    text, claim = hostile_text(8)
    found, wall, cpu = _timed(lambda: passages.select("s1", text, [claim]))
    lines = [
        f"today, 8 MiB ({len(text):,} characters, {text.count(chr(10)) + 1:,} paragraphs), "
        f"4,000-word claim: {wall:.2f} s wall, {cpu:.2f} s CPU, "
        f"{len(found.passages)} passages kept; cuts said:",
        *(f"  - {note}" for note in found.notes),
    ]
    small, claim = hostile_text(main_mib)
    _, wall, cpu = _timed(lambda: legacy.narrow(legacy.split("s1", small), [claim], LEGACY_LIMIT))
    lines.append(
        f"main, {main_mib:g} MiB of the same kind of text, same claim: "
        f"{wall:.2f} s wall, {cpu:.2f} s CPU"
    )
    _, wall, cpu = _timed(lambda: passages.select("s1", small, [claim]))
    lines.append(f"today, {main_mib:g} MiB of the same text: {wall:.2f} s wall, {cpu:.2f} s CPU")
    numbers, rounding, plain = numbers_text()
    for what, claims in (("stating rounded numbers", rounding), ("stating none", plain)):
        _, wall, cpu = _timed(lambda c=claims: passages.select("s1", numbers, c))
        lines.append(
            f"today, 8 MiB of numbers, {len(claims)} claims {what}: "
            f"{wall:.2f} s wall, {cpu:.2f} s CPU"
        )
    return lines


def numbers_text(seed: int = 32) -> tuple[str, list[str], list[str]]:
    """About 8 MiB of lines of six numbers each (every range a rounded number stands for
    holds some), 50 claims each stating rounded numbers, and 50 stating none."""
    rng = random.Random(seed)
    text = "\n".join(
        " ".join(f"{rng.randrange(100000):,}" for _ in range(6)) + "." for _ in range(200000)
    )
    rounding = [
        f"About {rng.randrange(1, 99)},{rng.randrange(100, 999)}00 people, roughly 75 thousand."
        for _ in range(50)
    ]
    return text, rounding, ["Nothing here is a number at all."] * 50


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--hostile-main-mib", type=float, default=1.0)
    parser.add_argument(
        "--variants", action="store_true", help="also measure the alternatives tried"
    )
    parser.add_argument(
        "--budgets", action="store_true", help="also measure other per-claim budgets"
    )
    parser.add_argument("--set", choices=tuple(ev.SETS), action="append", help="(default: all)")
    parser.add_argument("--no-main", action="store_true", help="leave main's code out")
    parser.add_argument("--no-hostile", action="store_true", help="leave the timing out")
    parser.add_argument("--misses", action="store_true", help="list today's missed claims")
    args = parser.parse_args(argv)
    print(
        f"today: passages of at most {passages.MAX_CHARS} characters, "
        f"{passages.CLAIM_CHARS:,} characters per claim, {passages.NEIGHBOURS} neighbours, "
        f"specific terms weighing {passages.SPECIFIC_WEIGHT:g} times; "
        f"main: passages of at most {legacy.MAX_CHARS} characters, {LEGACY_LIMIT} per source"
    )
    print("\n".join(recall_table(args.set or tuple(ev.SETS), not args.no_main, args.misses)))
    if args.variants:
        print()
        print("\n".join(variants_table()))
    if args.budgets:
        print()
        print("\n".join(budgets_table()))
    if not args.no_hostile:
        print()
        print("\n".join(hostile(args.hostile_main_mib)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
