"""Precision of `number_mismatch` on claims human experts labelled fully supported.

Data: a JSONL file of supported claims, one per line, with the evidence passages the
experts judged them against: ``{"question", "system", "claim", "evidence": [{"marker",
"url", "text"}]}`` (default: ``sessions_fixture/data/expertqa/supported-claims.jsonl``, the
ExpertQA claims whose `support` is `Complete`). Every claim is supported, so every
number_mismatch *problem* on it is a false alarm.

Each claim becomes a pipeline claim citing one source per distinct URL, and is checked in
three settings:

- **passages as quotes, no text**: one quote per evidence passage (the passage text, as the
  pipeline would quote it) and no stored source text: what today's sessions without
  snapshots look like. A number the quotes lack can only be a hint here.
- **passages as quotes and as text**: the same quotes, and each passage also as its source's
  stored text: what the check can read, so what is left is a problem.
- **one sentence quoted, passage as text**: the quote is the passage's first sentence with
  the most words in common with the claim, and the passage is the source's text: the year
  or number is in the source but not in the quoted sentence.

"before" is the rule on main before issue 11 (any digit token of the claim that no quote
carries, citation markers included). Rates are per claim (a claim with any number_mismatch
problem is one false alarm), for all claims and for those that carry citation markers.
The remaining problems are sorted into causes by what the evidence holds.

Recall: one number of each claim that has one is changed by one digit (1986 -> 1987) where
the changed value is in no passage and not in the question (in digits or words), and must be
flagged, both with the passages as quotes and with one sentence quoted (the passage as text
each time). The question is each claim's premise (a session's finding's sub-question): a
number it states is a hint, never a problem.

    python bench/bench_numbers.py [--data FILE] [--examples 20] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from harness.audit.checks import check_numbers, normalise  # noqa: E402
from harness.audit.numbers import (  # noqa: E402
    Evidence,
    digit_forms,
    numbers,
    strip_markers,
    word_forms,
)
from harness.session.models import Claim  # noqa: E402

DATA = REPO / "sessions_fixture" / "data" / "expertqa" / "supported-claims.jsonl"
MARKER = re.compile(r"\[\^?\d+(?:\s*,\s*\d+)*\]|\^\d|[\u00b9\u00b2\u00b3\u2074-\u2079]")


# -- the rule before issue 11, kept here to measure against ------------------------------

_OLD_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*(?:\s+(million|billion|trillion|thousand)\b)?")
_OLD_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_OLD_SCALE = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_OLD_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen "
    "fourteen fifteen sixteen seventeen eighteen nineteen twenty"
)
_OLD_TENS = "thirty forty fifty sixty seventy eighty ninety"
_OLD_WORDS = {w: str(i) for i, w in enumerate(_OLD_ONES.split(" "))} | {
    w: str(10 * (i + 3)) for i, w in enumerate(_OLD_TENS.split(" "))
}
_OLD_WORDS_RE = re.compile(r"\b(" + "|".join(_OLD_WORDS) + r")\b", re.IGNORECASE)


def _old_canonical(token: str) -> str:
    if _OLD_THOUSANDS.fullmatch(token):
        token = token.replace(",", "")
    if token.count(".") == 1 and "," not in token:
        whole, frac = token.split(".")
        frac = frac.rstrip("0")
        token = (whole.lstrip("0") or "0") + ("." + frac if frac else "")
    elif token.isdigit():
        token = token.lstrip("0") or "0"
    return token


def _old_forms(text: str) -> list[tuple[str, set[str]]]:
    out: dict[str, set[str]] = {}
    for m in _OLD_NUMBER.finditer(text):
        token = m.group(0).split()[0]
        forms = {_old_canonical(token)}
        if m.group(1):
            scale = _OLD_SCALE[m.group(1).lower()]
            with contextlib.suppress(InvalidOperation):
                forms.add(_old_canonical(str(Decimal(_old_canonical(token)) * scale)))
        out.setdefault(token, set()).update(forms)
    return list(out.items())


def old_absent(claim: str, quotes: list[str]) -> list[str]:
    quoted: set[str] = set()
    for q in quotes:
        for _, forms in _old_forms(q):
            quoted |= forms
    missing = [t for t, forms in _old_forms(claim) if not forms & quoted]
    if missing:
        for q in quotes:
            quoted |= {_OLD_WORDS[w.lower()] for w in _OLD_WORDS_RE.findall(q)}
        missing = [t for t, forms in _old_forms(claim) if not forms & quoted]
    return missing


# -- the claims ----------------------------------------------------------------------------


@dataclass
class Item:
    claim: str
    urls: list[str]
    passages: list[tuple[str, str]]  # (source id, passage text)
    markers: bool = field(default=False)
    question: str = ""


def load(path: Path) -> list[Item]:
    if not path.is_file():
        raise SystemExit(
            f"bench_numbers: no data at {path}: pass --data FILE (JSONL of supported claims "
            "with evidence passages, fields question, system, claim, evidence)"
        )
    items = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            ids: dict[str, str] = {}
            passages = []
            for ev in row["evidence"]:
                sid = ids.setdefault(ev["url"] or ev["marker"], f"s{len(ids) + 1}")
                passages.append((sid, ev["text"]))
            claim = row["claim"].strip()
        except (ValueError, KeyError, TypeError) as exc:
            raise SystemExit(
                f"bench_numbers: {path}:{n}: not a claim with evidence ({exc})"
            ) from exc
        if passages and claim:
            marked = bool(MARKER.search(claim))
            items.append(Item(claim, list(ids), passages, marked, str(row.get("question", ""))))
    return items


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
_CONTENT = re.compile(r"[a-z]{4,}")


def best_sentence(claim: str, passage: str) -> str:
    """The passage's first sentence with the most content words in common with the claim."""
    words = set(_CONTENT.findall(claim.lower()))
    best, score = passage, -1
    for sentence in _SENTENCE.split(passage):
        shared = len(words & set(_CONTENT.findall(sentence.lower())))
        if shared > score:
            best, score = sentence, shared
    return best


