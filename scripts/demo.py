"""`make demo`: a replayed `judge run` on a copy of a fixture session, then its report page.
No key, no network.

Copies sessions_fixture/showcase to demo-out/showcase (the fixture itself is never touched):
a session holding every kind of problem the offline checks know, whose judge scores its
citations well, so the first run shows the tool catching something. It
runs the real CLI with the fixture's recorded model replies, shows the receipt (stdout)
and the human summary (stderr), `judge show` of the result, writes the report page with
`judge report` and ends by saying how to put `judge` on PATH, then the page's path.
`--out DIR` puts the copy elsewhere than demo-out/ (the README's test does).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURE = "showcase"


def _shown(path: Path) -> str:
    """`path` relative to the current folder when it is under it, else absolute."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "demo-out", help="where the copy goes")
    args = parser.parse_args()
    source = REPO / "sessions_fixture" / FIXTURE
    replays = REPO / "sessions_fixture" / "replays"
    replay, cite_replay = replays / f"{FIXTURE}.jsonl", replays / f"{FIXTURE}.cite.jsonl"
    out = args.out / FIXTURE
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(source, out)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    judge = [sys.executable, "-m", "harness"]
    command = [*judge, "run", str(out), "--replay", str(replay), "--fetch", "stored"]
    shown = f"judge run {_shown(out)} --replay {_shown(replay)} --fetch stored"
    if cite_replay.exists():
        command += ["--cite-replay", str(cite_replay)]
        shown += f" \\\n    --cite-replay {_shown(cite_replay)}"
    print(f"$ {shown}")
    sys.stdout.flush()
    # stderr joins stdout so the receipt and the summary print in order.
    ran = subprocess.run(command, env=env, check=False, stderr=subprocess.STDOUT)
    print(f"(exit {ran.returncode})\n")
    print(f"$ judge show {_shown(out)}")
    sys.stdout.flush()
    showed = subprocess.run(
        [*judge, "show", str(out)], env=env, check=False, stderr=subprocess.STDOUT
    )
    print(f"(exit {showed.returncode})\n")
    print(f"$ judge report {_shown(out)}")
    sys.stdout.flush()
    reported = subprocess.run(
        [*judge, "report", str(out)], env=env, check=False, capture_output=True, text=True
    )
    print(reported.stderr, end="")
    page = reported.stdout.strip()
    print(f"(exit {reported.returncode})\n")
    venv_judge = Path(sys.executable).parent / "judge"
    # `judge` is not on PATH yet: say how to put it there before any command that needs it,
    # and end on the page itself.
    print(
        f"`judge` on PATH: `source .venv/bin/activate` (or call {_shown(venv_judge)});"
        f" then `judge report {_shown(out)} --open` opens the page."
    )
    if reported.returncode == 0 and page:
        print("\nThe report page (open it in a browser; it makes no request of any kind):")
        print(f"  {page}")
    return ran.returncode or showed.returncode or reported.returncode


if __name__ == "__main__":
    raise SystemExit(main())
