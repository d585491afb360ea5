"""Input tokens per checked claim of the citation audit, through the real SDK, side by side.

Each code tree (this checkout, and `--baseline REV`, by default where this branch left
`main`, unpacked from git) runs `audit_session` in a child process of its own with that
tree's `harness` first on the path, its `AnthropicCiteClient` over the `anthropic` SDK
talking to the loopback Messages API of `tests/support/apiserver.py` (this checkout's: the
apparatus is the same for both). Sessions: `sessions_fixture/large` (320 claims, about 1.4
per cited source) and a synthetic session (`bench/synth.py`, eight claims a source).

The loopback API answers in two modes, each a table of its own:

- `0.9` (the worst case, the figure the target is checked on): every question is answered
  0.9, so every passage screened in round 1 is gathered and confirmed in round 2: the most
  a claim can cost, which is how the issue measured it.
- `labels` (the realistic cost): the answers follow the fixture's labels as the engine
  bench's fake does (`scripts/make_cite_replays.py`, used by `bench/bench_sources.py`): a
  passage supports a claim when it holds one of the claim's quotes (its words, case
  aside, or its first or last eight words), answered as that claim's label says (ExpertQA's
  Complete high, Missing low, ...; the synthetic session has no labels, and its verbatim
  quotes answer as supported); any other passage answers about 0.06, so it is not gathered
  into round 2. The server rebuilds each engine request from the user message (`expand`)
  to answer it, and answers in the fields of the request's schema.

What is counted is what the server received: for each request, the system prompt and the
user message, characters / 4 (`estimate_tokens`: the figure the target, <= 1,000 input
tokens per checked claim in sources mode, is for); the answer schema (`output_config`)
beside it, counted the same way, since the API may read it too; and the whole request body.
Prompt caching is not counted as a saving (the audit's prompts are below any model's
cacheable minimum, and cached tokens are input tokens too). Each figure is split into the
passages' own text and what carries no evidence: the system prompt, the passages' framing
in `state` (ids, keys, quoting), the criteria, the question wordings (`asks`, which hold
the claim) and the question map. `checked`: claims judged against their sources.

    python bench/bench_wire.py [--baseline REV] [--claims 500] [--against sources]
                               [--answers 0.9 labels]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_sources import baseline_tree  # the branch point's files, as committed

REPO = Path(__file__).resolve().parent.parent
LARGE = REPO / "sessions_fixture" / "large"
TARGET = 1000  # input tokens per checked claim in sources mode (#32), in the `0.9` mode
MODES = ("0.9", "labels")  # how the loopback API answers (see the module's docstring)
PARTS = ("system", "passages", "framing", "criteria", "asks", "questions", "other")


def _texts(state: Any) -> tuple[int, int]:
    """Characters of the passages' text in a state, and how many passages it holds."""
    chars = count = 0
    for group in state.values() if isinstance(state, dict) else ():
        if not isinstance(group, dict):
            continue
        for passage in group.values():
            text = passage.get("text") if isinstance(passage, dict) else passage
            if isinstance(text, str):
                chars += len(json.dumps(text, ensure_ascii=False)) - 2
                count += 1
    return chars, count


def split(body: dict[str, Any]) -> Counter[str]:
    """One request body's characters by part (see the module's docstring)."""
    system = body.get("system", "")
    if not isinstance(system, str):
        system = "".join(block.get("text", "") for block in system)
    content = body["messages"][-1]["content"]
    user = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
    out: Counter[str] = Counter(system=len(system), user=len(user))
    out["tokens"] = (len(system) + 3) // 4 + (len(user) + 3) // 4
    schema = json.dumps(body.get("output_config", {}), separators=(",", ":"))
    out["schema"] = (len(schema) + 3) // 4
    out["body"] = (len(json.dumps(body, ensure_ascii=False, separators=(",", ":"))) + 3) // 4
    message = json.loads(user)
    dumps = lambda v: len(json.dumps(v, ensure_ascii=False, separators=(",", ":")))  # noqa: E731
    text, passages = _texts(message.get("state", {}))
    out["passages"] = text
    out["passage_count"] = passages
    out["framing"] = dumps(message.get("state", {})) - text
    known = out["framing"] + text
    for part in ("criteria", "asks", "questions"):
        if part in message:
            out[part] = dumps(message[part])
            known += out[part]
    out["other"] = len(user) - known
    round2 = any("confirm:" in k for k in message.get("questions", {}))
    out["round2"] = int(round2)
    return out


