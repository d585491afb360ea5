"""Numbers a claim infers from its evidence, or restates from its question: hints, not defects.

A claim's number that no quote and no stored text carries is not always made up. Pure
functions, no I/O; `harness.audit.checks.check_numbers` asks them only about the numbers
already found missing, so they never hide a number the evidence states.

- **Derived by one arithmetic step** from numbers the evidence states (its quotes, and the
  stored text of a short source): each form needs the claim's wording to say so, so that a
  digit changed in a quoted number (1965 -> 1966 beside a quoted `1`) is still a defect:
  - a sum or a difference of two of them, where the claim's words ask for one (`total`,
    `combined`, `later`, `ago`, `more than`, `rose`, …): `1997` from `1995` and `two years
    later`;
  - a multiple (`twice`, `doubled`, `pairs`, `halved`, `tripled`): `38` from `19 pairs`;
  - an ordinal (`3rd`) one past a count the evidence states;
  - a percentage (`25%`) from a fraction the evidence states in numbers (`3 of 12`) or words
    (`a quarter`, `one in four`), at the precision the claim writes;
  - a product or a quotient the claim writes out itself, of two numbers it writes before the
    `=` and the evidence states (`60 items * £10/unit = £600`).
- **A restated premise**: a number the claim's sub-question (the finding's `subQuestion`)
  states is the question's, not the source's: the claim may repeat it without a citation.

What a hint says names the step (`1997 = 1995 + 2`), so a reader can check it in a glance.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation

from harness.audit.numbers import NUMBER_WORDS, numbers

__all__ = ["MAX_VALUES", "derivation", "in_premise", "values"]

# Numbers of the evidence paired at most (a source's text may hold thousands): the first
# ones, in the order the evidence gives them. A claim whose number needs a later one is
# still a problem, which is the safe side.
MAX_VALUES = 300

# Words that ask for a step, read within `NEAR` characters of the claim's number.
NEAR = 60
_SUM = re.compile(
    r"\b(?:total(?:l?ed|ing|s)?|combined|altogether|in all|sum(?:med)?|together|"
    r"cumulative(?:ly)?|aggregate|adding up to|add up to)\b",
    re.IGNORECASE,
)
_DIFFERENCE = re.compile(
    r"\b(?:difference|(?:more|fewer|less|higher|lower|larger|smaller|longer|shorter|older|"
    r"younger) than|(?:increase|decrease|rise|drop|fall|gain|loss|gap|reduction) of|"
    r"(?:rose|risen|fell|fallen|grew|grown|increased|decreased|dropped|declined|gained|lost) "
    r"by)\b",
    re.IGNORECASE,
)
_MULTIPLE = {
    2: re.compile(r"\b(?:twice|double[ds]?|doubling|pairs?|two-fold|twofold)\b", re.IGNORECASE),
    3: re.compile(r"\b(?:triple[ds]?|tripling|thrice|three-fold|threefold)\b", re.IGNORECASE),
}
_HALF = re.compile(r"\b(?:half|halved|halving|halves)\b", re.IGNORECASE)
# A computation the claim writes out before its result: `a * b = `, `a / b = `.
_SHOWN_WORK = re.compile(r"[×*/÷][^=]{0,40}=\s*[^\s\d]{0,3}\s*$")
# A duration that moves a date: `two years later`, `5 years earlier`, `3 years ago`.
_SHIFT = re.compile(
    r"\b(\d{1,3}|[a-z]+)[\s-]+years?\b[\s,]*(later|after(?:wards)?|on|earlier|before|ago|"
    r"prior)\b",
    re.IGNORECASE,
)
# A count of what came before, for an ordinal: `two previous`, `3 earlier`.
_BEFORE_COUNT = re.compile(
    r"\b(\d{1,3}|[a-z]+)\s+(?:previous|earlier|prior|preceding|former)\b", re.IGNORECASE
)
_PERCENT_AFTER = re.compile(r"\s?(?:%|percent\b|per cent\b|pct\b)", re.IGNORECASE)
_ORDINAL_AFTER = re.compile(r"(?:st|nd|rd|th)\b", re.IGNORECASE)
# Fractions written in words, as percentages (the value, and the decimals it is exact to).
_FRACTION_WORDS: list[tuple[re.Pattern[str], Decimal]] = [
    (re.compile(r"\b(?:a|one)[\s-]half\b|\bhalf\b", re.IGNORECASE), Decimal(50)),
    (re.compile(r"\b(?:a|one)[\s-]quarter\b|\bquarter of\b", re.IGNORECASE), Decimal(25)),
    (re.compile(r"\bthree[\s-]quarters\b", re.IGNORECASE), Decimal(75)),
    (re.compile(r"\b(?:a|one)[\s-]third\b", re.IGNORECASE), Decimal(100) / 3),
    (re.compile(r"\btwo[\s-]thirds\b", re.IGNORECASE), Decimal(200) / 3),
    (re.compile(r"\b(?:a|one)[\s-]fifth\b", re.IGNORECASE), Decimal(20)),
    (re.compile(r"\b(?:a|one)[\s-]tenth\b", re.IGNORECASE), Decimal(10)),
]
_ONE_IN = re.compile(r"\bone (?:in|out of) (\d+|[a-z]+)\b", re.IGNORECASE)
# A count written in words (`two years later`, `eleven previous`): the number words the
# evidence reader knows (harness.audit.numbers), and `a`/`an` for one.
_COUNT_WORDS = {**NUMBER_WORDS, "a": 1, "an": 1, "hundred": 100}


def values(forms: Iterable[str]) -> list[Decimal]:
    """The plain numeric forms among `forms` (tagged ones such as `decade:199` left out), at
    most `MAX_VALUES`, each once, in the order given."""
    out: dict[Decimal, None] = {}
    for form in forms:
        if ":" in form:
            continue
        try:
            value = Decimal(form)
        except InvalidOperation:
            continue
        if value.is_finite():
            out.setdefault(value)
            if len(out) >= MAX_VALUES:
                break
    return list(out)


def in_premise(forms: frozenset[str], premise_forms: set[str]) -> bool:
    """Whether the question the claim answers states the number (any of its forms)."""
    return bool(forms & premise_forms)


def derivation(
    written: str, forms: frozenset[str], claim: str, evidence: list[Decimal], texts: list[str]
) -> str | None:
    """How the claim's number `written` (with its `forms`) follows in one arithmetic step from
    the numbers `evidence` states (and what the evidence `texts` state in words), when the
    claim's wording next to the number asks for that step; None when it does not.

    Never for a number one digit away from a number the evidence states (`1966` beside a
    quoted `1965`): that is what a changed digit looks like, and it stays a defect (so `45`
    beside `30` and `15` is one, though it is their sum). Two steps need the evidence to say
    them in so many words and may land one digit away: a date moved by a stated duration
    (`two years later`) and an ordinal after a stated count (`eleven previous`)."""
    targets = values(forms)
    at = _at(claim, written)
    if not targets or at is None:
        return None
    start, end = at
    near = claim[max(0, start - NEAR) : end + NEAR]
    shifted = _shifted(written, targets, evidence, [claim, *texts])
    if shifted is not None:
        return shifted
    if _ORDINAL_AFTER.match(claim, end):
        counts = {_value(m.group(1)) for text in texts for m in _BEFORE_COUNT.finditer(text)}
        for t in targets:
            if t - 1 in counts:
                return f"{written} is the ordinal after the {_show(t - 1)} before it"
        return None
    before = claim[max(0, start - NEAR) : start]
    if _SHOWN_WORK.search(before):  # `60 items * £10/unit = £600`: the claim shows its step
        shown = set(values(f for _, fs in numbers(before) for f in fs)) & set(evidence)
        for t in targets:
            for a, b in itertools.combinations(sorted(shown), 2):
                if a * b == t:
                    return f"{written} = {_show(a)} × {_show(b)}, as the claim computes it"
                if (b != 0 and a / b == t) or (a != 0 and b / a == t):
                    big, small = max(a, b), min(a, b)
                    return f"{written} = {_show(big)} / {_show(small)}, as the claim computes it"
    if any(_one_digit_away(t, e) for t in targets for e in evidence):
        return None
    if _PERCENT_AFTER.match(claim, end):
        return _percentage(written, targets, evidence, texts)
    for t in targets:
        for factor, cue in _MULTIPLE.items():
            if cue.search(near) and t % factor == 0 and t / factor in evidence:
                return f"{written} = {factor} × {_show(t / factor)}"
        if _HALF.search(near) and t * 2 in evidence:
            return f"{written} = {_show(t * 2)} / 2"
    sums, differences = bool(_SUM.search(near)), bool(_DIFFERENCE.search(near))
    known = set(evidence)
    for t in targets:
        for a in evidence:
            if sums and t - a in known and t - a > 0:
                big, small = max(a, t - a), min(a, t - a)
                return f"{written} = {_show(big)} + {_show(small)}"
            if differences and a - t in known and a - t > 0:
                return f"{written} = {_show(a)} − {_show(a - t)}"
    return None


def _shifted(
    written: str, targets: list[Decimal], evidence: list[Decimal], texts: list[str]
) -> str | None:
    """A year the claim gives as a year of the evidence moved by a stated duration."""
    shifts: list[tuple[Decimal, bool]] = []
    for text in texts:
        for m in _SHIFT.finditer(text):
            n = _value(m.group(1))
            if n > 0:
                shifts.append((n, m.group(2).lower() in ("earlier", "before", "ago", "prior")))
    for t in targets:
        if not (1000 <= t <= 2100) or t != t.to_integral_value():
            continue
        for n, back in shifts:
            year = t + n if back else t - n
            if year in evidence:
                sign = "−" if back else "+"
                return f"{written} = {_show(year)} {sign} {_show(n)} years"
    return None


def _one_digit_away(a: Decimal, b: Decimal) -> bool:
    """Whether two numbers are written with as many digits and differ in exactly one."""
    x, y = _show(a), _show(b)
    return len(x) == len(y) and sum(c != d for c, d in zip(x, y, strict=True)) == 1


def _value(word: str) -> Decimal:
    word = word.lower()
    if word.isdigit():
        return Decimal(word)
    return Decimal(_COUNT_WORDS.get(word, 0))


def _percentage(
    written: str, targets: list[Decimal], evidence: list[Decimal], texts: list[str]
) -> str | None:
    """A percentage the claim writes, as a fraction of two numbers of the evidence or a
    fraction the evidence names in words, to the claim's own precision."""
    places = len(written.split(".")[1]) if "." in written else 0
    half_step = Decimal(5) / (Decimal(10) ** (places + 1))
    for t in targets:
        for text in texts:
            for pattern, value in _FRACTION_WORDS:
                if abs(value - t) <= half_step and pattern.search(text):
                    return f"{written}% is the fraction the evidence names in words"
            for m in _ONE_IN.finditer(text):
                n = m.group(1).lower()
                whole = Decimal(n) if n.isdigit() else Decimal(_COUNT_WORDS.get(n, 0))
                if whole > 0 and abs(100 / whole - t) <= half_step:
                    return f"{written}% = 1 / {_show(whole)}"
        for a, b in itertools.permutations(evidence, 2):
            if 0 < a < b and abs(100 * a / b - t) <= half_step:
                return f"{written}% = {_show(a)} / {_show(b)}"
    return None


def _at(claim: str, written: str) -> tuple[int, int] | None:
    """Where the first standalone `written` of the claim stands (None: not found as written)."""
    first = written.split(" (")[0]
    m = re.search(r"(?<![\d.,])" + re.escape(first) + r"(?![\d])", claim)
    return None if m is None else m.span()


def _show(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text if "." not in text else text.rstrip("0").rstrip(".")
