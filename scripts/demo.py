"""`make demo`: a replayed `judge run` on a copy of a fixture session. No key, no network.

Copies sessions_fixture/clean to demo-out/clean (the fixture itself is never
touched), runs the real CLI with the fixture's recorded model replies, and
shows the receipt (stdout) and the human summary (stderr).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURE = "clean"


def main() -> int:
    source = REPO / "sessions_fixture" / FIXTURE
    replay = REPO / "sessions_fixture" / "replays" / f"{FIXTURE}.jsonl"
    out = REPO / "demo-out" / FIXTURE
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(source, out)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    judge = [sys.executable, "-m", "harness"]
    command = [*judge, "run", str(out), "--replay", str(replay), "--fetch", "stored"]
    cite_replay = REPO / "sessions_fixture" / "replays" / f"{FIXTURE}.cite.jsonl"
    shown = "judge run demo-out/clean --replay sessions_fixture/replays/clean.jsonl --fetch stored"
    if cite_replay.exists():
        command += ["--cite-replay", str(cite_replay)]
        shown += " \\\n    --cite-replay sessions_fixture/replays/clean.cite.jsonl"
    print(f"$ {shown}")
    sys.stdout.flush()
    # stderr joins stdout so the receipt and the summary print in order.
    ran = subprocess.run(command, env=env, check=False, stderr=subprocess.STDOUT)
    print(f"(exit {ran.returncode})\n")
    print("$ judge show demo-out/clean")
    sys.stdout.flush()
    showed = subprocess.run(
        [*judge, "show", str(out)], env=env, check=False, stderr=subprocess.STDOUT
    )
    return ran.returncode or showed.returncode


if __name__ == "__main__":
    raise SystemExit(main())
