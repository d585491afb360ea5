"""Build the second retrieval evidence set in ``bench/data/evidence2/``: generated articles.

The first set (``bench/data/evidence/``, from ExpertQA) marks a whole passage of about 1,000
characters as a claim's evidence and embeds it among unrelated passages. Held-out data of a
different shape (encyclopedia articles, one sentence a line, a claim supported by one
sentence) is what this set imitates, from text this script writes itself (no data set, no
download): encyclopedia-like articles about invented towns, each line one sentence, a
heading, a list item or a table row, and claims each supported by exactly **one** line that
shares few words with the claim:

- the support says it with other words (synonyms, paraphrase: "burned down" for "a fire
  destroyed"), often through a pronoun or "the town" where the claim names the town;
- numbers are written differently (the claim rounds "12,431" to "about 12,000", or says
  "48 thousand"; a percentage for a share);
- the support can be a list item under a heading (twin towns, industries) or a table row
  (population by year);
- each article also holds near misses: lines that use the claim's own words (the district's
  population, another year, another river) without supporting it, and many other lines on
  the same town, so the town's name and the topic words are everywhere.

Two kinds of article: ``single`` (one claim cites it) and ``quad`` (four claims cite it, each
supported by its own line). The output is deterministic (``random.Random(SEED)``); running
the script again gives byte-identical files. The text is invented and states nothing true
about any real place; see the set's README for its licence (CC0).

Usage: ``python scripts/build_evidence_set2.py [--out DIR]``.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "bench" / "data" / "evidence2"
SEED = 32
SINGLES = 120  # articles cited by one claim
QUADS = 40  # articles cited by four claims

_SYL = [
    "var",
    "mor",
    "len",
    "dal",
    "hol",
    "brek",
    "stad",
    "win",
    "ost",
    "ruv",
    "kel",
    "tam",
    "bor",
    "fen",
    "gis",
    "lor",
    "nav",
    "pel",
    "quin",
    "sar",
    "tor",
    "ulm",
    "vek",
    "wes",
    "yar",
    "zan",
    "hal",
    "mir",
    "dor",
]
_END = ["holm", "berg", "dorf", "stad", "vik", "ford", "wick", "ton", "mar", "heim", "by", "lund"]
_FIRST = [
    "Anna",
    "Bertil",
    "Clara",
    "Dmitri",
    "Elin",
    "Farid",
    "Greta",
    "Hugo",
    "Ines",
    "Jonas",
    "Karin",
    "Lukas",
    "Maja",
    "Nils",
    "Olga",
    "Pavel",
    "Rosa",
    "Sven",
    "Tilde",
    "Viktor",
    "Wilma",
    "Yusuf",
    "Zofia",
    "Emil",
    "Hedda",
    "Oskar",
]
_LAST = [
    "Halvorsen",
    "Brandt",
    "Kessler",
    "Lindqvist",
    "Moreau",
    "Novak",
    "Ostrowski",
    "Petrescu",
    "Quist",
    "Rasmussen",
    "Sorensen",
    "Tamm",
    "Ulrich",
    "Varga",
    "Weiss",
    "Zeller",
    "Aalto",
    "Berger",
    "Castell",
    "Dahl",
    "Engel",
    "Falk",
]
_COUNTRY = ["Veltria", "Ostmark", "Calvany", "Norrland", "Sudova", "Arvenia", "Morlach", "Tessaly"]
_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


def _name(rng: random.Random) -> str:
    return (rng.choice(_SYL) + rng.choice(_SYL) + rng.choice(_END)).capitalize()


def _person(rng: random.Random) -> str:
    return f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"


def _about(n: int) -> str:
    """A rounded restatement of `n` ("about 12,000", "roughly 48 thousand")."""
    if n >= 10000 and n % 1000:
        return f"roughly {round(n / 1000)} thousand"
    if n >= 1000 and n % 100:
        return f"about {round(n, -2):,}"
    return f"some {n:,}"


@dataclass
class Town:
    """The facts of one invented town, drawn once and used by every line about it."""

    name: str
    region: str
    country: str
    river: str
    other_river: str
    district: str
    years: list[int]  # a small pool, so the same year recurs across unrelated lines
    people: list[str]
    twins: list[str]
    city: str
    festival: str
    building: str
    population: int
    facts: dict[str, int | str] = field(default_factory=dict)


def _town(rng: random.Random) -> Town:
    base = rng.randrange(1780, 1960)
    years = sorted({base + rng.randrange(0, 60) for _ in range(7)})
    return Town(
        name=_name(rng),
        region=_name(rng).replace("holm", "land"),
        country=rng.choice(_COUNTRY),
        river=f"{_name(rng)[:-2]}a",
        other_river=f"{_name(rng)[:-2]}e",
        district=f"{_name(rng)} District",
        years=years,
        people=[_person(rng) for _ in range(8)],
        twins=[_name(rng) for _ in range(5)],
        city=_name(rng),
        festival=f"{_name(rng)} {rng.choice(['Lantern', 'Harvest', 'River', 'Winter'])} Festival",
        building=rng.choice(["Old Granary", "Town Hall", "Stone Bridge", "Clock Tower"]),
        population=rng.randrange(3000, 90000),
    )


@dataclass(frozen=True)
class Fact:
    """A claim and the one line that supports it (with the line before it, when the
    support refers back to it by a pronoun), and near misses using the claim's words."""

    section: str
    claim: str
    support: str
    before: str | None = None  # the line the support's pronoun refers to
    misses: tuple[str, ...] = ()
    kind: str = "sentence"  # sentence | list | table


