"""The numbers a claim states, and the numbers a quote or a source's text carries.

The two sides are read differently, so that a check built on them claims only what it knows:

- **A claim's numbers** (`numbers`) are the ones it must be able to point to: written in
  digits, standing alone or glued to the end of a word (`Spain1986`, `staged1990`, a missing
  space in the text), not a citation marker (`[2]`, `[1, 3]`, `[^4]`, `^4`, superscripts)
  and not part of a name (`COVID-19`, `F-16`, `H1N1`, `sq1`). A converted value in
  parentheses belongs to the value before it: `10 kg (23 lb)` is carried when either is.
- **The evidence** (`digit_forms`, `word_forms`: quotes and source text) is read leniently:
  every digit run, wherever it is glued, and number words (`five`, `twenty-one`, `two
  hundred`, `sixteenth`).

A number is carried when one of its *forms* is among the evidence's forms. Forms are
canonical values (`1,000` = `1000`, `4.50` = `4.5`, `1.5 million` = `1500000`; `%` and
`percent` are not part of a number) and a few tagged ones, so that a spelling the check
reads is not taken for a different number:

- `2018-19` and `2018/19` also carry `2019`; `15 Jul 19` and `'19` also carry `1919` and
  `2019`;
- dates `2003.06.11`, `2003-06-11`, `11/06/2003` are a year, a month and a day, and a
  month's number is carried by its name (`June`);
- `1990s` and `2000's` are decades (`decade:199`), carried by any year in them;
  `16th century` and `sixteenth century` are centuries (`century:16`), carried by a year in
  it (1492 carries `15th century`) or by `1500s`.

What no string check can decide (`38 chromosomes` from `19 pairs`) stays absent: the check
that uses these forms says what it could and could not read.

Reading the forms of a source at the loader's 8 MiB cap takes seconds, inside one claim's
check: an `Evidence` given a `deadline` (monotonic, the run's) reads the clock as it goes
(`harness.clock`, every few hundred matches) and raises `OutOfTime` once it has
passed, keeping none of the forms it was reading (never half a set, which would miss
numbers the text carries). Each source's `Evidence` is made once for all the claims citing
it (`harness.audit.checks.Checker`).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import re
from decimal import Decimal, InvalidOperation

from harness.clock import Deadline, ticks

__all__ = [
    "MAX_CLAIM_NUMBERS",
    "NUMBER_WORDS",
    "Evidence",
    "Wanted",
    "absent",
    "digit_forms",
    "numbers",
    "strip_markers",
    "word_forms",
]

Wanted = tuple[str, frozenset[str]]  # a claim's number: as written, and the forms it matches
# A claim's numbers looked for at most (each may cost a scan of an 8 MiB source): the
# check that uses them says when a claim has more.
MAX_CLAIM_NUMBERS = 64

# -- canonical values -----------------------------------------------------------------

_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_SCALE = {
    "thousand": 10**3,
    "k": 10**3,
    "million": 10**6,
    "mn": 10**6,
    "m": 10**6,
    "billion": 10**9,
    "bn": 10**9,
    "b": 10**9,
    "trillion": 10**12,
}


def _canonical(token: str) -> str:
    """`1,000` -> `1000`, `4.50` -> `4.5`, `007` -> `7`; other spellings are kept as written."""
    token = token.replace("\u00a0", "").replace("\u202f", "")
    if _THOUSANDS.fullmatch(token):
        token = token.replace(",", "")
    if token.count(".") == 1 and "," not in token:
        whole, frac = token.split(".")
        frac = frac.rstrip("0")
        token = (whole.lstrip("0") or "0") + ("." + frac if frac else "")
    elif token.isdigit():
        token = token.lstrip("0") or "0"
    return token


@functools.lru_cache(maxsize=4096)  # years and percentages recur across a session's claims
def _forms(token: str, scale: str | None) -> frozenset[str]:
    """Every spelling a number may match: itself, and its value when a scale word follows."""
    value = _canonical(token)
    if not scale:
        return frozenset((value,))
    with contextlib.suppress(InvalidOperation, KeyError):
        return frozenset((value, _canonical(str(Decimal(value) * _SCALE[scale.lower()]))))
    return frozenset((value,))


# -- what is not a number of the claim -------------------------------------------------

_MARKER = re.compile(
    r"\[\^?\s*\d+(?:\s*[,;\u2013\u2014-]\s*\^?\s*\d+)*\s*\]"  # [2] [1, 3] [^4] [1-3]
    r"|\^\[?\d+\]?"  # ^4 ^[4]
    r"|\b(?:passage|source|document|reference)(?:\s+id)?\s+\d+\b"  # as stated in passage 2
    r"|[\u00b9\u00b2\u00b3\u2070\u2074-\u2079]+"  # superscript digits
    r"|\u3010\d+(?:\s*[,\u2020\u2021]\s*\d+)*\u3011",  # 【1】 【3†source】-style
    re.IGNORECASE,
)
# `1.` or `2)` opening a line of a list: an enumerator, not a number (markers already blank).
_ENUMERATOR = re.compile(r"^[ \t]*\d{1,2}[ \t]*[.)](?!\d)", re.MULTILINE)
# Digits that open a name: 2D, 3D, 4G, 5G, 4IR.
_NAME_AFTER = re.compile(r"(?:[DG]|IR)\b")
# Lower-case prefixes of names written with a number (most names carry a capital: COVID-19).
_NAMES = frozenset({"covid", "sars", "cov", "mers", "h", "n"})
_PREFIXES = frozenset(
    [
        "mid",
        "pre",
        "post",
        "early",
        "late",
        "top",
        "over",
        "under",
        "non",
        "sub",
        "circa",
        "ca",
        "c",
        "age",
        "aged",
    ]
)


_MARKER_HINT = re.compile(
    r"[\[^\u00b9\u00b2\u00b3\u2070\u2074-\u2079\u3010]|passage|source|document|reference",
    re.IGNORECASE,
)


def _blank(m: re.Match[str]) -> str:
    return " " * len(m.group(0))


def strip_markers(text: str) -> str:
    """`text` with citation markers (and list enumerators) blanked out, same length."""
    if _MARKER_HINT.search(text):  # most text has none: one scan, not the alternation
        text = _MARKER.sub(_blank, text)
    if "\n" in text:
        text = _ENUMERATOR.sub(_blank, text)
    return text


# -- the token and its context ---------------------------------------------------------

# Digits with `,`/`.` separators, or groups of three split by a (narrow) no-break space;
# then a scale word, or a scale glued on (`1.5M`, `$5bn`, `10k`).
_TOKEN = re.compile(
    # The look-behind follows the first digit: Python's re then skips to digits quickly.
    r"(?P<n>\d(?<![\d.,]\d)(?:\d{0,2}(?:[\u00a0\u202f]\d{3})+(?!\d)|\d*(?:[.,]\d+)*))"
    r"(?:\s+(?P<scale>million|billion|trillion|thousand)\b|(?P<abbr>bn|mn|[mkb])\b)?",
    re.IGNORECASE,
)
_GLUED = re.compile(r"([A-Za-z]+)(-?)$")
_DECADE = re.compile(r"['\u2019]?s\b", re.IGNORECASE)
_ORDINAL_CENTURY = re.compile(r"(?:st|nd|rd|th)[\s-]+centur", re.IGNORECASE)
_RANGE_START = re.compile(r"(?<!\d)(\d{4})\s*[-\u2010-\u2015/]\s*$")
_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_SHORT_YEAR_BEFORE = re.compile(
    r"(?:\b" + _MONTH + r",?\s+|['\u2019])$",
    re.IGNORECASE,
)
# Read on lower-cased text, without IGNORECASE or a leading \b (each costs a full scan).
_MONTH_NAME = re.compile(r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*")
_MONTH_NAMES = frozenset(
    [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
    ]
)
# Dates written in digits: year first, or day/month first (both readings kept).
_DATE_YMD = re.compile(r"(\d(?<![\d.]\d)\d{3})([./-])(\d{1,2})\2(\d{1,2})(?![\d])")
_DATE_DMY = re.compile(r"(\d(?<![\d.]\d)\d?)([./-])(\d{1,2})\2(\d{4}|\d{2})(?![\d.])")
_SPACED_THOUSANDS = re.compile(r"\d(?<![\d.,]\d)\d{0,2}(?: \d{3})+(?![\d])")
_PARTS = re.compile(r"\d+")
_DIGIT = re.compile(r"\d")


def _short_year(yy: str) -> set[str]:
    return {"19" + yy, "20" + yy}


def _context(text: str, m: re.Match[str], evidence: bool) -> set[str]:
    """The tagged forms a token's surroundings give it (decades, centuries, short years)."""
    token = m.group("n")
    out: set[str] = set()
    if not token.isdigit():
        return out
    after = text[m.end() : m.end() + 16]
    before = text[max(0, m.start() - 16) : m.start()]
    if _DECADE.match(after) and token.endswith("0"):
        if len(token) == 4:
            out.add(f"decade:{token[:3]}")
            if token.endswith("00"):
                out.add(f"century:{int(token[:2]) + 1}")
        elif len(token) == 2:
            out |= {f"decade:19{token[0]}", f"decade:20{token[0]}"}
    if _ORDINAL_CENTURY.match(after):
        out.add(f"century:{int(token)}")
    if len(token) == 2:
        start = _RANGE_START.search(before)
        if start is not None:  # 2018-19: the second year of a range
            first = int(start.group(1))
            second = first - first % 100 + int(token)
            out.add(str(second if second > first else second + 100))
        elif _SHORT_YEAR_BEFORE.search(before):  # 15 Jul 19, '19
            out |= _short_year(token)
    if evidence and len(token) == 4 and 1000 <= int(token) <= 2099:  # a year's decade, century
        out |= {f"decade:{token[:3]}", f"century:{int(token) // 100 + 1}"}
    return out