def as_claim(item: Item, quotes: list[tuple[str, str]], text: str | None = None) -> Claim:
    return Claim.model_validate(
        {
            "id": "c",
            "text": item.claim if text is None else text,
            "sourceIds": item.urls and [f"s{i + 1}" for i in range(len(item.urls))],
            "quotes": [{"sourceId": sid, "text": q} for sid, q in quotes],
        }
    )


def source_texts(item: Item) -> Callable[[str], Evidence | None]:
    """Each passage as its source's stored text, normalised as a snapshot is."""
    by_id: dict[str, list[str]] = {}
    for sid, text in item.passages:
        by_id.setdefault(sid, []).append(text)
    evidence = {sid: Evidence(normalise("\n\n".join(texts))) for sid, texts in by_id.items()}
    return evidence.get


# -- causes of what remains ----------------------------------------------------------------


def _value(written: str) -> float | None:
    try:
        return float(written.replace(",", ""))
    except ValueError:
        return None


def cause(written: str, evidence: str, question: str) -> str:
    """Why a supported claim's number is in no passage, guessed from what the passages hold."""
    if any(f in digit_forms(question) for _, fs in numbers(written) for f in fs):
        return "stated in the question (the claim restates its premise)"
    value = _value(written)
    forms = {
        f for f in digit_forms(evidence) if not f.startswith(("decade:", "century:", "month:"))
    }
    values = [v for v in (_value(f) for f in forms) if v is not None]
    if value is not None and value != 0:
        if any(v != value and abs(v - value) / abs(value) <= 0.1 for v in values):
            return "rounded or approximate value in the evidence"
        if any(v * 2 == value or v == value * 2 for v in values):
            return "derived value (e.g. pairs -> count, doubled/halved)"
        if (
            value.is_integer()
            and 1 <= value <= 100
            and any(v > 1000 and 1900 <= v <= 2100 for v in values)
        ):
            return "computed from dates (an age, a span, a count of years)"
    if value is not None and value.is_integer() and 1000 <= value <= 2100:
        return "year not in the evidence"
    return "number not in the evidence (an inference, or from elsewhere)"


# -- the bench -----------------------------------------------------------------------------


def run(items: list[Item], examples: int) -> dict[str, Any]:
    settings = [
        "passages as quotes, no text",
        "passages as quotes and as text",
        "one sentence quoted, passage as text",
    ]
    claims_with_numbers = sum(1 for it in items if numbers(it.claim))
    rows: dict[str, dict[str, Any]] = {}
    remaining: Counter[str] = Counter()
    shown: list[str] = []
    seconds = 0.0
    for setting in settings:
        counts = Counter[str]()
        before: Counter[str] = Counter()
        for item in items:
            if setting.startswith("one sentence"):
                quotes = [(sid, best_sentence(item.claim, text)) for sid, text in item.passages]
            else:
                quotes = item.passages
            texts = None if setting.endswith("no text") else source_texts(item)
            old = bool(old_absent(item.claim, [q for _, q in quotes]))
            claim = as_claim(item, quotes)
            started = time.perf_counter()
            problems, hints = check_numbers(claim, texts, premise=item.question)
            seconds += time.perf_counter() - started
            if old and not old_absent(strip_markers(item.claim), [q for _, q in quotes]):
                before["citation markers only (or passage numbers, list enumerators)"] += 1
            elif old and not problems:
                before["a spelling now read, or carried by the source text"] += 1
            elif old:
                before["still a problem"] += 1
            for key, hit in (("old", old), ("new", bool(problems)), ("hint", bool(hints))):
                counts[key] += hit
                counts[f"{key}_m"] += hit and item.markers
            if setting == "passages as quotes and as text":
                evidence = "\n".join(t for _, t in item.passages)
                for problem in problems:
                    for written in problem.numbers or []:
                        remaining[cause(written, evidence, item.question)] += 1
                        if len(shown) < examples:
                            shown.append(f"{written!r} in {item.claim.strip()[:160]!r}")
        marked = sum(1 for it in items if it.markers)
        rows[setting] = {
            "claims": len(items),
            "with_markers": marked,
            "before": counts["old"] / len(items),
            "before_markers": counts["old_m"] / max(1, marked),
            "after": counts["new"] / len(items),
            "after_markers": counts["new_m"] / max(1, marked),
            "hints": counts["hint"] / len(items),
            "before_by_cause": dict(before.most_common()),
        }
    return {
        "claims": len(items),
        "claims_with_numbers": claims_with_numbers,
        "settings": rows,
        "remaining_causes": dict(remaining.most_common()),
        "examples": shown,
        "recall": recall(items),
        "ms_per_check": 1000 * seconds / (len(items) * len(settings)),
    }


