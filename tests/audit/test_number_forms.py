"""number_mismatch: every spelling it reads, valid and invalid side by side; hints vs problems.

Each cause of a false alarm measured on human-labelled data (issue 11) has a row where the
evidence carries the claim's number in another spelling (nothing absent) next to a row where
the evidence carries a *different* number in that spelling (still caught).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.audit.agreement import expectation
from harness.audit.checks import Checker, check_numbers
from harness.audit.core import audit_session
from harness.audit.numbers import Evidence, absent, digit_forms, numbers, word_forms
from harness.audit.text import judge_summary
from harness.cli.cite_table import table_lines
from harness.session.loader import load_session
from harness.session.models import Claim
from tests.support.tried import count


def claim(
    text: str,
    quotes: list[tuple[str, str]],
    source_ids: list[str] | None = None,
) -> Claim:
    return Claim.model_validate(
        {
            "id": "c1",
            "text": text,
            "sourceIds": source_ids if source_ids is not None else ["s1"],
            "quotes": [{"sourceId": sid, "text": t} for sid, t in quotes],
        }
    )


def missing(text: str, evidence: str) -> list[str]:
    return [written for written, _ in absent(numbers(text), [Evidence(evidence)])]


FORMS = [
    # citation markers are not numbers ...
    ("Exposure raises the risk [2].", "exposure raises the risk", []),
    ("It rose [1, 3] sharply.", "it rose sharply", []),
    ("It rose [1-3] sharply.", "it rose sharply", []),
    ("It rose[^4] sharply.", "it rose sharply", []),
    ("It rose [1][2] sharply.", "it rose sharply", []),
    ("It rose\u00b9\u00b2\u00b3 sharply.", "it rose sharply", []),
    ("It rose^4 sharply.", "it rose sharply", []),
    ("It rose \u30102\u3011 sharply.", "it rose sharply", []),
    ("As stated in passage 2, it rose.", "it rose", []),
    ("As Passage ID 3 notes, it rose.", "it rose", []),
    ("Follow these steps:\n\n1[1].", "the steps", []),  # a list's enumerator
    ("Steps:\n2) Rinse 3 times.", "rinse 4 times", ["3"]),
    # ... but the numbers beside them still are
    ("It rose 4% [2].", "it rose 5%", ["4"]),
    ("It began [2] in 1986 [3].", "it began in 1987", ["1986"]),
    # digits glued to a word (a missing space)
    ("The cup was held in Spain1986.", "held in Spain in 1986", []),
    ("The cup was held in Spain1986.", "held in Spain in 1987", ["1986"]),
    ("It was first staged1990 in Rome.", "first staged in 1990", []),
    ("It was first staged1990 in Rome.", "first staged in 1991", ["1990"]),
    ("Held in 1986.", "the World Cup Spain1986 was", []),
    ("Held in 1986.", "the World Cup Spain1987 was", ["1986"]),
    # dotted and dashed dates
    ("It was signed on 11 June 2003.", "signed 2003.06.11", []),
    ("It was signed on 11 June 2003.", "signed 2003.06.12", ["11"]),
    ("It was signed on 2003.06.11.", "signed on 11 June 2003", []),
    ("It was signed on 2003.06.11.", "signed on 11 July 2003", ["06"]),
    ("It was signed on 2003-06-11.", "signed June 11, 2003", []),
    ("It was signed on 2003-06-11.", "signed June 11, 2004", ["2003"]),
    # ranges with a short second year
    ("The 2018\u20132019 season.", "the 2018\u201319 season", []),
    ("The 2018-2019 season.", "the 2018-19 season", []),
    ("The 2018\u20132019 season.", "the 2017\u201318 season", ["2019"]),
    ("The 2018\u201319 season.", "from 2018 to 2019", []),
    ("The 2018\u201319 season.", "from 2018 to 2020", ["19"]),
    ("The 1999\u201300 season.", "from 1999 to 2000", []),
    # a date with a two-digit year
    ("It opened on 15 July 2019.", "opened 15 Jul 19", []),
    ("It opened on 15 July 2019.", "opened 15 Jul 18", ["2019"]),
    ("It opened on 15 Jul 19.", "opened July 15, 2019", []),
    ("It opened on 15 Jul 19.", "opened July 15, 2018", ["19"]),
    # decades
    ("It grew in the 2000's.", "it grew in the 2000s", []),
    ("It grew during the 1990s.", "by 1994 it had grown", []),
    ("It grew during the 1990s.", "by 1984 it had grown", ["1990"]),
    ("It grew during the 1990s.", "it grew in the nineties", []),
    ("It grew in the mid-1990s.", "in 1995 it grew", []),
    ("It grew in the mid-1990s.", "in 1985 it grew", ["1990"]),
    # a converted value in parentheses belongs to the value before it
    ("It weighs 10 kg (23 lb).", "it weighs 10 kg", []),
    ("It weighs 10 kg (23 lb).", "it weighs 23 lb", []),
    ("It weighs 10 kg (23 lb).", "it weighs 12 kg", ["10 (23)"]),
    ("It cost $5 (\u00a34) each.", "it cost $5", []),
    ("It runs 5 miles (about 8 km).", "8 km long", []),
    ("In 2019 (2020 in Europe).", "in 2019", ["2020"]),  # not a conversion: no unit
    # names written with a number
    ("Cases rose during COVID-19.", "cases rose during the pandemic", []),
    ("Cases rose during covid-19.", "cases rose during the pandemic", []),
    ("The F-16 flew.", "the fighter flew", []),
    ("Version sq1 of G7 and H1N1.", "the version", []),
    ("Films of BiVO4 and CO2 capture.", "bismuth vanadate films", []),
    ("Draw 2D shapes on 5G phones.", "draw flat shapes", []),
    ("Draw 2 shapes.", "draw 3 shapes", ["2"]),
    # ordinals and centuries
    ("Built in the 16th century.", "built in the sixteenth century", []),
    ("Built in the 16th century.", "built in the seventeenth century", ["16"]),
    ("Built in the 16th-century style.", "built in the 1500s", []),
    ("Built in the late 15th century.", "built in 1492", []),
    ("Built in the late 15th century.", "built in 1592", ["15"]),
    ("The 4th best-selling car.", "the fourth best-selling car", []),
    ("The 4th best-selling car.", "the fifth best-selling car", ["4"]),
    # number words and scales
    ("5 trials ran.", "five trials ran", []),
    ("5 trials ran.", "six trials ran", ["5"]),
    ("205 people came.", "two hundred and five people came", []),
    ("21 dogs ran.", "twenty-one dogs ran", []),
    ("3 million people.", "three million people", []),
    ("About 1.5 million people.", "some 1,500,000 people", []),
    ("About 2 billion people.", "2,000,000,000 people", []),
    ("It raised $5bn.", "it raised 5 billion dollars", []),
    ("It cost 10,000 euros.", "it cost 10 000 euros", []),
    # the plain cases
    ("Growth was 7.5%.", "growth of 4.5% a year", ["7.5"]),
    ("Growth was 4.5%.", "growth of 4.5 percent a year", []),
    ("It cost 1,000 dollars.", "it cost 1000 dollars", []),
    ("A rate of 4.50.", "a rate of 4.5", []),
    ("In 1989 it fell.", "it fell in 1990", ["1989"]),
    ("In 2020 and 2021.", "in 2020", ["2021"]),
    ("Host 169.254.169.254 answered.", "the host answered", ["169.254.169.254"]),
    ("Host 169.254.169.254 answered.", "host 169.254.169.254", []),
    ("No numbers at all.", "none here either", []),
    # what no string check can decide stays absent
    ("Humans have 38 chromosomes.", "humans have 19 pairs of chromosomes", ["38"]),
]


@pytest.mark.parametrize(("text", "evidence", "expected"), FORMS)
def test_number_forms(text: str, evidence: str, expected: list[str]) -> None:
    assert missing(text, evidence) == expected


@pytest.mark.parametrize(("text", "evidence", "expected"), FORMS)
def test_number_forms_in_a_normalised_snapshot(
    text: str, evidence: str, expected: list[str]
) -> None:
    """A snapshot's text is casefolded and has its dashes folded: the same answers."""
    from harness.audit.checks import normalise

    assert missing(text, normalise(evidence)) == expected