def _token_forms(text: str, m: re.Match[str], evidence: bool) -> set[str]:
    return set(_forms(m.group("n"), m.group("scale") or m.group("abbr"))) | _context(
        text, m, evidence
    )


_DATE_HINT = re.compile(r"\d[./-]\d{1,2}[./-]\d")


def _dates(
    text: str, deadline: Deadline | None = None
) -> list[tuple[int, int, list[tuple[str, set[str]]]]]:
    """Dates in digits: (start, end, [(part as written, its forms)]): year, month, day."""
    out: list[tuple[int, int, list[tuple[str, set[str]]]]] = []
    if not _DATE_HINT.search(text):
        return out
    for m in ticks(_DATE_YMD.finditer(text), deadline):
        year, month, day = m.group(1), m.group(3), m.group(4)
        if 1 <= int(month) <= 12 and 1 <= int(day) <= 31:
            parts = [
                (year, {_canonical(year)}),
                (month, {_canonical(month), f"month:{int(month)}"}),
                (day, {_canonical(day)}),
            ]
            out.append((m.start(), m.end(), parts))
    for m in ticks(_DATE_DMY.finditer(text), deadline):
        a, b, year = m.group(1), m.group(3), m.group(4)
        if not (1 <= int(a) <= 31 and 1 <= int(b) <= 31 and min(int(a), int(b)) <= 12):
            continue
        years = {_canonical(year)} | (_short_year(year) if len(year) == 2 else set())
        first = {_canonical(a)} | ({f"month:{int(a)}"} if int(a) <= 12 else set())
        second = {_canonical(b)} | ({f"month:{int(b)}"} if int(b) <= 12 else set())
        out.append((m.start(), m.end(), [(a, first), (b, second), (year, years)]))
    out.sort()
    return out