def _bump(written: str) -> str:
    last = max(i for i, c in enumerate(written) if c.isdigit())
    return written[:last] + str((int(written[last]) + 1) % 10) + written[last + 1 :]


def recall(items: list[Item]) -> dict[str, Any]:
    """One digit of one number changed per claim (where no passage carries the new value)."""
    tried = caught = 0
    missed: list[str] = []
    for item in items:
        joined = "\n".join(t for _, t in item.passages)
        evidence = digit_forms(joined) | word_forms(joined)
        premise = digit_forms(item.question) | word_forms(item.question)
        clean = strip_markers(item.claim)
        for written, forms in numbers(item.claim):
            if "(" in written or any(":" in f for f in forms):
                continue  # conversions and tagged decades/centuries: changed differently
            changed = _bump(written)
            new_forms = {f for _, fs in numbers(changed) for f in fs}
            if not new_forms or new_forms & (evidence | premise):
                # The changed value is in the evidence too, or the question states it (a
                # restated premise is a hint): not a fabrication.
                continue
            at = re.search(r"(?<![\d.,])" + re.escape(written) + r"(?![\d])", clean)
            if at is None:
                continue
            text = item.claim[: at.start()] + changed + item.claim[at.end() :]
            for quotes in (
                item.passages,
                [(s, best_sentence(item.claim, t)) for s, t in item.passages],
            ):
                problems, _ = check_numbers(
                    as_claim(item, quotes, text), source_texts(item), premise=item.question
                )
                tried += 1
                if any(changed in (p.numbers or []) for p in problems):
                    caught += 1
                elif len(missed) < 5:
                    missed.append(f"{written}->{changed} in {text.strip()[:120]!r}")
            break
    return {"changed": tried, "caught": caught, "recall": caught / max(1, tried), "missed": missed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data",
        type=Path,
        default=DATA,
        help=f"JSONL of supported claims (default {DATA.relative_to(REPO)})",
    )
    parser.add_argument("--examples", type=int, default=15, help="remaining false alarms to print")
    parser.add_argument("--json", action="store_true", help="the figures as JSON")
    args = parser.parse_args(argv)
    items = load(args.data)
    if not items:
        raise SystemExit(f"bench_numbers: {args.data} holds no claim with evidence")
    out = run(items, args.examples)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(
        f"number_mismatch on {out['claims']} supported claims ({args.data.name}); "
        f"{out['claims_with_numbers']} state a number; false alarms = claims with a problem"
    )
    head = f"  {'setting':<38} {'before':>8} {'after':>8} {'markers: before':>16} {'after':>7}"
    print(f"{head} {'hints':>7}")
    for name, row in out["settings"].items():
        print(
            f"  {name:<38} {row['before']:>8.1%} {row['after']:>8.1%} "
            f"{row['before_markers']:>16.1%} {row['after_markers']:>7.1%} {row['hints']:>7.1%}"
        )
    print(f"  ({row['with_markers']} of {row['claims']} claims carry citation markers)")
    for name, row in out["settings"].items():
        causes = ", ".join(f"{n} {why}" for why, n in row["before_by_cause"].items())
        print(f"  before, {name}: {causes}")
    print("  remaining problems (passages as quotes and as text), by cause:")
    for name, n in out["remaining_causes"].items():
        print(f"    {n:>4}  {name}")
    for line in out["examples"]:
        print(f"      e.g. {line}")
    r = out["recall"]
    print(
        f"  recall: {r['caught']}/{r['changed']} changed-digit claims flagged ({r['recall']:.1%})"
    )
    for line in r["missed"]:
        print(f"      missed: {line}")
    print(f"  {out['ms_per_check']:.3f} ms per claim in check_numbers (mean of the settings)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