FactMaker = Callable[[random.Random, Town], Fact]


def _founding(rng: random.Random, t: Town) -> Fact:
    y, p = rng.choice(t.years), rng.choice(t.people)
    return Fact(
        "History",
        f"{t.name} was founded in {y} by {p}.",
        f"It was laid out as a market settlement under the charter of {p} in {y}.",
        before=f"The first houses on the site of {t.name} stood near a ford of the {t.river}.",
        misses=(
            f"The {t.district} was founded as an administrative unit in {rng.choice(t.years)}.",
            "The town's founding legend names a shepherd rather than any landowner.",
        ),
    )


def _population(rng: random.Random, t: Town) -> Fact:
    y, n = rng.choice(t.years[2:]), t.population
    return Fact(
        "Demographics",
        f"The population of {t.name} was {_about(n)} in {y}.",
        f"The census taken that year counted {n:,} inhabitants within the municipal limits.",
        before=f"A national census was held in {y}.",
        misses=(
            f"The population of the {t.district} reached {n * 7 + 311:,} in {y}.",
            f"The population of {t.name} declined slightly during the {t.years[0] // 10 * 10}s.",
        ),
    )


def _river(rng: random.Random, t: Town) -> Fact:
    return Fact(
        "Geography",
        f"{t.name} lies on the {t.river} river.",
        f"Its eastern quarter is crossed by the {t.river}, whose waters once drove twelve mills.",
        misses=(
            f"The {t.other_river} river forms the border of the {t.district} to the north.",
            f"{t.name} lies in a shallow valley between two ridges.",
        ),
    )


def _elevation(rng: random.Random, t: Town) -> Fact:
    m = rng.randrange(40, 1400)
    return Fact(
        "Geography",
        f"{t.name} is situated at an altitude of {m} m.",
        f"The market square sits {m} metres above sea level.",
        misses=(
            f"The highest point of the {t.district} is situated at {m + 611} m.",
            f"{t.name} is situated on the old road from {t.city} to the coast.",
        ),
    )


def _mayor(rng: random.Random, t: Town) -> Fact:
    y, p = rng.choice(t.years[3:]), rng.choice(t.people)
    return Fact(
        "Government",
        f"{p} became mayor of {t.name} in {y}.",
        f"Since {y} the council has been chaired by {p.split()[1]}, a former schoolteacher.",
        misses=(
            f"The mayor of {t.name} is elected by the council for a term of four years.",
            f"{rng.choice(t.people)} became mayor of {t.city} in {y}.",
        ),
    )


def _industry(rng: random.Random, t: Town) -> Fact:
    n = rng.randrange(120, 3000)
    what = rng.choice(["Textile mills", "Paper works", "Glass making", "Shipyards"])
    return Fact(
        "Economy",
        f"{_about(n).capitalize()} people work in {what.lower()} in {t.name}.",
        f"- {what}, with a workforce of {n:,}",
        misses=(
            f"Most people in {t.name} work in services and retail.",
            f"- Agriculture, with a workforce of {n + 480:,}",
        ),
        kind="list",
    )