# -- a claim's numbers -----------------------------------------------------------------

_APPROX = r"(?:about|approx\w*\.?|around|roughly|some|nearly|almost|over|c\.|ca\.|~|\u2248)"
_UNIT = r"[A-Za-z\u00b0\u00b5%\u00b2\u00b3/.]{1,12}"
_CURRENCY = r"(?:[A-Z]{0,3}[$\u20ac\u00a3\u00a5\u20b9]|(?:US|CA|AU)\$)"
_BETWEEN = re.compile(
    r"\s*(?:" + _UNIT + r"(?:\s+" + _UNIT + r")?)?\s*\(\s*(?:" + _APPROX + r"\s*)?"
    r"(" + _CURRENCY + r")?\s*$"
)
_AFTER = re.compile(r"\s*([A-Za-z\u00b0\u00b5%\u00b2\u00b3/.]{1,8})?\s*\)")  # one unit, closed


def numbers(text: str, deadline: Deadline | None = None) -> list[Wanted]:
    """The numbers `text` (a claim) states, in order: (as written, the forms it may match).

    Citation markers, names (`COVID-19`) and identifiers (`sq1`) are left out; a value
    converted in parentheses (`10 kg (23 lb)`) is one entry, written `10 (23)`, carried by
    either form. Identical entries are listed once. Raises `OutOfTime` past `deadline`.
    """
    if _DIGIT.search(text) is None:  # most claims: no number at all
        return []
    clean = strip_markers(text)
    dates = _dates(clean, deadline)
    found: list[tuple[int, int, str, set[str]]] = []  # start, end, as written, forms
    d = 0
    for m in ticks(_TOKEN.finditer(clean), deadline):
        while d < len(dates) and dates[d][1] <= m.start():
            d += 1
        if d < len(dates) and dates[d][0] <= m.start() < dates[d][1]:
            if dates[d][0] == m.start():  # the date's parts, once, for its first token
                for written, forms in dates[d][2]:
                    found.append((m.start(), dates[d][1], written, forms))
            continue
        at = m.start()
        if at and (clean[at - 1].isalpha() or clean[at - 1] == "-"):
            glued = _GLUED.search(clean, max(0, at - 24), at)
            if glued is not None and _named(*glued.groups()):
                continue
        if len(m.group("n")) == 1 and _NAME_AFTER.match(clean, m.end()):
            continue
        found.append((m.start(), m.end(), m.group("n"), _token_forms(clean, m, False)))
    merged: list[tuple[str, set[str]]] = []
    prev_end = -1
    for start, end, written, forms in found:
        if merged and _converts(clean, prev_end, start, end):
            last_written, last_forms = merged[-1]
            merged[-1] = (f"{last_written} ({written})", last_forms | forms)
        else:
            merged.append((written, forms))
        prev_end = end
    out: dict[tuple[str, frozenset[str]], None] = {}
    for written, forms in merged:
        out[(written, frozenset(forms))] = None
    return list(out)


