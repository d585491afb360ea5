"""What reading the audit's deadline costs in ranking and number checks, and how soon they
stop once it has passed (issue 22 §2).

Side by side in one process: `main`'s `harness/audit/passages.py` and `numbers.py` at a
git revision (loaded from `git show REV:path`, default the branch point with main), and
this tree's, without a deadline, with one far away (the clock read but never passed), and
with one that passes `--after` seconds into the work. Inputs (deterministic):

- `rank-long`: a 4,000-word claim against 8 MiB of two-word paragraphs (2 MiB ranked);
- `rank-many`: the same text, 400 claims of 400 words each citing it;
- `numbers`: every number form of an 8 MiB text of dates, counts and percentages (the
  reading a claim's number check does once per source).

Times are wall seconds, best of `--repeat` (the machine is shared); `overrun` is how long a
run went on after its deadline passed (until `OutOfTime`).

    python bench/bench_deadline.py [--rev REV] [--repeat 3] [--after 0.2] [--json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from harness.audit import numbers as numbers_now  # noqa: E402
from harness.audit import passages as passages_now  # noqa: E402
from harness.clock import Deadline, OutOfTime  # noqa: E402


def module_at(rev: str, path: str, name: str) -> types.ModuleType:
    """`path` of the repository at `rev`, as a module of its own (stdlib imports only)."""
    source = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{rev}:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    exec(compile(source, f"{rev}:{path}", "exec"), module.__dict__)
    return module


def branch_point() -> str:
    out = subprocess.run(
        ["git", "-C", str(REPO), "merge-base", "HEAD", "main"],
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip()


def words(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice("abcdefghijklmnop") for _ in range(4)) for _ in range(n)]


def tiny_paragraphs(chars: int) -> str:
    vocab = words(4000, 1)
    out, size, i = [], 0, 0
    while size < chars:
        paragraph = f"{vocab[i % 4000]} {vocab[i * 7 % 4000]}."
        out.append(paragraph)
        size += len(paragraph) + 1
        i += 1
    return "\n".join(out)


def number_text(chars: int) -> str:
    out, size, i = [], 0, 0
    while size < chars:
        line = (
            f"In {1900 + i % 120} there were {i * 37:,} cases, {i % 97}.5% on "
            f"2003-06-{10 + i % 18} (in June, or Jan.).\n"
        )
        out.append(line)
        size += len(line)
        i += 1
    return "".join(out)


def best(jobs: dict[str, Callable[[], Any]], repeat: int) -> dict[str, float]:
    """Each job's best wall time over `repeat` rounds, the jobs taking turns in each round
    (so that a burst of the machine's other load falls on all of them alike)."""
    times: dict[str, list[float]] = {name: [] for name in jobs}
    for _ in range(repeat):
        for name, job in jobs.items():
            began = time.monotonic()
            job()
            times[name].append(time.monotonic() - began)
    return {name: min(spent) for name, spent in times.items()}


def overrun(job: Callable[[float], Any], after: float, repeat: int) -> float | None:
    """Seconds past a deadline `after` s away before `job(deadline)` stops (None: it ended
    before the deadline)."""
    worst: float | None = None
    for _ in range(repeat):
        deadline = time.monotonic() + after
        try:
            job(deadline)
        except OutOfTime:
            late = time.monotonic() - deadline
            worst = late if worst is None else max(worst, late)
        else:
            return None
    return worst


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rev", default=None, help="main's revision (default: the branch point)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--after", type=float, default=0.2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rev = args.rev or branch_point()
    # main's loops read their own clock module (harness/audit/clock.py, now harness/clock.py)
    module_at(rev, "harness/audit/clock.py", "harness.audit.clock")
    passages_main = module_at(rev, "harness/audit/passages.py", "passages_main")
    numbers_main = module_at(rev, "harness/audit/numbers.py", "numbers_main")

    text = tiny_paragraphs(8 * 1024 * 1024)
    long_claim = " ".join(words(4000, 2))
    many = [" ".join(words(400, 10 + k)) for k in range(400)]
    digits = number_text(8 * 1024 * 1024)
    far = time.monotonic() + 10**6
    rows: list[dict[str, Any]] = []

    def ranked(queries: list[str]) -> dict[str, Any]:
        jobs = {
            "main": lambda: passages_main.select("s1", text, queries),
            "today": lambda: passages_now.select("s1", text, queries),
            "today, deadline far": lambda: passages_now.select(
                "s1", text, queries, deadline=Deadline(far)
            ),
        }
        return {
            **best(jobs, args.repeat),
            "overrun": overrun(
                lambda d: passages_now.select("s1", text, queries, deadline=Deadline(d)),
                args.after,
                args.repeat,
            ),
        }

    rows.append({"input": "rank-long", **ranked([long_claim])})
    rows.append({"input": "rank-many", **ranked(many)})

    def forms(module: types.ModuleType, **deadline: Deadline) -> Callable[[], Any]:
        def job() -> Any:
            evidence = module.Evidence(digits, **deadline)
            return evidence.plain(), evidence.digits(), evidence.months()

        return job

    def forms_until(deadline: float) -> Any:
        return forms(numbers_now, deadline=Deadline(deadline))()

    rows.append(
        {
            "input": "numbers",
            **best(
                {
                    "main": forms(numbers_main),
                    "today": forms(numbers_now),
                    "today, deadline far": forms(numbers_now, deadline=Deadline(far)),
                },
                args.repeat,
            ),
            "overrun": overrun(forms_until, args.after, args.repeat),
        }
    )
    if args.json:
        print(json.dumps({"rev": rev, "after": args.after, "rows": rows}, indent=2))
        return 0
    print(f"main at {rev[:12]}; deadline {args.after:g} s into the work; best of {args.repeat}")
    print(f"{'input':<10} {'main':>8} {'today':>8} {'far':>8} {'overrun':>9}")
    for row in rows:
        late = "ended" if row["overrun"] is None else f"{row['overrun']:.3f}"
        print(
            f"{row['input']:<10} {row['main']:>8.3f} {row['today']:>8.3f} "
            f"{row['today, deadline far']:>8.3f} {late:>9}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
