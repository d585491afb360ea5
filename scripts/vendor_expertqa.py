"""Vendor the part of ExpertQA this repository uses into ``sessions_fixture/data/expertqa/``.

SOURCE is a folder holding ``rand_val.jsonl``, ``rand_test.jsonl`` and ``LICENSE`` as published
in the public repository chaitanyamalaviya/ExpertQA (commit
1aa7ba81bd4c083c12ef1aa2fee338f6cb60fa87, folder ``data/lfqa/``). The script writes:

- ``rand_val.jsonl`` / ``rand_test.jsonl``, trimmed to what ``scripts/build_fixtures.py``
  reads: only the answers (question line × system) whose records reach a fixture, and in them
  only the fields the builder reads. A line with no kept answer becomes an empty line, so
  every kept record keeps its line number (the fixtures' ``origin`` cites it) and the builder
  reads the trimmed files exactly as it reads the originals.
- ``supported-claims.jsonl``: a held-out evaluation set, one line per claim of both splits
  whose human ``support`` label is ``Complete`` and which has at least one evidence passage,
  as ``{"question", "system", "claim", "evidence": [{"marker", "url", "text"}]}``.
- ``LICENSE`` (the data set's MIT licence, copied) and ``README.md`` (provenance and counts).

Before it returns, the script builds the fixtures from SOURCE and from the trimmed copy and
fails unless the two are byte-identical, so the trimming can never drop something a fixture
needs.

Usage: ``python scripts/vendor_expertqa.py SOURCE [--out DIR] [--max-supported N]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_fixtures as bf  # a sibling script, not an installed module

UPSTREAM = "chaitanyamalaviya/ExpertQA"
UPSTREAM_COMMIT = "1aa7ba81bd4c083c12ef1aa2fee338f6cb60fa87"
UPSTREAM_PATH = "data/lfqa/"
SUPPORTED = "supported-claims.jsonl"
# Keeps the evaluation file small enough to commit (1.6 MB for the 1,096 claims today).
MAX_SUPPORTED = 2500

Json = dict[str, Any]
Key = tuple[str, int, str]  # (file, line, system)

# The fields build_fixtures.py reads, per level of a record.
ANSWER_FIELDS = ("answer_string", "attribution", "claims")
CLAIM_FIELDS = ("claim_string", "evidence", *bf.LABELS)
METADATA_FIELDS = ("field",)


def used_answers(records: Sequence[bf.Record]) -> set[Key]:
    """The (file, line, system) of every record a fixture session is made from (its ``origin``).

    Records the builder looks at and passes over are not kept: without them it makes the same
    choices, which ``_check_same_fixtures`` confirms on every run.
    """
    return {
        (str(o["file"]), int(o["line"]), str(o["system"]))
        for session in bf.build_sessions(records)
        for o in session.origin
    }


def _subset(raw: Json, fields: Sequence[str]) -> Json:
    return {k: raw[k] for k in fields if k in raw}


def trim_line(raw: Json, systems: set[str]) -> Json:
    """The record with only ``systems`` among its answers and only the fields the builder reads."""
    out: Json = {"question": raw["question"]}
    if "metadata" in raw:
        out["metadata"] = _subset(raw["metadata"] or {}, METADATA_FIELDS)
    answers: Json = {}
    for system, answer in raw["answers"].items():
        if system not in systems:
            continue
        kept = _subset(answer, ANSWER_FIELDS)
        if kept.get("claims"):
            kept["claims"] = [_subset(c, CLAIM_FIELDS) for c in kept["claims"]]
        answers[system] = kept
    out["answers"] = answers
    return out


def trimmed_text(source: Path, name: str, keep: set[Key]) -> tuple[str, int]:
    """The trimmed file's text and how many answers it keeps."""
    lines: list[str] = []
    kept = 0
    with (source / name).open(encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            systems = {sys_ for (f, n, sys_) in keep if f == name and n == line_no}
            if not systems or not line.strip():
                lines.append("")
                continue
            lines.append(json.dumps(trim_line(json.loads(line), systems), ensure_ascii=False))
            kept += len(systems)
    while lines and not lines[-1]:
        lines.pop()
    return "".join(line + "\n" for line in lines), kept


def supported_claims(source: Path) -> tuple[list[Json], int]:
    """Claims labelled ``Complete`` with their evidence passages; and how many had none."""
    out: list[Json] = []
    without_passage = 0
    for name in bf.DATA_FILES:
        with (source / name).open(encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                raw = json.loads(line)
                for system in sorted(raw["answers"]):
                    for claim in raw["answers"][system].get("claims") or []:
                        if claim.get("support") != "Complete":
                            continue
                        evidence = []
                        for ev in claim.get("evidence") or []:
                            m = bf._EVIDENCE.match(ev.replace("\r\n", "\n"))
                            if m and m.group(3).strip():
                                evidence.append(
                                    {
                                        "marker": f"[{m.group(1)}]",
                                        "url": m.group(2),
                                        "text": m.group(3).strip(),
                                    }
                                )
                        if not evidence:
                            without_passage += 1
                            continue
                        out.append(
                            {
                                "question": raw["question"].strip(),
                                "system": system,
                                "claim": claim["claim_string"],
                                "evidence": evidence,
                            }
                        )
    return out, without_passage


README = """\
# ExpertQA, trimmed

A small part of the ExpertQA data set (Malaviya et al., "ExpertQA: Expert-Curated Questions and
Attributed Answers", 2023), vendored so that `make fixtures` and `make test` need nothing outside
this repository.

- Source: the public repository `{upstream}`, commit `{commit}`, folder `{path}`
  (`rand_val.jsonl`, `rand_test.jsonl`, `LICENSE`).
- Licence: MIT, see `LICENSE` in this folder (copied unchanged).
- Written by `scripts/vendor_expertqa.py SOURCE`, where SOURCE is that folder; the script checks
  that the fixtures built from this copy are byte-identical to those built from the original.

## What was trimmed, and how

`rand_val.jsonl` and `rand_test.jsonl` keep only what `scripts/build_fixtures.py` reads:

- the answers (one question line × one system; each line has one) that a fixture session is made
  from, as named by `origin` in `sessions_fixture/index.json`: {kept} of {total} are kept;
- in them only `question`, `metadata.field`, each answer's `answer_string`, `attribution` and
  `claims`, and each claim's `claim_string`, `evidence` and labels
  (`{labels}`);
- every other line is left empty so that kept records keep their original line numbers.

## supported-claims.jsonl

A held-out evaluation set for citation-support precision: every claim of both splits (all
systems) whose human `support` label is `Complete`, one JSON object a line:

    {{"question": "...", "system": "...", "claim": "...",
     "evidence": [{{"marker": "[n]", "url": "...", "text": "..."}}]}}

`claim` is ExpertQA's `claim_string` verbatim (its `[n]` markers name the evidence `marker`s).
`evidence` is parsed from ExpertQA's `"[n] URL\\n\\npassage"` strings; an evidence string with
a URL but no passage is left out, and a claim left with no passage is left out
({without} claims, mostly `bing_chat` answers that cite URLs only). {count} claims are written
(cap: {cap}; {capped}).
"""


def write_vendored(source: Path, out: Path, max_supported: int) -> None:
    missing = [n for n in (*bf.DATA_FILES, "LICENSE") if not (source / n).is_file()]
    if missing:
        raise SystemExit(
            f"ExpertQA data not found: {source} lacks {', '.join(missing)}. Pass the folder "
            f"{UPSTREAM_PATH} of a checkout of {UPSTREAM} (commit {UPSTREAM_COMMIT})."
        )
    records = bf.load_records(source)
    keep = used_answers(records)
    out.mkdir(parents=True, exist_ok=True)
    kept = 0
    for name in bf.DATA_FILES:
        text, n = trimmed_text(source, name, keep)
        (out / name).write_text(text, encoding="utf-8")
        kept += n
    shutil.copyfile(source / "LICENSE", out / "LICENSE")
    claims, without = supported_claims(source)
    capped = len(claims) > max_supported
    claims = claims[:max_supported]
    (out / SUPPORTED).write_text(
        "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in claims), encoding="utf-8"
    )
    readme = README.format(
        upstream=UPSTREAM,
        commit=UPSTREAM_COMMIT,
        path=UPSTREAM_PATH,
        kept=kept,
        total=len(records),
        labels="`, `".join(bf.LABELS),
        without=without,
        count=len(claims),
        cap=max_supported,
        capped="the first claims in file order are kept" if capped else "not reached",
    )
    (out / "README.md").write_text(readme, encoding="utf-8")
    _check_same_fixtures(source, out)


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _check_same_fixtures(source: Path, trimmed: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        full, small = Path(tmp) / "full", Path(tmp) / "trimmed"
        bf.build(source, full)
        bf.build(trimmed, small)
        a, b = _files(full), _files(small)
        differ = sorted(n for n in a.keys() | b.keys() if a.get(n) != b.get(n))
        if differ:
            raise SystemExit(
                f"the trimmed data builds different fixtures ({', '.join(differ[:5])}): "
                "keep more of the data set in used_answers()"
            )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("source", type=Path, help=f"the {UPSTREAM_PATH} folder of {UPSTREAM}")
    parser.add_argument("--out", type=Path, default=bf.DEFAULT_DATA, help="vendored folder")
    parser.add_argument(
        "--max-supported", type=int, default=MAX_SUPPORTED, help="cap on supported claims"
    )
    args = parser.parse_args(argv)
    write_vendored(args.source.resolve(), args.out.resolve(), args.max_supported)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