def _named(letters: str, hyphen: str) -> bool:
    """Whether digits after `letters` (and a hyphen) are part of a name, not a number."""
    lower = letters.lower()
    if hyphen:  # COVID-19, F-16 are names; mid-1990s, top-10, under-18s are numbers
        return lower not in _PREFIXES and (lower in _NAMES or any(c.isupper() for c in letters))
    # sq1, G7, COVID19, BiVO4 are identifiers or formulas; Spain1986 is a missing space
    return len(letters) < 3 or letters[-1].isupper() or lower in _NAMES


def _converts(text: str, prev_end: int, start: int, end: int) -> bool:
    """Whether the number at start..end is a conversion, in parentheses, of the one before."""
    between = _BETWEEN.fullmatch(text, prev_end, start)
    if between is None or "(" not in text[prev_end:start]:
        return False
    after = _AFTER.match(text, end)
    return after is not None and bool(between.group(1) or after.group(1))


# -- what the evidence carries ---------------------------------------------------------


def digit_forms(text: str) -> set[str]:
    """Every form of every number written in digits in `text` (a quote, a source's text).

    Lenient: digits glued to letters count (`Spain1986`, `COVID-19` carry 1986 and 19), the
    parts of a dotted or dashed date or address count, as do the months named (`June` is
    `month:6`) and every year's decade and century.
    """
    return _digit_forms(text) | month_forms(text)


def _digit_forms(text: str, deadline: Deadline | None = None) -> set[str]:
    forms: set[str] = set()
    for m in ticks(_TOKEN.finditer(text), deadline):
        forms |= _token_forms(text, m, True)
        token = m.group("n")
        if token.count(".") + token.count(",") > 1 and not _THOUSANDS.fullmatch(token):
            for part in _PARTS.findall(token):
                forms.add(_canonical(part))
    for _, _, parts in _dates(text, deadline):
        for _, part_forms in parts:
            forms |= part_forms
    if " " in text:
        for m in ticks(_SPACED_THOUSANDS.finditer(text), deadline):
            forms.add(_canonical(m.group(0).replace(" ", "")))
    return forms


def month_forms(text: str, deadline: Deadline | None = None) -> set[str]:
    """The months `text` names (`June`, `jun.`), as `month:6`."""
    forms: set[str] = set()
    lower = text.lower()
    for m in ticks(_MONTH_NAME.finditer(lower), deadline):
        start = m.start()
        if m.group(0) in _MONTH_NAMES and not (start and lower[start - 1].isalpha()):
            forms.add(f"month:{_MONTHS.index(m.group(0)[:3]) + 1}")
    return forms


_ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_ORDINAL_ONES = [
    "zeroth",
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
]
_ORDINAL_TENS = "twentieth thirtieth fortieth fiftieth sixtieth seventieth eightieth ninetieth"
_DECADE_WORDS = [
    "twenties",
    "thirties",
    "forties",
    "fifties",
    "sixties",
    "seventies",
    "eighties",
    "nineties",
]
_SMALL: dict[str, int] = {
    **{w: i for i, w in enumerate(_ONES)},
    **{w: 20 + 10 * i for i, w in enumerate(_TENS)},
    **{w: i for i, w in enumerate(_ORDINAL_ONES)},
    **{w: 20 + 10 * i for i, w in enumerate(_ORDINAL_TENS.split())},
    "dozen": 12,
}
NUMBER_WORDS: dict[str, int] = dict(_SMALL)  # `seven`, `twenty`, `third`, `dozen`: their values

