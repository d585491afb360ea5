"""Benchmark the foundation: session loading, judge.json validation, CLI start-up.

Times are the best of N in-process runs (CPU via time.process_time, wall via perf_counter),
and the median of N runs (wall, and the child's user + system CPU) for the `judge validate` /
`judge show` subprocesses, whose cost is mostly interpreter start-up and imports.
Targets (from the project brief):

- the ~300-claim fixture `sessions_fixture/large`: load + validate well under 200 ms CPU;
- a synthetic 20,000-claim session: loaded in seconds;
- `judge validate` / `judge show` on a small session: start-up under 0.3 s.

    python bench/bench_load.py                   # all of it
    python bench/bench_load.py --claims 5000 --runs 3 --strict   # exit 1 if a target is missed
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from harness.contract.judgment import check_judge_file, fallback_judgment  # noqa: E402
from harness.session.loader import load_session  # noqa: E402
from harness.session.show import show_document  # noqa: E402

LARGE = REPO / "sessions_fixture" / "large"
JUDGE_EXAMPLE = """{
  "scores": {"factualAccuracy": 4, "citationAccuracy": 5, "completeness": 3,
             "sourceQuality": 4, "toolEfficiency": "Unknown"},
  "unknowns": ["toolEfficiency"],
  "note": "Claims match their quotes; no tool log, so toolEfficiency is Unknown.",
  "rubricVersion": "deep-judge-v1"
}
"""


@dataclass
class Row:
    what: str
    cpu_s: float | None
    wall_s: float
    target: str = ""
    ok: bool | None = None
    detail: str = ""


def best_of(runs: int, action: Callable[[], Any]) -> tuple[float, float, Any]:
    """Best CPU and best wall time over `runs` calls (each measured on its own)."""
    cpu = wall = float("inf")
    result: Any = None
    for _ in range(runs):
        c0, w0 = time.process_time(), time.perf_counter()
        result = action()
        cpu = min(cpu, time.process_time() - c0)
        wall = min(wall, time.perf_counter() - w0)
    return cpu, wall, result


def median_subprocess(runs: int, argv: list[str]) -> tuple[float, float, int]:
    """Median wall and median CPU (user + system of the child) over `runs` runs.

    CPU is the steadier figure on a busy machine: wall also counts waiting for a core.
    """
    walls, cpus, code = [], [], 0
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, check=False, cwd=REPO)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        code = done.returncode
    return statistics.median(walls), statistics.median(cpus), code


def load_and_validate(folder: Path) -> tuple[int, bool]:
    session = load_session(folder)
    check = check_judge_file(folder / "judge.json")
    show_document(session, check)  # what `judge show --json` builds
    return sum(1 for _ in session.claims), check.valid


def synthetic(folder: Path, n_claims: int) -> float:
    from synth import make_session  # bench/synth.py: deterministic, no data set needed

    start = time.perf_counter()
    make_session(folder, n_claims, seed=0)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5, help="in-process repetitions (best of)")
    parser.add_argument("--starts", type=int, default=7, help="subprocess runs (median of)")
    parser.add_argument("--claims", type=int, default=20_000, help="synthetic session size")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)

    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="judge-bench-") as tmp_name:
        tmp = Path(tmp_name)
        judge_file = tmp / "judge.json"
        judge_file.write_text(JUDGE_EXAMPLE, encoding="utf-8")

        bad = tmp / "bad.json"
        bad.write_text(JUDGE_EXAMPLE.replace('"Unknown"', '"unknown"').replace("4,", "4.0,"))
        # First calls in this process: a valid file needs neither jsonschema nor pydantic;
        # the first invalid one pays the jsonschema import and the validator build.
        for label, path in (("valid", judge_file), ("invalid", bad)):
            cpu, wall, check = best_of(1, lambda p=path: check_judge_file(p))
            note = f"{len(check.issues)} issue(s)"
            rows.append(Row(f"validate {label} judge.json (first call)", cpu, wall, detail=note))
        for label, path in (("valid", judge_file), ("invalid", bad)):
            cpu, wall, check = best_of(args.runs * 20, lambda p=path: check_judge_file(p))
            rows.append(Row(f"validate {label} judge.json (warm)", cpu, wall))

        if LARGE.is_dir():
            large = tmp / "large"
            _copy_session(LARGE, large)
            judge_path = large / "judge.json"
            judge_path.write_text(JUDGE_EXAMPLE, encoding="utf-8")
            cpu, wall, (claims, valid) = best_of(args.runs, lambda: load_and_validate(large))
            rows.append(
                Row(
                    f"large fixture: load + validate + show doc ({claims} claims)",
                    cpu,
                    wall,
                    "< 0.200 s CPU",
                    cpu < 0.2 and valid,
                )
            )
        else:
            rows.append(Row("large fixture", None, 0.0, detail=f"{LARGE} not found: skipped"))

        synth_dir = tmp / "synth"
        made = synthetic(synth_dir, args.claims)
        fallback = fallback_judgment("bench").to_json()
        (synth_dir / "judge.json").write_text(fallback, encoding="utf-8")
        runs = max(1, min(args.runs, 3))
        cpu, wall, (claims, _) = best_of(runs, lambda: load_and_validate(synth_dir))
        rows.append(
            Row(
                f"synthetic: load + validate + show doc ({claims:,} claims)",
                cpu,
                wall,
                "seconds (< 5 s)",
                wall < 5.0,
                f"generated in {made:.1f} s",
            )
        )

        small = tmp / "small"
        clean = REPO / "sessions_fixture" / "clean"
        if clean.is_dir():
            _copy_session(clean, small)
        else:
            synthetic(small, 9)
        (small / "judge.json").write_text(JUDGE_EXAMPLE, encoding="utf-8")
        python = [sys.executable]
        wall, cpu, _ = median_subprocess(args.starts, [*python, "-c", "pass"])
        rows.append(Row("python -c pass (interpreter floor)", cpu, wall))
        for label, command in (
            ("judge validate FILE", ["validate", str(small / "judge.json")]),
            ("judge validate INVALID-FILE", ["validate", str(bad)]),
            ("judge show SESSION --json", ["show", str(small), "--json"]),
            ("judge show SESSION", ["show", str(small)]),
        ):
            wall, cpu, code = median_subprocess(args.starts, [*python, "-m", "harness", *command])
            ok = wall < 0.3 and code == (1 if "INVALID" in label else 0)
            rows.append(Row(f"start-up: {label}", cpu, wall, "< 0.300 s wall", ok, f"exit {code}"))

    _print(rows)
    missed = [row.what for row in rows if row.ok is False]
    if missed:
        print(f"\nmissed: {', '.join(missed)}", file=sys.stderr)
    return 1 if args.strict and missed else 0


def _copy_session(source: Path, target: Path) -> None:
    import shutil

    shutil.copytree(source, target, ignore=shutil.ignore_patterns("judge.json", ".judge"))


def _print(rows: list[Row]) -> None:
    cpus = os.cpu_count()
    print(
        f"# {platform.python_implementation()} {platform.python_version()}, "
        f"{platform.machine()}, {cpus} CPU(s), {platform.system()} {platform.release()}"
    )
    header = f"{'measure':58} {'CPU s':>8} {'wall s':>8}  {'target':16} {'':4} note"
    print(header)
    print("-" * len(header))
    for row in rows:
        cpu = f"{row.cpu_s:8.4f}" if row.cpu_s is not None else f"{'':>8}"
        wall = f"{row.wall_s:8.4f}" if row.wall_s else f"{'':>8}"
        verdict = {True: "ok", False: "MISS", None: ""}[row.ok]
        print(f"{row.what:58} {cpu} {wall}  {row.target:16} {verdict:4} {row.detail}")


if __name__ == "__main__":
    sys.exit(main())