def _twin(rng: random.Random, t: Town) -> Fact:
    twin = t.twins[0]
    return Fact(
        "Twin towns",
        f"{t.name} has a partnership with the town of {twin}.",
        f"- {twin}, {rng.choice(_COUNTRY)}",
        misses=(f"The partnership committee of {t.name} meets every spring.",),
        kind="list",
    )


def _census_row(rng: random.Random, t: Town) -> Fact:
    y = t.years[1]
    n = t.population - rng.randrange(500, 2500)
    return Fact(
        "Demographics",
        f"In {y}, {t.name} had {n:,} residents.",
        f"{y} | {n:,} | {rng.randrange(1, 9)}.{rng.randrange(10)}%",
        misses=(f"Residents of {t.name} had access to piped water by {y + 11}.",),
        kind="table",
    )


def _festival(rng: random.Random, t: Town) -> Fact:
    n, month = rng.randrange(2000, 60000), rng.choice(_MONTHS)
    return Fact(
        "Culture",
        f"The {t.festival} in {t.name} attracts {_about(n)} visitors every year.",
        f"Each {month} the celebration draws crowds of around {n:,}.",
        before=f"The best-known event is the {t.festival}, first held in {rng.choice(t.years)}.",
        misses=(
            f"Visitors to {t.name} can tour the old tannery every year from May to September.",
            f"The {t.festival} ends with a procession to the {t.building}.",
        ),
    )


def _building(rng: random.Random, t: Town) -> Fact:
    y, k = rng.choice(t.years), rng.randrange(3, 15)
    return Fact(
        "Landmarks",
        f"Construction of the {t.building} of {t.name} was finished in {y}.",
        f"It was completed in {y} after {k} years of work.",
        before=f"The {t.building} was designed by {rng.choice(t.people)}.",
        misses=(
            f"Construction of a new school in {t.name} began in {rng.choice(t.years)}.",
            f"The {t.building} was restored after a storm damaged its roof.",
        ),
    )


def _fire(rng: random.Random, t: Town) -> Fact:
    y = rng.choice(t.years)
    return Fact(
        "History",
        f"Much of the historic centre of {t.name} burned down in {y}.",
        f"A blaze in the summer of {y} destroyed most of the old quarter.",
        misses=(
            f"The historic centre of {t.name} was declared a protected area.",
            f"The centre of {t.name} was rebuilt in brick.",
        ),
    )


def _railway(rng: random.Random, t: Town) -> Fact:
    y = rng.choice(t.years)
    return Fact(
        "Transport",
        f"{t.name} got a train connection to {t.city} in {y}.",
        f"The line from {t.city} reached the town in {y}, and the station opened the same week.",
        misses=(
            f"A bus connection to {t.city} runs every hour.",
            f"{t.name} got a new road bridge in {rng.choice(t.years)}.",
        ),
    )


def _climate(rng: random.Random, t: Town) -> Fact:
    c = rng.randrange(14, 27)
    return Fact(
        "Climate",
        f"Average temperatures in {t.name} peak in July at {c} degrees.",
        f"July is the warmest month, with a mean of {c} °C.",
        misses=(
            f"Temperatures in {t.name} rarely fall below freezing in January.",
            f"The average annual rainfall in {t.name} is {rng.randrange(500, 1200)} mm.",
        ),
    )


def _area(rng: random.Random, t: Town) -> Fact:
    a = rng.randrange(12, 400)
    return Fact(
        "Geography",
        f"{t.name} has an area of {a} km2.",
        f"The municipality covers {a} square kilometres, a third of it forest.",
        misses=(f"The area around {t.name} is known for its orchards.",),
    )


def _school(rng: random.Random, t: Town) -> Fact:
    n, y = rng.randrange(800, 9000), rng.choice(t.years)
    return Fact(
        "Education",
        f"{_about(n).capitalize()} students attend the university in {t.name}.",
        f"Enrolment at the college, chartered in {y}, stands at {n:,}.",
        misses=(
            f"Students from {t.name} attend secondary school in {t.city}.",
            f"The university library of {t.name} holds rare maps.",
        ),
    )


def _share(rng: random.Random, t: Town) -> Fact:
    pct = rng.randrange(11, 48)
    return Fact(
        "Demographics",
        f"About {pct}% of the people of {t.name} are over sixty-five.",
        f"Pensioners make up {pct} per cent of the residents.",
        misses=(f"The people of {t.name} are mostly employed in the town itself.",),
    )