def labelled(
    session: Any, fixture: str | None, faults: list[str]
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The `labels` mode's reply to a request body (see the module's docstring); a request
    whose schema's fields are not its questions' is answered nothing and said in `faults`."""
    import harness
    from harness.model.cite_client import answer_fields
    from harness.model.cite_prompt import expand
    from tests.support.apiserver import cite_answer

    sys.path.insert(0, str(REPO / "scripts"))  # the engine bench's fake: the apparatus
    import make_cite_replays as replays

    labels: dict[str, str] = {}
    if fixture:
        index = json.loads((LARGE.parent / "index.json").read_text(encoding="utf-8"))
        labels = replays._labels(fixture, index[fixture]["expect"])
    quotes = {c.id: [replays._words(q.text) for q in c.quotes] for _, c in session.claims}
    fake = replays._scripted(labels, quotes)
    tree = Path(harness.__file__).parent  # imported before the fake put REPO first

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        request = expand(json.loads(body["messages"][-1]["content"]))
        answers = fake.ask(request).answers
        fields = answer_fields(list(request["questions"]))
        message = cite_answer(body)
        if set(fields) != set(body["output_config"]["format"]["schema"]["properties"]):
            faults.append(f"{tree}: a schema's fields are not its questions' keys")
            fields = {}
        text = json.dumps({name: answers[key] for name, key in fields.items()})
        message["content"] = [{"type": "text", "text": text}]
        return message

    return reply


def worker(code: Path, session_dir: Path, against: str, mode: str, fixture: str | None) -> Any:
    sys.path.insert(0, str(REPO))  # tests.support: the loopback API (the apparatus)
    sys.path.insert(0, str(code))  # the measured tree's harness first
    import anthropic

    from harness.audit import audit_session
    from harness.model.cite_client import AnthropicCiteClient
    from harness.session.loader import load_session
    from tests.support.apiserver import FakeAPI, Reply, cite_answer

    session = load_session(session_dir)
    faults: list[str] = []
    answer = cite_answer if mode == "0.9" else labelled(session, fixture, faults)
    with FakeAPI(default=Reply(answer)) as api:
        sdk = anthropic.Anthropic(api_key="sk-bench", base_url=api.url, max_retries=0)
        report = audit_session(
            session, client=AnthropicCiteClient(sdk), concurrency=8, against=against
        )
        bodies = api.bodies
    if faults:
        raise SystemExit(f"{faults[0]} ({len(faults)} requests)")
    total: Counter[str] = Counter()
    for body in bodies:
        total.update(split(body))
    checked = sum(1 for c in report.claims if c.against == "sources" or c.requests)
    verdicts = Counter(c.verdict for c in report.claims)
    return {
        "requests": len(bodies),
        "claims": len(report.claims),
        "checked": checked,
        "verdicts": dict(verdicts),
        **total,
    }


def child(code: Path, session: Path, against: str, mode: str, fixture: str) -> dict[str, Any]:
    argv = [sys.executable, str(Path(__file__).resolve()), "--worker", str(code)]
    argv += ["--session", str(session), "--against", against, "--answers", mode]
    argv += ["--fixture", fixture]
    env = {**os.environ, "PYTHONPATH": str(code)}
    out = subprocess.run(argv, check=True, capture_output=True, text=True, env=env)
    return json.loads(out.stdout.splitlines()[-1])


def show(name: str, rows: list[tuple[str, dict[str, Any]]], checked: bool = True) -> bool:
    """Print one table; whether this checkout meets the target (if `checked`, else True)."""
    print(f"\n{name}")
    head = f"  {'code':<16} {'req/claim':>9} {'r2 req':>6} {'tok/claim':>9} {'+schema':>7}"
    head += f" {'body':>6} " + " ".join(f"{p:>9}" for p in PARTS) + "  verdicts"
    print(head)
    ok = True
    for label, r in rows:
        n = max(1, r["checked"])
        tokens = r["tokens"] / n
        parts = " ".join(f"{r.get(p, 0) / 4 / n:>9.0f}" for p in PARTS)
        print(
            f"  {label:<16} {r['requests'] / n:>9.2f} {r['round2']:>6} {tokens:>9.0f} "
            f"{(r['tokens'] + r['schema']) / n:>7.0f} {r['body'] / n:>6.0f} {parts}  "
            f"{json.dumps(r['verdicts'], sort_keys=True)}"
        )
        if label == "this checkout" and checked:
            ok = tokens <= TARGET
    print(
        f"  (per checked claim; parts in tokens, characters / 4; passages: "
        f"{rows[-1][1]['passages'] / max(1, rows[-1][1]['checked']):,.0f} characters a "
        f"checked claim here, {rows[0][1]['passages'] / max(1, rows[0][1]['checked']):,.0f} "
        "in the first row)"
    )
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--baseline", help="the revision to compare with (default: merge-base)")
    parser.add_argument("--claims", type=int, default=500, help="synthetic session size")
    parser.add_argument("--against", default="sources", choices=("sources", "quotes"))
    parser.add_argument(
        "--answers", nargs="+", default=list(MODES), choices=MODES, help="the API's answer modes"
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 if the target is missed")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--session", help=argparse.SUPPRESS)
    parser.add_argument("--fixture", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        mode = args.answers[0]
        got = worker(Path(args.worker), Path(args.session), args.against, mode, args.fixture)
        print(json.dumps(got))
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
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        short, base = baseline_tree(rev, Path(tmp))
        sys.path.insert(0, str(REPO / "bench"))
        import synth

        synthetic = Path(tmp) / "synthetic"
        synth.make_session(synthetic, args.claims, seed=1)
        sessions = [
            ("large (320 claims)", LARGE, LARGE.name),
            (
                f"synthetic ({args.claims:,} claims, {synth.CLAIMS_PER_SOURCE} a source)",
                synthetic,
                "",
            ),
        ]
        print(f"--against {args.against}")
        for mode in args.answers:
            said = {
                "0.9": "every question 0.9 (the worst case; the target's figure)",
                "labels": "following the labels (a passage holding a claim's quote supports it)",
            }[mode]
            print(f"\nthe loopback API answers {said}")
            for name, folder, fixture in sessions:
                rows = [
                    (short, child(base, folder, args.against, mode, fixture)),
                    ("this checkout", child(REPO, folder, args.against, mode, fixture)),
                ]
                ok = show(f"{name}, {mode}", rows, checked=mode == "0.9") and ok
    if args.against == "sources":
        print("target met" if ok else "TARGET MISSED")
    return 0 if ok or not args.strict else 1


if __name__ == "__main__":
    raise SystemExit(main())