@pytest.mark.parametrize(("text", "evidence", "expected"), FORMS)
def test_number_forms_in_a_long_source_text(text: str, evidence: str, expected: list[str]) -> None:
    """A whole document is searched for the missing numbers' spellings, not parsed for words:
    the same answers, except compounds such as `two hundred and five`."""
    from harness.audit.checks import normalise
    from harness.audit.numbers import LONG_TEXT

    pad = "lorem ipsum dolor sit amet. " * (LONG_TEXT // 20)
    long = normalise(f"{pad}{evidence} {pad}")
    assert len(long) > LONG_TEXT
    if "hundred and" in evidence:
        expected = [w for w, _ in numbers(text)]
    assert missing(text, long) == expected


def test_numbers_keep_the_written_form_and_order() -> None:
    assert [t for t, _ in numbers("In 1,200 cases, 3 of 1,200 were 4.0")] == ["1,200", "3", "4.0"]


def test_forms_read_by_each_side() -> None:
    assert dict(numbers("the 2018\u201319 season")) == {
        "2018": frozenset({"2018"}),
        "19": frozenset({"19", "2019"}),
    }
    assert {"1986", "month:6", "century:20", "decade:198"} <= digit_forms("Spain1986 in June")
    assert {"16", "century:16", "21", "205"} <= word_forms(
        "the sixteenth century; twenty-one; two hundred and five"
    )
    assert "3" not in word_forms("one and two")  # `and` joins hundreds only


# -- problems, hints and the source's text ---------------------------------------------


def texts(**by_id: str) -> Any:
    return lambda sid: Evidence(by_id[sid]) if sid in by_id else None


SOURCE = "Published 12 March 2021. The trial enrolled patients. It ran for two years."


@pytest.mark.parametrize(
    ("text", "quotes", "cited", "stored", "problem", "hint"),
    [
        # the year is in the source, outside the quote: carried
        ("The 2021 trial enrolled patients.", [("s1", "The trial enrolled patients.")], ["s1"],
         {"s1": SOURCE}, [], []),
        # a changed digit is in no text: a problem
        ("The 2020 trial enrolled patients.", [("s1", "The trial enrolled patients.")], ["s1"],
         {"s1": SOURCE}, ["2020"], []),
        # no stored text to decide: a hint, not a problem
        ("The 2021 trial enrolled patients.", [("s1", "The trial enrolled patients.")], ["s1"],
         {}, [], ["2021"]),
        # a quoted source without text: the number may be in it, a hint
        ("The 2020 trial ran.", [("s1", "The trial ran."), ("s2", "It ran.")], ["s1", "s2"],
         {"s1": SOURCE}, [], ["2020"]),
        # a cited source never quoted, without text: the quoted ones were read whole
        ("The 2020 trial ran.", [("s1", "The trial ran.")], ["s1", "s2"],
         {"s1": SOURCE}, ["2020"], []),
        # a source cited but not quoted whose text carries it
        ("The 2021 trial ran.", [("s2", "The trial ran.")], ["s1", "s2"],
         {"s1": SOURCE, "s2": "The trial ran."}, [], []),
        # in the quote: nothing to say, whatever the sources
        ("It ran for 2 years.", [("s1", "It ran for two years.")], ["s1"], {}, [], []),
        # citation markers never become hints either
        ("The trial enrolled patients [2][3].", [("s1", "The trial enrolled.")], ["s1"],
         {}, [], []),
    ],
)  # fmt: skip
def test_problem_or_hint(
    text: str,
    quotes: list[tuple[str, str]],
    cited: list[str],
    stored: dict[str, str],
    problem: list[str],
    hint: list[str],
) -> None:
    problems, hints = check_numbers(claim(text, quotes, cited), texts(**stored))
    assert (problems[0].numbers if problems else []) == problem
    assert (hints[0].numbers if hints else []) == hint
    assert all(p.check == "number_mismatch" for p in [*problems, *hints])
    if problems:
        assert "nor in the text of" in problems[0].detail
    if hints:
        assert "hint" in hints[0].detail and "no stored text" in hints[0].detail


def test_without_source_texts_every_absent_number_is_a_hint() -> None:
    problems, hints = check_numbers(claim("Growth was 7.5%.", [("s1", "growth of 4.5%")]))
    assert problems == [] and [h.numbers for h in hints] == [["7.5"]]


# -- inferred numbers and restated premises: hints, never problems (issue 32) --------------------


@pytest.mark.parametrize(
    ("text", "quote", "premise", "step"),
    [
        # a sum of quoted figures, the claim saying so
        ("In total 47 patients enrolled.", "28 patients enrolled at first, 19 more later.", "",
         "47 = 28 + 19"),
        # a difference of quoted figures
        ("Exports rose by 250 tonnes.", "Exports went from 1,000 to 1,250 tonnes.", "",
         "250 = 1250 − 1000"),
        # a relative date: a year of the evidence moved by the duration it states
        ("The dam opened in 1967.", "Work began in 1965; it opened two years later.", "",
         "1967 = 1965 + 2 years"),
        ("The plan dates from 1961.", "Built in 1965, it was planned 4 years before.", "",
         "1961 = 1965 − 4 years"),
        # an ordinal one past the count of what came before it
        ("It was her 12th attempt.", "She had made eleven previous attempts.", "",
         "ordinal after the 11 before it"),
        # a percentage from a fraction stated in numbers, at the claim's precision
        ("About 37.5% of the 24 sites closed.", "9 of the 24 sites closed.", "",
         "37.5% = 9 / 24"),
        # ... or in words
        ("A quarter, 25%, of staff left.", "A quarter of the staff left.", "",
         "fraction the evidence names in words"),
        ("Roughly 20% of adults smoke.", "One in five adults smokes.", "", "20% = 1 / 5"),
        # a multiple: 38 chromosomes from 19 pairs
        ("Cells hold 38 chromosomes in pairs.", "Cells hold 19 chromosome pairs.", "",
         "38 = 2 × 19"),
        # a product the claim writes out, of numbers the evidence states
        ("It sold 60 items * £10/unit = £600.", "It sold 60 items at $10/unit of 100 bought.",
         "", "600 = 10 × 60"),
        # a number the sub-question states: the claim restates its premise
        ("At a heart rate of 120, the score is 2.", "A score of 2 is given above 110 bpm.",
         "What score does a heart rate of 120 give?", "sub-question states it"),
    ],
)  # fmt: skip
def test_an_inferred_or_restated_number_is_a_hint(
    text: str, quote: str, premise: str, step: str
) -> None:
    problems, hints = check_numbers(claim(text, [("s1", quote)]), texts(s1=quote), premise=premise)
    assert problems == []
    assert len(hints) == 1 and step in hints[0].detail and "not a problem" in hints[0].detail


@pytest.mark.parametrize(
    ("text", "quote", "premise"),
    [
        # no word asks for the step: 45 is not there, whatever sums to it
        ("47 patients enrolled.", "28 patients enrolled at first, 19 more later.", ""),
        # a sum one digit from an operand (45 = 30 + 15, or 15 with a digit changed): a
        # changed digit is what it looks like, and recall keeps it a problem
        ("In total 45 patients enrolled.", "30 patients enrolled at first, 15 more later.", ""),
        # one digit from a quoted number: a changed digit, even beside a step's words
        ("In total 1966 was the year.", "It was completed in 1965 after 1 year.", ""),
        ("It rose by 81 percent.", "It rose by 80 percent, from 100 to 181.", ""),
        ("The total is around 11 million.", "The total is around 10 million; 1 more.", ""),
        # a result that is not the product it shows
        ("It sold 60 items * £10/unit = £700.", "It sold 60 items at $10/unit of 100 bought.",
         ""),
        # a percentage no fraction of the evidence gives
        ("About 41% of the 24 sites closed.", "9 of the 24 sites closed.", ""),
        # a duration the evidence does not state
        ("The dam opened in 1969.", "Work began in 1965; it opened two years later.", ""),
        # a premise of another question
        ("At a heart rate of 130, the score is 2.", "A score of 2 is given above 110 bpm.",
         "What score does a heart rate of 120 give?"),
    ],
)  # fmt: skip
def test_a_number_no_step_produces_stays_a_problem(text: str, quote: str, premise: str) -> None:
    problems, _ = check_numbers(claim(text, [("s1", quote)]), texts(s1=quote), premise=premise)
    assert len(problems) == 1 and problems[0].check == "number_mismatch"


@given(
    value=st.integers(min_value=10, max_value=99_999),
    position=st.integers(min_value=0, max_value=4),
    others=st.lists(st.integers(min_value=0, max_value=100), max_size=6),
    cue=st.sampled_from(["In total", "Combined,", "Two years later,", "It rose by", "Twice"]),
    suffix=st.sampled_from(["", "%", "th"]),
)
def test_a_changed_digit_is_caught_whatever_the_step_words(
    value: int, position: int, others: list[int], cue: str, suffix: str
) -> None:
    """A quoted number with one digit changed is a problem, beside any step word and any
    other numbers the quote holds (the step is never taken one digit away)."""
    written = str(value)
    i = position % len(written)
    new = (int(written[i]) + 1) % 10
    if i == 0 and new == 0:
        new = 1 if written[0] != "1" else 2
    changed = written[:i] + str(new) + written[i + 1 :]
    quote = f"The figure was {written}{suffix}; " + ", ".join(map(str, others)) + "."
    forms = digit_forms(quote) | word_forms(quote)
    if changed.lstrip("0") in forms:
        return  # the quote states the changed value too: not a fabrication
    count("changed digit beside a step word")
    text = f"{cue} the figure was {changed}{suffix}."
    problems, _ = check_numbers(claim(text, [("s1", quote)]), texts(s1=quote))
    assert [p.numbers for p in problems] == [[changed]]


# -- through a session: the snapshots, the report, the agreement, the summary ----------------


def write(folder: Path, claims: list[dict[str, Any]], snapshots: dict[str, str]) -> Path:
    (folder / "findings").mkdir(parents=True)
    (folder / "sources").mkdir()
    finding = {"id": "sq1", "subQuestion": "q", "claims": claims}
    (folder / "findings" / "sq1.json").write_text(json.dumps(finding))
    listed = [{"id": s, "url": f"https://example.org/{s}"} for s in ("s1", "s2", "s3")]
    (folder / "sources.json").write_text(json.dumps({"sources": listed}))
    for name, body in snapshots.items():
        (folder / "sources" / name).write_text(body)
    return folder


def quoted(cid: str, text: str, sid: str, quote: str) -> dict[str, Any]:
    return {
        "id": cid,
        "text": text,
        "sourceIds": [sid],
        "quotes": [{"sourceId": sid, "text": quote}],
    }


CLAIMS = [
    quoted("c1", "The 2021 trial enrolled patients.", "s1", "The trial enrolled patients."),
    quoted("c2", "The 2020 trial enrolled patients.", "s1", "The trial enrolled patients."),
    quoted("c3", "The 2019 study ran.", "s2", "The study ran."),  # s2: no snapshot
    quoted("c4", "The 2019 study ran.", "s3", "The study ran."),  # s3: an empty snapshot
]


def test_the_checker_reads_the_source_text_through_the_snapshots(tmp_path: Path) -> None:
    session = load_session(
        write(tmp_path / "s", CLAIMS, {"s1.html": f"<p>{SOURCE}</p>", "s3.txt": " "})
    )
    with Checker(session) as checker:
        reviews = {c.id: checker.review(c) for f in session.findings for c in f.claims}
        assert checker.source_text("s1") is checker.source_text("s1")  # read once
    numbers_of = {
        cid: ([p.numbers for p in ps if p.check == "number_mismatch"], [h.numbers for h in hs])
        for cid, (ps, hs) in reviews.items()
    }
    assert numbers_of == {
        "c1": ([], []),
        "c2": ([["2020"]], []),
        "c3": ([], [["2019"]]),
        "c4": ([], [["2019"]]),  # a blank snapshot decides nothing
    }


def test_hints_are_reported_apart_and_never_counted(tmp_path: Path) -> None:
    folder = write(tmp_path / "s", CLAIMS, {"s1.txt": SOURCE})
    report = audit_session(load_session(folder), offline=True)
    by_id = {c.claimId: c for c in report.claims}
    assert [p.check for p in by_id["c2"].problems] == ["number_mismatch"]
    assert by_id["c3"].problems == [] and [h.check for h in by_id["c3"].hints] == [
        "number_mismatch"
    ]
    assert report.version == "citations-v3"
    assert report.totals.checks.number_mismatch == 1
    assert report.totals.hints.number_mismatch == 2
    assert report.to_dict()["claims"][2]["hints"][0]["numbers"] == ["2019"]

    # hints earn and cost nothing: the same rate with them as with them removed
    rate = expectation(report)
    bare = report.model_copy(
        update={"claims": [c.model_copy(update={"hints": []}) for c in report.claims]}
    )
    assert rate == expectation(bare)
    assert rate is not None and rate.rate == 1.0  # number_mismatch is not serious either

    table = "\n".join(table_lines(report))
    assert "claims with problems: number_mismatch 1" in table
    assert "claims with hints (not problems): number_mismatch 2" in table
    c3_row = next(line for line in table.splitlines() if line.strip().startswith("c3"))
    assert "hint, number_mismatch:" in c3_row

    summary = judge_summary(report, None)
    assert "Claims with problems: number_mismatch 1." in summary
    assert "Claims with hints (not problems): number_mismatch 2." in summary
    assert "it is not a defect" in summary
    assert "c3 (findings/sq1.json): unchecked; hint, number_mismatch:" in summary


# -- the precision bench, on a tiny data set ---------------------------------------------------


def test_the_number_bench_measures_before_after_and_recall(tmp_path: Path) -> None:
    import subprocess
    import sys

    rows = [
        ("Aspirin reduces fever [1].", "Aspirin is used to reduce fever."),
        ("The cup was held in Spain1986 [2].", "The 1986 World Cup was held in Spain."),
        ("The trial, published in 2021, ran a year [3].", "Published 2021. The trial ran a year."),
        ("Humans have 38 chromosomes [1].", "Humans have 19 pairs of chromosomes."),
    ]
    data = tmp_path / "claims.jsonl"
    data.write_text(
        "".join(
            json.dumps(
                {
                    "question": "q",
                    "system": "s",
                    "claim": c,
                    "evidence": [{"marker": "[1]", "url": f"https://e.org/{i}", "text": t}],
                }
            )
            + "\n"
            for i, (c, t) in enumerate(rows)
        )
    )
    bench = Path(__file__).resolve().parents[2] / "bench" / "bench_numbers.py"
    out = subprocess.run(
        [sys.executable, str(bench), "--data", str(data), "--json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    figures = json.loads(out.stdout)
    as_text = figures["settings"]["passages as quotes and as text"]
    assert as_text["before"] == 1.0  # every claim: a marker, a glued year or 38
    assert as_text["after"] == 0.25  # only 38 chromosomes (an inference) is left
    one = figures["settings"]["one sentence quoted, passage as text"]
    assert one["after"] == 0.25 and one["before"] == 1.0  # 2021 is outside the quoted sentence
    assert figures["settings"]["passages as quotes, no text"]["after"] == 0.0
    assert figures["settings"]["passages as quotes, no text"]["hints"] == 0.25
    assert figures["recall"]["changed"] > 0
    assert figures["recall"]["recall"] == 1.0

    missing = subprocess.run(
        [sys.executable, str(bench), "--data", str(tmp_path / "none.jsonl")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert missing.returncode != 0 and "pass --data FILE" in missing.stderr


# -- a changed digit is always caught, whatever the spelling around it --------------------------

_SPELLINGS = ["{n}", "in {n},", "({n})", "{n}%", "Spain{n}", "[{n}]", "{n}s", "{n}th"]


@given(
    n=st.integers(min_value=0, max_value=10**7),
    shape=st.sampled_from(_SPELLINGS),
    marker=st.sampled_from(["", " [2]", "[1, 3]", "\u00b9"]),
)
def test_a_changed_number_is_caught_and_the_same_one_is_carried(
    n: int, shape: str, marker: str
) -> None:
    count("number_forms: changed digit")
    text = f"The figure was {n:,}{marker} that year."
    other = n + 1 if (n + 1) % 10 else n + 2  # never the same value, never a decade/century
    assert missing(text, shape.format(n=n)) == []
    assert missing(text, shape.format(n=f"{n:,}")) == []
    assert missing(text, f"the figure was {other}") == [f"{n:,}"]