_BIG = {
    "hundred": 100,
    "hundredth": 100,
    "thousand": 10**3,
    "thousandth": 10**3,
    "million": 10**6,
    "millionth": 10**6,
    "billion": 10**9,
    "billionth": 10**9,
    "trillion": 10**12,
}
_NUMBER_WORD = r"(?:" + "|".join(sorted([*_SMALL, *_BIG], key=len, reverse=True)) + r")"
_WORD_RUN = re.compile(
    r"\b(?:an?\s+(?=(?:hundred|thousand|million|billion|dozen)\b))?"
    + _NUMBER_WORD
    + r"(?:(?:\s+and\s+|[\s-]+)"
    + _NUMBER_WORD
    + r")*\b(?:[\s-]+(centur))?",
    re.IGNORECASE,
)
_DECADE_WORD = re.compile(r"\b(" + "|".join(_DECADE_WORDS) + r")\b", re.IGNORECASE)
_SPLIT = re.compile(r"[\s-]+")


def _run_value(words: list[str]) -> int:
    total = current = 0
    for word in words:
        if word in _SMALL:
            current += _SMALL[word]
        elif word == "hundred" or word == "hundredth":
            current = max(current, 1) * 100
        else:
            total += max(current, 1) * _BIG[word]
            current = 0
    return total + current


def word_forms(text: str) -> set[str]:
    """The values of the number words in `text`: `five`, `twenty-one` (21, 20 and 1), `two
    hundred and five`, `a million`, `sixteenth` (and `century:16` before `century`),
    `nineties` (a decade)."""
    forms: set[str] = set()
    for m in _WORD_RUN.finditer(text):
        words = [w for w in _SPLIT.split(m.group(0).lower()) if w not in ("a", "an", "centur")]
        groups: list[list[str]] = [[]]
        for word in words:  # `and` joins `two hundred and five`, not `one and two`
            if word == "and":
                if groups[-1] and groups[-1][-1] in _BIG:
                    continue
                groups.append([])
            else:
                groups[-1].append(word)
        for group in groups:
            if not group:
                continue
            forms |= {str(_SMALL[w]) for w in group if w in _SMALL}
            value = _run_value(group)
            forms.add(str(value))
            if m.group(1) and group is groups[-1]:
                forms.add(f"century:{value}")
    for m in _DECADE_WORD.finditer(text):
        tens = 2 + _DECADE_WORDS.index(m.group(1).lower())
        forms |= {f"decade:19{tens}", f"decade:20{tens}"}
    return forms


# -- carried or not --------------------------------------------------------------------