MAKERS: tuple[FactMaker, ...] = (
    _founding,
    _population,
    _river,
    _elevation,
    _mayor,
    _industry,
    _twin,
    _census_row,
    _festival,
    _building,
    _fire,
    _railway,
    _climate,
    _area,
    _school,
    _share,
)
SECTIONS = (
    "History",
    "Geography",
    "Climate",
    "Demographics",
    "Government",
    "Economy",
    "Transport",
    "Education",
    "Culture",
    "Landmarks",
    "Twin towns",
)

# Lines about the town that support no claim: a subject, a verb, an object and a tail drawn
# from pools wide enough that a phrase seldom repeats within an article (a real article's
# words are mostly rare in it), a few naming the town's river, region or a year of its own.
_FILL_SUBJECT = (
    "the town",
    "{name}",
    "the council",
    "the old quarter",
    "the parish",
    "local merchants",
    "the harbour",
    "the market",
    "the surrounding farms",
    "the {district}",
    "the guilds",
    "the regional government of {region}",
    "the residents",
    "the cathedral chapter",
    "a group of weavers",
    "the garrison",
    "the school board",
    "the fishing fleet",
    "the brewery",
    "a local newspaper",
    "the fire brigade",
    "the tram company",
    "the choir",
    "the hospital trust",
    "the chamber of commerce",
    "a charitable society",
    "the museum",
    "the sports club",
    "the railway workers",
    "the bishop",
)
_FILL_VERB = (
    "expanded",
    "was granted",
    "recorded",
    "built",
    "lost",
    "welcomed",
    "opened",
    "reorganised",
    "supported",
    "acquired",
    "commissioned",
    "petitioned for",
    "rebuilt",
    "sold",
    "financed",
    "abandoned",
    "inherited",
    "closed",
    "repaired",
    "celebrated",
    "published",
    "mortgaged",
    "leased",
    "enlarged",
    "protested against",
    "inspected",
)
_FILL_OBJECT = (
    "a new guildhall",
    "the right to hold a weekly market",
    "several hundred refugees",
    "a hospital with {k} beds",
    "a museum of local history",
    "a period of slow decline",
    "the first public library of {region}",
    "an agreement with {city} on shared water supply",
    "a stone embankment along the {river}",
    "a small airfield",
    "a tannery by the north gate",
    "a grammar school for girls",
    "the salt warehouse",
    "a chapel dedicated to Saint {saint}",
    "the orphanage on Mill Street",
    "a printing press",
    "the customs house",
    "an orchard of {k} apple trees",
    "a lending bank for farmers",
    "the lighthouse",
    "a cattle fair",
    "the wool exchange",
    "a covered market hall",
    "the municipal baths",
    "the coaching inn",
    "an observatory",
    "a botanical garden",
    "the poorhouse",
    "a telegraph office",
    "a dairy cooperative",
    "the widows' almshouse",
    "a rope walk",
    "a brickworks",
    "the courthouse",
    "a tram depot",
    "the power station",
    "a football ground",
    "a cinema with {k} seats",
    "the slaughterhouse",
    "a gasworks",
    "the town archive",
    "a monument to the fallen",
    "a sawmill",
    "a hat factory",
    "the city walls",
    "a ferry crossing",
    "a cemetery on the hill",
    "the tax office",
)
_FILL_TAIL = (
    " in {y}.",
    " in {y2}.",
    " during the {decade}s.",
    ".",
    ".",
    " after a long dispute.",
    ", according to the records of {region}.",
    " under {person}.",
    " with help from {city}.",
    " at considerable cost.",
    " despite opposition from the nobility.",
    " within a decade.",
    " for the first time.",
    ", though only briefly.",
    " against the advice of the engineers.",
)
_SAINTS = [
    "Anne",
    "Brigid",
    "Clement",
    "Dorothy",
    "Erik",
    "Florian",
    "Gertrude",
    "Hubert",
    "Lucy",
    "Olaf",
]


