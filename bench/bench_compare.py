"""`judge compare` on 1,000 paired sessions, side by side with `judge report` on the same.

Two roots of N synthetic sessions each (a heading in answer.md, one finding of a few
claims) are written with their artifacts as a run of this installation leaves them: a
valid judge.json, a citation report (`CitationReport`) and a run record (`RunRecord`),
both serialised and sealed by the real writer (`sealed_artifact(kind, document)`), the
record vouching for the judge.json and the report by sha256 and naming the session's
folder and digest. B's scores differ from A's by a known pattern.

Each command then runs in a process of its own (`python -m harness`), timed wall-clock
and in CPU seconds, its own peak memory (max RSS) sampled from the kernel (bench/peak.py):
- `judge compare A B --json` at N/10 and N pairs (flat memory: the two should be close);
- `judge report A` (the index and every session's page) on the same N sessions.

Usage: `python bench/bench_compare.py [--sessions 1000] [--claims 6]`. It prints one JSON
document; docs/compare.md quotes a run's figures.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.peak import PeakRSS
from harness.artifacts.record import (
    ArtifactRef,
    ArtifactSet,
    BriefInfo,
    Outcome,
    RunRecord,
    TokenTotals,
    UpToDateStamp,
)
from harness.audit.record import AuditRecord
from harness.audit.report import CitationReport, ClaimResult, totals
from harness.contract.rubric import DIMENSIONS, RUBRIC_VERSION
from harness.fs.digest import digest_session
from harness.fs.origin import sealed_artifact
from harness.usage import Usage

VERDICTS = ("supported", "uncertain", "unsupported")
ENV_KEY = "JUDGE_STATE_DIR"


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def write_session(folder: Path, index: int, claims: int, shift: int) -> None:
    """One judged session: its own files, judge.json, citations.json and run.json."""
    (folder / "findings").mkdir(parents=True)
    (folder / "answer.md").write_text(f"# Question number {index}?\n\nAn answer.\n", "utf-8")
    finding = {
        "id": "sq1",
        "subQuestion": f"Part of question {index}",
        "claims": [
            {"id": f"sq1-c{k}", "text": f"Claim {k} of session {index}.", "sourceIds": ["s1"]}
            for k in range(claims)
        ],
    }
    (folder / "findings" / "sq1.json").write_text(json.dumps(finding), "utf-8")
    scores = {d: (index * (i + 3) + shift * (i % 2)) % 6 for i, d in enumerate(DIMENSIONS)}
    judge = json.dumps(
        {"scores": scores, "unknowns": [], "note": "Synthetic.", "rubricVersion": RUBRIC_VERSION}
    ).encode()
    (folder / "judge.json").write_bytes(judge)
    run_id = f"20261206T000000Z-{index:08x}"
    results = [
        ClaimResult(
            claimId=f"sq1-c{k}",
            findingId="sq1",
            file="findings/sq1.json",
            pointer=f"/claims/{k}",
            verdict=VERDICTS[(index + k + shift) % 3],
            problems=[],
            quotes=[],
        )
        for k in range(claims)
    ]
    report = CitationReport(
        sessionId=folder.name,
        offline=True,
        concurrency=0,
        claims=results,
        totals=totals(results, 0),
        usage=Usage(),
        models=[],
        runId=run_id,
    )
    (folder / ".judge").mkdir()
    citations = sealed_artifact("citations", report.to_dict())
    (folder / ".judge" / "citations.json").write_bytes(citations)
    ended = "2026-12-06T00:00:01+00:00"
    record = RunRecord(
        runId=run_id,
        rubricVersion=RUBRIC_VERSION,
        sessionId=folder.name,
        sessionDir=str(folder),
        sessionDigest=digest_session(folder, skip=(".judge",)).value,
        brief=BriefInfo(path="briefs/judge-deep.md", digest="sha256:" + "1" * 64),
        model="claude-sonnet-5-5",
        options={"samples": 1, "max_turns": 40},
        started="2026-12-06T00:00:00+00:00",
        ended=ended,
        seconds=1.0 + index % 7,
        sessionSummary=None,
        previousJudge=None,
        citations=AuditRecord(model="claude-haiku-5-5", requests=claims, claims=claims),
        turns=4,
        usage=TokenTotals(input_tokens=1000, output_tokens=300, total_tokens=1300),
        outcome=Outcome(kind="model-written", reason="synthetic", wroteJudge=True),
        upToDate=UpToDateStamp(inputs="sha256:" + "2" * 64, judgeSha256=_sha(judge)),
        artifacts=ArtifactSet(
            judge=ArtifactRef(runId=run_id, sha256=_sha(judge), ended=ended),
            citations=ArtifactRef(runId=run_id, sha256=_sha(citations), ended=ended),
        ),
    )
    (folder / ".judge" / "run.json").write_bytes(sealed_artifact("run", record.document()))


def build(root: Path, sessions: int, claims: int, shift: int) -> Path:
    root.mkdir(parents=True)
    for i in range(sessions):
        write_session(root / f"s{i:05d}", i, claims, shift)
    return root


def measure(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Wall and CPU seconds (user + system: the machine may be shared), peak RSS (MB) and
    exit code of `python -m harness ARGS`."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    peak = PeakRSS(proc.pid)  # not wait4's: see bench/peak.py
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    return {
        "seconds": round(seconds, 2),
        "cpuSeconds": round(usage.ru_utime + usage.ru_stime, 2),
        "peakMB": round(peak.stop(), 1),
        "exit": os.waitstatus_to_exitcode(status),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--claims", type=int, default=6)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.environ[ENV_KEY] = str(base / "state")  # this run's own key, sealed and read
        env = {**os.environ, "COLUMNS": "120"}
        small = max(args.sessions // 10, 2)
        started = time.perf_counter()
        a = build(base / "A", args.sessions, args.claims, 0)
        b = build(base / "B", args.sessions, args.claims, 1)
        a_small = build(base / "a-small", small, args.claims, 0)
        b_small = build(base / "b-small", small, args.claims, 1)
        built = round(time.perf_counter() - started, 1)
        rows = {
            f"compare {small} pairs": measure(
                ["compare", str(a_small), str(b_small), "--json"], env
            ),
            f"compare {args.sessions} pairs": measure(["compare", str(a), str(b), "--json"], env),
            f"compare {args.sessions} pairs --html": measure(
                ["compare", str(a), str(b), "--html", str(base / "cmp.html")], env
            ),
            f"report {args.sessions} sessions (one root)": measure(
                ["report", str(a), "-o", str(base / "index.html")], env
            ),
        }
        print(
            json.dumps(
                {
                    "sessions": args.sessions,
                    "claimsPerSession": args.claims,
                    "buildSeconds": built,
                    "python": sys.version.split()[0],
                    "cpus": os.cpu_count(),
                    "rows": rows,
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