def _cardinals(value: int) -> list[str]:
    if value < 20:
        return [_ONES[value]]
    tens = _TENS[value // 10 - 2]
    if value % 10 == 0:
        return [tens]
    return [f"{tens}-{_ONES[value % 10]}", f"{tens} {_ONES[value % 10]}"]


def _ordinals(value: int) -> list[str]:
    if value < 20:
        return [_ORDINAL_ONES[value]]
    if value % 10 == 0:
        return [_ORDINAL_TENS.split(" ")[value // 10 - 2]]
    tens = _TENS[value // 10 - 2]
    return [f"{tens}-{_ORDINAL_ONES[value % 10]}", f"{tens} {_ORDINAL_ONES[value % 10]}"]


def spellings(form: str) -> list[str]:
    """How a form may be written in words (lower case): `21` -> `twenty-one`, `twenty one`,
    `twenty-first`...; `3000000` -> `three million`; `century:16` -> `sixteenth centur`."""
    kind, _, rest = form.rpartition(":")
    if kind == "century" and rest.isdigit() and 0 < int(rest) < 100:
        return [f"{o} centur" for o in _ordinals(int(rest))]
    if kind == "decade" and rest.isdigit() and int(rest) % 10 >= 2:
        return [_DECADE_WORDS[int(rest) % 10 - 2]]
    if kind or not form.isdigit():
        return []
    value = int(form)
    if value < 100:
        return _cardinals(value) + _ordinals(value)
    out = []
    for word, scale in (("hundred", 100), ("thousand", 10**3), ("million", 10**6)):
        if value % scale == 0 and value // scale < 100:
            out += [f"{c} {word}" for c in _cardinals(value // scale)]
            out += [f"a {word}"] if value == scale else []
    for word, scale in (("billion", 10**9), ("trillion", 10**12)):
        if value % scale == 0 and value // scale < 100:
            out += [f"{c} {word}" for c in _cardinals(value // scale)]
    return out


def _spelled(lower: str, spelling: str, deadline: Deadline | None = None) -> bool:
    """Whether `spelling` is in `lower` as whole words (a `centur` prefix may run on)."""
    at = lower.find(spelling)
    for _ in ticks(itertools.repeat(None), deadline):  # `one` in a million `phone`s
        if at < 0:
            break
        end = at + len(spelling)
        starts = at == 0 or not lower[at - 1].isalpha()
        ends = spelling.endswith("centur") or end == len(lower) or not lower[end].isalpha()
        if starts and ends:
            return True
        at = lower.find(spelling, at + 1)
    return False


LONG_TEXT = 64 * 1024  # longer texts are searched for the missing numbers' spellings only


class Evidence:
    """The number forms one text carries, read on first need: its plain digits, then every
    digit form (contexts, dates), then the months it names, then its number words.

    A text longer than `LONG_TEXT` (a source's whole document) is not parsed for number
    words: the spellings of the numbers still missing are looked up in it (`str.find`),
    which reads every spelling up to ninety-nine, ordinals, centuries, decades and round
    scales (`three million`) but not compounds such as `two hundred and five`.

    Past `deadline` (monotonic), a reading raises `OutOfTime` and keeps nothing: asked
    again, it starts over (and stops at once).
    """

    __slots__ = (
        "_digits",
        "_lower",
        "_months",
        "_plain",
        "_spelled",
        "_text",
        "_words",
        "cuts",
        "deadline",
    )

    def __init__(
        self, text: str, cuts: tuple[str, ...] = (), deadline: Deadline | None = None
    ) -> None:
        self._text = text
        self.cuts = cuts  # what the text leaves out (a byte cap, a page cap): said in a problem
        self.deadline = deadline
        self._plain: set[str] | None = None
        self._digits: set[str] | None = None
        self._months: set[str] | None = None
        self._words: set[str] | None = None
        self._lower: str | None = None
        self._spelled: dict[str, bool] = {}  # a long text's spellings found, by spelling

    def plain(self) -> set[str]:
        """The values written in digits, without what their surroundings add (cheap)."""
        if self._plain is None:
            plain: set[str] = set()  # kept only once whole
            for m in ticks(_TOKEN.finditer(self._text), self.deadline):
                plain |= _forms(m.group("n"), m.group("scale") or m.group("abbr"))
            self._plain = plain
        return self._plain

    def digits(self) -> set[str]:
        if self._digits is None:
            self._digits = _digit_forms(self._text, self.deadline)
        return self._digits

    def months(self) -> set[str]:
        if self._months is None:
            self._months = month_forms(self._text, self.deadline)
        return self._months

    def carries_digits(self, forms: frozenset[str]) -> bool:
        if forms & self.digits():
            return True
        return any(f.startswith("month:") for f in forms) and bool(forms & self.months())

    @property
    def text(self) -> str:
        return self._text

    def short(self) -> bool:
        """Whether the text is read for its number words (not a whole long document)."""
        return len(self._text) <= LONG_TEXT

    def words(self) -> set[str]:
        """The values of its number words; none for a long text (see the class)."""
        if not self.short():
            return set()
        if self._words is None:
            self._words = word_forms(self._text)
        return self._words

    def carries_words(self, forms: frozenset[str]) -> bool:
        if self.short():
            return bool(forms & self.words())
        if self._lower is None:
            self._lower = self._text.lower()
        lower, seen = self._lower, self._spelled
        for form in forms:
            for spelling in spellings(form):
                found = seen.get(spelling)
                if found is None:  # one scan of the long text per spelling, for all claims
                    found = seen[spelling] = _spelled(lower, spelling, self.deadline)
                if found:
                    return True
        return False


def absent(wanted: list[Wanted], evidence: list[Evidence]) -> list[Wanted]:
    """The numbers of `wanted` that no text of `evidence` carries, in order.

    Each reading is done only when the cheaper ones leave a number out (most claims'
    numbers are in their quotes' plain digits).
    """
    missing = [w for w in wanted if not any(w[1] & e.plain() for e in evidence)]
    if missing:
        missing = [w for w in missing if not any(e.carries_digits(w[1]) for e in evidence)]
    if missing:
        missing = [w for w in missing if not any(e.carries_words(w[1]) for e in evidence)]
    return missing