def _filler(rng: random.Random, t: Town) -> str:
    text = (
        rng.choice(_FILL_SUBJECT)
        + " "
        + rng.choice(_FILL_VERB)
        + " "
        + rng.choice(_FILL_OBJECT)
        + rng.choice(_FILL_TAIL)
    )
    y = rng.choice(t.years)  # one of the town's years, recurring across lines
    y2 = rng.randrange(1700, 2020)  # any year
    text = text.format(
        name=t.name,
        district=t.district,
        region=t.region,
        river=t.river,
        city=t.city,
        k=rng.randrange(20, 400),
        y=y,
        y2=y2,
        decade=y2 // 10 * 10,
        person=rng.choice(t.people),
        saint=rng.choice(_SAINTS),
    )
    return text[0].upper() + text[1:]


def _article(rng: random.Random, claims: int) -> tuple[Town, list[str], list[tuple[str, int]]]:
    """An article's lines and its claims, each with the index of its supporting line."""
    t = _town(rng)
    claimed = rng.sample(MAKERS, claims)
    others = [m for m in MAKERS if m not in claimed]
    facts = [(m(rng, t), True) for m in claimed]
    facts += [(m(rng, t), False) for m in rng.sample(others, rng.randrange(5, 9))]
    Line = tuple[str, Fact | None]  # a line, and the claimed fact it supports
    body: dict[str, list[list[Line]]] = {s: [] for s in SECTIONS}
    for fact, is_claimed in facts:
        block: list[Line] = [(fact.before, None)] if fact.before else []
        block.append((fact.support, fact if is_claimed else None))
        body[fact.section].append(block)
        for miss in fact.misses:  # near misses, elsewhere in the article
            where = fact.section if miss.startswith("- ") else rng.choice(SECTIONS[:-1])
            body[where].append([(miss, None)])
    lead = [
        f"{t.name} is a town in the {t.district} of {t.region}, {t.country}.",
        f"It lies on the {t.river} about {rng.randrange(12, 140)} km from {t.city}.",
    ]
    lines: list[str] = [t.name, *lead]
    out: list[tuple[str, int]] = []
    for section in SECTIONS:
        lines.append(section)  # a heading: no sentence end
        fills: list[Line] = [(_filler(rng, t), None) for _ in range(rng.randrange(10, 22))]
        if section == "Twin towns":
            fills = [(f"- {tw}, {rng.choice(_COUNTRY)}", None) for tw in t.twins[1:]]
            fills.insert(0, (f"{t.name} is twinned with the following towns:", None))
        elif section == "Economy":
            fills.append((f"The main employers of {t.name} are:", None))
        elif section == "Demographics":
            fills.append(("Year | Inhabitants | Change", None))
            for y in t.years[2:5]:
                fills.append(
                    (f"{y} | {t.population + rng.randrange(-4000, 4000):,} | -0.{y % 10}%", None)
                )
        # A fact's lines (a pronoun's antecedent and its support) stay together, at a
        # random point among the fillers; a list item or a table row after its list's or
        # table's opening, at the section's end.
        merged: list[list[Line]] = [[f] for f in fills]
        for block in body[section]:
            if block[-1][0].startswith("- ") or " | " in block[-1][0]:
                merged.append(block)
            else:
                merged.insert(rng.randrange(1, len(merged) + 1), block)
        for block in merged:
            for line, fact in block:
                if fact is not None:
                    out.append((fact.claim, len(lines)))
                lines.append(line)
    order = {c: i for i, c in enumerate(f.claim for f, is_claimed in facts if is_claimed)}
    out.sort(key=lambda c: order[c[0]])
    return t, lines, out


def build(out_dir: Path) -> tuple[int, int]:
    rng = random.Random(SEED)
    records: list[str] = []
    claims = 0
    for n, kind in enumerate(["single"] * SINGLES + ["quad"] * QUADS, 1):
        t, lines, found = _article(rng, 1 if kind == "single" else 4)
        rec = {
            "id": f"a{n}",
            "kind": kind,
            "title": t.name,
            "lines": lines,
            "claims": [
                {"id": f"a{n}c{i}", "claim": claim, "evidence": line}
                for i, (claim, line) in enumerate(found, 1)
            ],
        }
        claims += len(found)
        records.append(json.dumps(rec, ensure_ascii=False, sort_keys=True))
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "articles.jsonl").write_text("\n".join(records) + "\n", encoding="utf-8")
    return len(records), claims


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    articles, claims = build(args.out)
    print(f"{articles} articles, {claims} claims written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
