r"""HybridQA worlds (lecture 7 §2.3 and §6): tables whose linked cells carry passages.

Two kinds of tables, one shape (:class:`HybridTable`): a DuckDB table whose every linked
column ``X`` is followed by an ``X_Info`` column holding the linked passage(s), and the
questions asked over it.

* :func:`build` — **generated** (§6.5): 50 flag-bearer tables of fictional countries at real
  Summer Olympics (real years, host cities and host countries; the athletes are invented).
  Six questions per table, one per HybridQA type I–VI of §2.3, each with the single gold
  answer an annotator wrote (4% of them wrong; for questions with several right answers, one
  of them).  The **hidden truth** — every correct answer in the forms a person accepts, the
  passage columns the question needs, the query an expert would write — is returned apart from
  the world (``build()`` returns :class:`Built`\ ``(world, truth)``): engines are handed the world,
  only evaluators the :class:`HiddenTruth`.
* :func:`load_real` — **real**: the HybridQA dev tables of ``../shared/data/hybridqa`` (header,
  rows with cell links, passages) and their questions with gold answers.  No hidden truth.

Everything generated is drawn from ``random.Random(seed)``: the same seed, the same world.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import duckdb

from worlds.data import locate, missing_message, search_roots

DEFAULT_SEED = 7
N_TABLES = 50
INFO_SUFFIX = "_Info"
TYPES = ("I", "II", "III", "IV", "V", "VI")

# What each HybridQA type means (§2.3; T = table, P = passage).
TYPE_TITLES: Mapping[str, str] = {
    "I": "T→P: a table cell locates the row, the answer is in its passage",
    "II": "P→T: a passage locates the row, the answer is a table cell",
    "III": "P→T→P: a passage locates the row, the answer is in another passage",
    "IV": "T&P→T: a table condition and a passage condition together",
    "V": "comparison of two rows by what their passages say",
    "VI": "superlative over every row by what the passages say",
}


class HybridDataError(ValueError):
    """Real HybridQA data that cannot be loaded; the message names the file and the problem.  (The engines
    re-raise it as ``engines.hybridqa.session.HybridDataError``, which is also an ``EngineError``.)"""


class UnknownTable(LookupError):
    """A table name or id that is not in the world; the message names it."""


# --- the shape shared by generated and real tables ------------------------------------------------


@dataclass(frozen=True)
class HybridQuestion:
    """One question as a dataset shows it: no hidden truth here."""

    question_id: str
    table: str  # the DuckDB table it is asked over
    question: str
    gold: str  # the single gold answer the annotator wrote
    qtype: str | None = None  # "I".."VI" for generated questions; None for real ones


@dataclass(frozen=True)
class HybridTable:
    """A table with its linked passages stored in ``_Info`` columns."""

    name: str  # the DuckDB table name (an identifier)
    table_id: str  # the dataset's id (a HybridQA file name, or a generated id)
    title: str
    columns: tuple[str, ...]  # every column, ``_Info`` ones right after the column they belong to
    rows: tuple[tuple[str | None, ...], ...]
    questions: tuple[HybridQuestion, ...] = ()
    source: str = "generated"  # "generated" | "real"
    url: str = ""

    @property
    def info_columns(self) -> tuple[str, ...]:
        return tuple(c for c in self.columns if c.endswith(INFO_SUFFIX))

    @property
    def cell_columns(self) -> tuple[str, ...]:
        return tuple(c for c in self.columns if not c.endswith(INFO_SUFFIX))

    def records(self) -> list[dict[str, str | None]]:
        return [dict(zip(self.columns, row)) for row in self.rows]

    def schema(self) -> str:
        """The table's signature as a parser is shown it (no rows, no values)."""
        cols = ",\n".join(f"    {quote_ident(c)} TEXT" for c in self.columns)
        return f"CREATE TABLE {quote_ident(self.name)} (\n{cols}\n);"

    def load(self, con: duckdb.DuckDBPyConnection) -> None:
        """Create and fill this table on a DuckDB connection (rows keep their order: rowid = index)."""
        ddl = ", ".join(f"{quote_ident(c)} VARCHAR" for c in self.columns)
        con.execute(f"CREATE TABLE {quote_ident(self.name)} ({ddl})")
        if self.rows:
            keys = [f"c{i}" for i in range(len(self.columns))]
            records = [dict(zip(keys, row)) for row in self.rows]
            select = ", ".join(f"r.{k} AS {quote_ident(c)}" for k, c in zip(keys, self.columns))
            con.execute(
                f"INSERT INTO {quote_ident(self.name)} SELECT {select} FROM (SELECT UNNEST($rows) AS r)",
                {"rows": records},
            )

    def to_summary(self) -> dict[str, Any]:
        return {
            "table_id": self.table_id,
            "columns": list(self.columns),
            "rows": len(self.rows),
            "questions": len(self.questions),
        }


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True)
class HybridWorld:
    """Several tables in one database (what the SUQL tab and the pipeline load)."""

    name: str
    tables: tuple[HybridTable, ...]

    def table(self, name_or_id: str) -> HybridTable:
        for t in self.tables:
            if name_or_id in (t.name, t.table_id):
                return t
        raise UnknownTable(f"No table {name_or_id!r} in the {self.name} world.")

    @property
    def questions(self) -> tuple[HybridQuestion, ...]:
        return tuple(q for t in self.tables for q in t.questions)

    def load(self, con: duckdb.DuckDBPyConnection) -> None:
        for t in self.tables:
            t.load(con)

    def schema(self) -> str:
        return "\n\n".join(t.schema() for t in self.tables)


# --- the hidden truth (evaluators only) ---------------------------------------------------------


@dataclass(frozen=True)
class CorrectAnswer:
    """One right answer and every form of it a person would accept (normalised by the judge)."""

    kind: str  # "date" | "place" | "games" | "person" | "event"
    forms: tuple[str, ...]


@dataclass(frozen=True)
class QuestionTruth:
    answers: tuple[CorrectAnswer, ...]  # every correct answer (several for some questions)
    columns: tuple[str, ...]  # the passage columns the question needs
    suql: str  # the query an expert would write
    gold_wrong: bool  # the annotator's gold is not a correct answer


@dataclass(frozen=True)
class HiddenTruth:
    questions: Mapping[str, QuestionTruth] = field(repr=False)

    def of(self, question_id: str) -> QuestionTruth:
        return self.questions[question_id]


@dataclass(frozen=True)
class GeneratedWorld(HybridWorld):
    """The generated tables (visible data only: the hidden truth is returned apart, see :class:`Built`)."""

    seed: int = DEFAULT_SEED


class Built(NamedTuple):
    """What :func:`build` returns: the visible world and, apart from it, the hidden truth."""

    world: GeneratedWorld
    truth: HiddenTruth


# --- generation: real Summer Olympics --------------------------------------------------------------

# (Roman numeral of the Olympiad, year, host city, host country) of every Summer Games held.
SUMMER_GAMES: tuple[tuple[str, int, str, str], ...] = (
    ("I", 1896, "Athens", "Greece"),
    ("II", 1900, "Paris", "France"),
    ("III", 1904, "St. Louis", "United States"),
    ("IV", 1908, "London", "United Kingdom"),
    ("V", 1912, "Stockholm", "Sweden"),
    ("VII", 1920, "Antwerp", "Belgium"),
    ("VIII", 1924, "Paris", "France"),
    ("IX", 1928, "Amsterdam", "Netherlands"),
    ("X", 1932, "Los Angeles", "United States"),
    ("XI", 1936, "Berlin", "Germany"),
    ("XIV", 1948, "London", "United Kingdom"),
    ("XV", 1952, "Helsinki", "Finland"),
    ("XVI", 1956, "Melbourne", "Australia"),
    ("XVII", 1960, "Rome", "Italy"),
    ("XVIII", 1964, "Tokyo", "Japan"),
    ("XIX", 1968, "Mexico City", "Mexico"),
    ("XX", 1972, "Munich", "West Germany"),
    ("XXI", 1976, "Montreal", "Canada"),
    ("XXII", 1980, "Moscow", "Soviet Union"),
    ("XXIII", 1984, "Los Angeles", "United States"),
    ("XXIV", 1988, "Seoul", "South Korea"),
    ("XXV", 1992, "Barcelona", "Spain"),
    ("XXVI", 1996, "Atlanta", "United States"),
    ("XXVII", 2000, "Sydney", "Australia"),
    ("XXVIII", 2004, "Athens", "Greece"),
    ("XXIX", 2008, "Beijing", "China"),
    ("XXX", 2012, "London", "United Kingdom"),
    ("XXXI", 2016, "Rio de Janeiro", "Brazil"),
    ("XXXII", 2020, "Tokyo", "Japan"),
    ("XXXIII", 2024, "Paris", "France"),
)

COUNTRIES: tuple[str, ...] = (
    "Veloria",
    "Ostravia",
    "Calmera",
    "Durnholm",
    "Esteria",
    "Falkenmark",
    "Galdoria",
    "Hestria",
    "Istrava",
    "Jorvania",
    "Kaldera",
    "Lunaria",
    "Marovia",
    "Norvalia",
    "Orlenda",
    "Pellaria",
    "Quirinia",
    "Rostavia",
    "Saldana",
    "Tervonia",
    "Ulmaria",
    "Varenland",
    "Westmarch",
    "Xandria",
    "Yselda",
    "Zaravia",
    "Aldmora",
    "Brevania",
    "Corvenia",
    "Delmara",
    "Elvaria",
    "Fennoria",
    "Glenmark",
    "Halvoria",
    "Ithaca Minor",
    "Jessonia",
    "Korvath",
    "Lorwen",
    "Mirenza",
    "Nordhal",
    "Ovaria",
    "Pravonia",
    "Qestra",
    "Rivaldia",
    "Solmara",
    "Tamberia",
    "Umbria Nova",
    "Valtania",
    "Wendmark",
    "Zelmora",
)
assert len(COUNTRIES) == N_TABLES and len(set(COUNTRIES)) == N_TABLES

_GIVEN = {
    "Female": (
        "Lina",
        "Asha",
        "Dana",
        "Mira",
        "Elsa",
        "Nora",
        "Ivana",
        "Tessa",
        "Kaja",
        "Runa",
        "Sela",
        "Vera",
        "Ilka",
        "Maren",
        "Oona",
        "Petra",
        "Zora",
        "Ada",
        "Greta",
        "Hanne",
        "Liv",
        "Selma",
        "Talia",
        "Yara",
    ),
    "Male": (
        "Tomas",
        "Arvid",
        "Emil",
        "Jonas",
        "Karel",
        "Luka",
        "Milan",
        "Oskar",
        "Pavel",
        "Rasmus",
        "Stefan",
        "Viktor",
        "Anton",
        "Bruno",
        "Dorian",
        "Filip",
        "Goran",
        "Henrik",
        "Ivo",
        "Jakob",
        "Lars",
        "Nils",
        "Teo",
        "Aurel",
    ),
}
_SURNAMES = (
    "Varga",
    "Kell",
    "Arden",
    "Novak",
    "Halden",
    "Brask",
    "Corvin",
    "Dalmar",
    "Esker",
    "Frell",
    "Gorski",
    "Holm",
    "Istvan",
    "Jarek",
    "Kovan",
    "Lindqvist",
    "Morava",
    "Nyberg",
    "Orsolya",
    "Petrov",
    "Quist",
    "Rudan",
    "Sarkis",
    "Tolvan",
    "Ulric",
    "Vesna",
    "Wendt",
    "Yarrow",
    "Zelen",
    "Amsel",
    "Bergen",
    "Castel",
    "Doran",
    "Elling",
    "Farkas",
    "Grell",
    "Harker",
    "Ivers",
    "Jessen",
    "Krall",
    "Lorne",
    "Marek",
    "Nolde",
    "Ostrom",
    "Palko",
    "Reske",
    "Solberg",
    "Tarnow",
)
_HOMETOWNS = (
    "Kestrel Bay",
    "Ostmoor",
    "Varna Falls",
    "Greywick",
    "Solvang Hollow",
    "Brindle",
    "Lakemere",
    "Harrowgate",
    "Miren",
    "Tarsk",
    "Eldham",
    "Corrin",
)


@dataclass(frozen=True)
class _Sport:
    sport: str  # what a question names ("judo", "swimming")
    noun: str  # the athlete ("judoka", "swimmer")
    events: tuple[str, ...]  # event names without the "men's"/"women's" prefix


SPORTS: tuple[_Sport, ...] = (
    _Sport("athletics", "hurdler", ("400 m hurdles", "110 m hurdles")),
    _Sport("athletics", "sprinter", ("100 m", "200 m", "400 m")),
    _Sport("athletics", "marathon runner", ("marathon",)),
    _Sport("athletics", "high jumper", ("high jump",)),
    _Sport("swimming", "swimmer", ("200 m freestyle", "100 m backstroke", "100 m butterfly")),
    _Sport("judo", "judoka", ("81 kg", "73 kg", "57 kg", "63 kg")),
    _Sport("rowing", "rower", ("single sculls",)),
    _Sport("fencing", "fencer", ("individual sabre", "individual épée")),
    _Sport("wrestling", "wrestler", ("freestyle 74 kg", "Greco-Roman 87 kg")),
    _Sport("cycling", "cyclist", ("road race", "individual time trial")),
    _Sport("weightlifting", "weightlifter", ("+109 kg", "73 kg")),
    _Sport("sailing", "sailor", ("Laser", "Finn")),
    _Sport("boxing", "boxer", ("middleweight", "flyweight")),
    _Sport("shooting", "sport shooter", ("10 m air rifle", "trap")),
)

_GAMES_PASSAGES = (
    "The {year} Summer Olympics, officially the Games of the {roman} Olympiad, were held in {city}, {country}. "
    "{team} sent {n} athletes to the Games.",
    "The Games of the {roman} Olympiad took place in {city}, {country}, in {year}. Athletes from {m} nations "
    "took part, {team}'s delegation among them.",
    "{city}, {country} hosted the {year} Summer Olympics, the Games of the {roman} Olympiad. {team} won {k} "
    "medals there with a team of {n}.",
)
_BEARER_PASSAGES = (
    "{name} (born on {birth}) is a {demonym} {noun}. {He} competed in the {event} event at the {year} Summer "
    "Olympics. {He} won {his} first national title on {other}.",
    "{name} (born {birth}) is a {demonym} {noun} who took part in the {event} event at the {year} Summer "
    "Olympics. At the national championships held on {other}, {he} set a national record.",
    "{name} is a {demonym} {noun}, born on {birth} in {town}. {He} competed in the {event} event at the {year} "
    "Summer Olympics and carried the flag at the opening ceremony. {He} retired on {other}.",
)

MONTHS = (
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
)


@dataclass(frozen=True)
class _Bearer:
    roman: str
    year: int
    city: str
    country: str
    name: str
    gender: str
    sport: _Sport
    event: str  # with the gender prefix: "women's 400 m hurdles"
    birth: str  # YYYY-MM-DD
    other_date: str  # another date in the passage (a reader can take the wrong one)


def demonym(country: str) -> str:
    base = country.split()[0]
    if base.endswith("ia") or base.endswith("a"):
        return base + "n"
    return base + "ian"


def _date(rng: random.Random, year_lo: int, year_hi: int) -> str:
    y = rng.randint(year_lo, year_hi)
    m = rng.randint(1, 12)
    d = rng.randint(1, 28)
    return f"{y:04d}-{m:02d}-{d:02d}"


def _draw_bearers(rng: random.Random, country: str, n: int) -> list[_Bearer]:
    start = rng.randint(0, len(SUMMER_GAMES) - n)
    games = SUMMER_GAMES[start : start + n]
    names: set[str] = set()
    births: set[str] = set()
    out: list[_Bearer] = []
    sports_used: list[tuple[_Sport, str]] = []
    for roman, year, city, host in games:
        gender = rng.choice(("Male", "Female"))
        while True:
            name = f"{rng.choice(_GIVEN[gender])} {rng.choice(_SURNAMES)}"
            if name not in names:
                names.add(name)
                break
        # A shared sport now and then: questions of type IV then have several right answers.
        if sports_used and rng.random() < 0.15:
            sport, base_event = rng.choice(sorted(set(sports_used), key=lambda p: (p[0].noun, p[1])))
        else:
            sport = rng.choice(SPORTS)
            base_event = rng.choice(sport.events)
        sports_used.append((sport, base_event))
        prefix = "women's" if gender == "Female" else "men's"
        event = f"{prefix} {base_event}"
        while True:
            birth = _date(rng, year - 34, year - 19)
            if birth not in births:
                births.add(birth)
                break
        other = _date(rng, year - 6, year - 1)
        out.append(_Bearer(roman, year, city, host, name, gender, sport, event, birth, other))
    return out


def _games_passage(rng: random.Random, b: _Bearer, team: str) -> str:
    template = rng.choice(_GAMES_PASSAGES)
    return template.format(
        year=b.year,
        roman=b.roman,
        city=b.city,
        country=b.country,
        team=team,
        n=rng.randint(4, 60),
        m=rng.randint(12, 206),
        k=rng.randint(0, 9),
    )


def _bearer_passage(rng: random.Random, b: _Bearer, country: str) -> str:
    template = rng.choice(_BEARER_PASSAGES)
    he, his = ("She", "her") if b.gender == "Female" else ("He", "his")
    return template.format(
        name=b.name,
        birth=b.birth,
        demonym=demonym(country),
        noun=b.sport.noun,
        He=he,
        he=he.lower(),
        his=his,
        event=b.event,
        year=b.year,
        other=b.other_date,
        town=rng.choice(_HOMETOWNS),
    )


GENERATED_COLUMNS = ("Name", "Event year", "Event year_Info", "Flag Bearer", "Flag Bearer_Info", "Gender")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def build(seed: int = DEFAULT_SEED, n_tables: int = N_TABLES) -> Built:
    """Generate the world of §6.5 (50 tables of 8–16 rows, six questions each) and its hidden truth.
    Deterministic in ``seed``.  Hand ``.world`` to engines; only evaluators take ``.truth``."""
    rng = random.Random(seed)
    tables: list[HybridTable] = []
    truths: dict[str, QuestionTruth] = {}
    for t in range(n_tables):
        country = COUNTRIES[t % len(COUNTRIES)] if t < len(COUNTRIES) else f"{COUNTRIES[t % len(COUNTRIES)]} {t}"
        bearers = _draw_bearers(rng, country, rng.randint(8, 16))
        name = f"{_slug(country)}_flag_bearers"
        rows = tuple(
            (b.roman, str(b.year), _games_passage(rng, b, country), b.name, _bearer_passage(rng, b, country), b.gender)
            for b in bearers
        )
        questions: list[HybridQuestion] = []
        for qtype in TYPES:
            qid = f"{name}-{qtype}"
            spec = _QUESTION_MAKERS[qtype](rng, name, bearers)
            gold, wrong = _gold(rng, spec, bearers)
            questions.append(HybridQuestion(qid, name, spec.question, gold, qtype))
            truths[qid] = QuestionTruth(spec.answers, spec.columns, spec.suql, wrong)
        tables.append(
            HybridTable(
                name,
                name,
                f"{country} at the Summer Olympics: flag bearers",
                GENERATED_COLUMNS,
                rows,
                tuple(questions),
                "generated",
            )
        )
    return Built(GeneratedWorld("hybridqa", tuple(tables), seed=seed), HiddenTruth(truths))


# --- questions -----------------------------------------------------------------------------------

GAMES_INFO, BEARER_INFO = "Event year_Info", "Flag Bearer_Info"
GOLD_WRONG_RATE = 0.04


@dataclass(frozen=True)
class _Spec:
    question: str
    answers: tuple[CorrectAnswer, ...]
    gold_kind: str  # which value of an answer the annotator writes
    gold_values: tuple[str, ...]  # the annotator's form of each correct answer (same order as answers)
    wrong_pool: tuple[str, ...]  # values of the same kind that are wrong (for the 4% wrong golds)
    columns: tuple[str, ...]
    suql: str


def _q(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def long_date(iso: str) -> str:
    y, m, d = (int(p) for p in iso.split("-"))
    return f"{MONTHS[m - 1]} {d}, {y}"


def _date_answer(iso: str) -> CorrectAnswer:
    y, m, d = (int(p) for p in iso.split("-"))
    return CorrectAnswer("date", (iso, long_date(iso), f"{d} {MONTHS[m - 1]} {y}"))


def _place_answer(b: _Bearer) -> CorrectAnswer:
    return CorrectAnswer("place", (b.city, f"{b.city}, {b.country}"))


def _games_answer(b: _Bearer) -> CorrectAnswer:
    return CorrectAnswer(
        "games",
        (
            b.roman,
            str(b.year),
            f"{b.year} Summer Olympics",
            f"{b.year} Olympics",
            f"{b.roman} Olympics",
            f"Games of the {b.roman} Olympiad",
            f"{b.roman} Olympiad",
        ),
    )


def _person_answer(b: _Bearer) -> CorrectAnswer:
    return CorrectAnswer("person", (b.name,))


def _event_answer(b: _Bearer) -> CorrectAnswer:
    bare = b.event.split(" ", 1)[1]
    return CorrectAnswer("event", (b.event, f"{b.event} event", bare, f"{bare} event"))


def _games_ref(rng: random.Random, b: _Bearer) -> tuple[str, str]:
    """How a question names a Games, and the structured condition that finds its row."""
    if rng.random() < 0.5:
        return f"the {b.year} Olympics", f'"Event year" = {_q(str(b.year))}'
    return f"the {b.roman} Olympics", f'"Name" = {_q(b.roman)}'


def _attribute(
    rng: random.Random, b: _Bearer, bearers: Sequence[_Bearer]
) -> tuple[str, str, CorrectAnswer, str, tuple[str, ...], str]:
    """A passage attribute of a row: (kind, phrase, answer, gold form, wrong pool, answer() call)."""
    kind = rng.choice(("birth", "birth", "event"))
    if kind == "birth":
        return (
            "date",
            "born",
            _date_answer(b.birth),
            b.birth,
            tuple(x.birth for x in bearers if x is not b),
            f"answer(\"{BEARER_INFO}\", 'when was this person born?')",
        )
    return (
        "event",
        "event",
        _event_answer(b),
        b.event,
        tuple(x.event for x in bearers if x.event != b.event),
        f"answer(\"{BEARER_INFO}\", 'which event did this person compete in?')",
    )


def _type_i(rng: random.Random, table: str, bearers: Sequence[_Bearer]) -> _Spec:
    b = rng.choice(bearers)
    r = rng.random()
    if r < 0.3:  # the host city, located by the flag bearer's name
        question = f"Where were the Games held at which {b.name} carried the flag?"
        suql = f'SELECT answer("{GAMES_INFO}", \'where were the games held?\') FROM {table} WHERE "Flag Bearer" = {_q(b.name)}'
        return _Spec(
            question,
            (_place_answer(b),),
            "place",
            (b.city,),
            tuple(sorted({x.city for x in bearers if x.city != b.city})),
            (GAMES_INFO,),
            suql,
        )
    ref, cond = _games_ref(rng, b)
    kind, _, answer, gold, pool, call = _attribute(rng, b, bearers)
    question = (
        f"When was the flag bearer of {ref} born?"
        if kind == "date"
        else f"Which event did the flag bearer of {ref} compete in?"
    )
    return _Spec(question, (answer,), kind, (gold,), pool, (BEARER_INFO,), f"SELECT {call} FROM {table} WHERE {cond}")


def _by_city(bearers: Sequence[_Bearer], city: str) -> list[_Bearer]:
    return [x for x in bearers if x.city == city]


def _type_ii(rng: random.Random, table: str, bearers: Sequence[_Bearer]) -> _Spec:
    city = rng.choice(bearers).city
    rows = _by_city(bearers, city)
    cond = f"answer(\"{GAMES_INFO}\", {_q(f'were the games held in {city}?')}) = 'Yes'"
    r = rng.random()
    if r < 0.4:
        question = f"Who carried the flag at the Olympics held in {city}?"
        return _Spec(
            question,
            tuple(_person_answer(x) for x in rows),
            "person",
            tuple(x.name for x in rows),
            tuple(x.name for x in bearers if x.city != city),
            (GAMES_INFO,),
            f'SELECT "Flag Bearer" FROM {table} WHERE {cond}',
        )
    if r < 0.7:
        question = f"In which year were the Olympics held in {city}?"
        gold = tuple(str(x.year) for x in rows)
        column = '"Event year"'
    else:
        question = f"Which Olympiad was held in {city}?"
        gold = tuple(x.roman for x in rows)
        column = '"Name"'
    wrong = tuple(str(x.year) if column == '"Event year"' else x.roman for x in bearers if x.city != city)
    return _Spec(
        question,
        tuple(_games_answer(x) for x in rows),
        "games",
        gold,
        wrong,
        (GAMES_INFO,),
        f"SELECT {column} FROM {table} WHERE {cond}",
    )


def _type_iii(rng: random.Random, table: str, bearers: Sequence[_Bearer]) -> _Spec:
    if rng.random() < 0.3:  # from the bearer's passage to the Games' passage
        b = rng.choice(bearers)
        question = f"In which city were the Games held whose flag bearer was born on {b.birth}?"
        cond = f"answer(\"{BEARER_INFO}\", {_q(f'was this person born on {b.birth}?')}) = 'Yes'"
        return _Spec(
            question,
            (_place_answer(b),),
            "place",
            (b.city,),
            tuple(sorted({x.city for x in bearers if x.city != b.city})),
            (BEARER_INFO, GAMES_INFO),
            f"SELECT answer(\"{GAMES_INFO}\", 'where were the games held?') FROM {table} WHERE {cond}",
        )
    city = rng.choice(bearers).city
    rows = _by_city(bearers, city)
    kind, _, _, _, _, call = _attribute(rng, rows[0], bearers)
    cond = f"answer(\"{GAMES_INFO}\", {_q(f'were the games held in {city}?')}) = 'Yes'"
    if kind == "date":
        question = f"When was the flag bearer of the Olympics held in {city} born?"
        answers = tuple(_date_answer(x.birth) for x in rows)
        gold = tuple(x.birth for x in rows)
        pool = tuple(x.birth for x in bearers if x.city != city)
    else:
        question = f"Which event did the flag bearer of the Olympics held in {city} compete in?"
        answers = tuple(_event_answer(x) for x in rows)
        gold = tuple(x.event for x in rows)
        pool = tuple(x.event for x in bearers if x.event not in gold)
    return _Spec(
        question, answers, kind, gold, pool, (GAMES_INFO, BEARER_INFO), f"SELECT {call} FROM {table} WHERE {cond}"
    )


def _type_iv(rng: random.Random, table: str, bearers: Sequence[_Bearer]) -> _Spec:
    # Prefer a (gender, sport) with several bearers: the question then has several right answers.
    groups: dict[tuple[str, str], list[_Bearer]] = {}
    for x in bearers:
        groups.setdefault((x.gender, x.sport.sport), []).append(x)
    shared = [k for k, v in groups.items() if len(v) > 1]
    b = rng.choice(groups[rng.choice(shared)]) if shared and rng.random() < 0.6 else rng.choice(bearers)
    gender_word = b.gender.lower()
    if rng.random() < 0.5:
        thing, test = b.sport.sport, lambda x: x.sport.sport == b.sport.sport
        question = f"Which {gender_word} flag bearer competed in {thing}?"
    else:
        thing, test = f"the {b.event} event", lambda x: x.event == b.event
        question = f"Which {gender_word} flag bearer competed in {thing}?"
    rows = [x for x in bearers if x.gender == b.gender and test(x)]
    cond = (
        f'"Gender" = {_q(b.gender)} AND answer("{BEARER_INFO}", {_q(f"did this person compete in {thing}?")}) = \'Yes\''
    )
    return _Spec(
        question,
        tuple(_person_answer(x) for x in rows),
        "person",
        tuple(x.name for x in rows),
        tuple(x.name for x in bearers if x not in rows),
        (BEARER_INFO,),
        f'SELECT "Flag Bearer" FROM {table} WHERE {cond}',
    )


def _type_v(rng: random.Random, table: str, bearers: Sequence[_Bearer]) -> _Spec:
    a, b = rng.sample(list(bearers), 2)
    older = rng.random() < 0.5
    use_year = rng.random() < 0.5
    ref = (lambda x: f"the {x.year} Olympics") if use_year else (lambda x: f"the {x.roman} Olympics")
    column = '"Event year"' if use_year else '"Name"'
    values = (str(a.year), str(b.year)) if use_year else (a.roman, b.roman)
    word = "older" if older else "younger"
    question = f"Who is {word}, the flag bearer of {ref(a)} or the flag bearer of {ref(b)}?"
    winner = min((a, b), key=lambda x: x.birth) if older else max((a, b), key=lambda x: x.birth)
    loser = b if winner is a else a
    direction = "ASC" if older else "DESC"
    suql = (
        f'SELECT "Flag Bearer" FROM {table} WHERE {column} IN ({_q(values[0])}, {_q(values[1])}) '
        f"ORDER BY answer(\"{BEARER_INFO}\", 'when was this person born?')::date {direction} LIMIT 1"
    )
    return _Spec(question, (_person_answer(winner),), "person", (winner.name,), (loser.name,), (BEARER_INFO,), suql)


def _type_vi(rng: random.Random, table: str, bearers: Sequence[_Bearer]) -> _Spec:
    youngest = rng.random() < 0.5
    word = "youngest" if youngest else "oldest"
    pool = list(bearers)
    cond = ""
    if rng.random() < 0.35:
        gender = rng.choice(sorted({x.gender for x in bearers}))
        pool = [x for x in bearers if x.gender == gender]
        question = f"Who is the {word} {gender.lower()} flag bearer?"
        cond = f' WHERE "Gender" = {_q(gender)}'
    else:
        question = f"Who is the {word} flag bearer?"
    winner = (max if youngest else min)(pool, key=lambda x: x.birth)
    suql = (
        f'SELECT "Flag Bearer" FROM {table}{cond} ORDER BY answer("{BEARER_INFO}", \'when was this person born?\')::date '
        f"{'DESC' if youngest else 'ASC'} LIMIT 1"
    )
    return _Spec(
        question,
        (_person_answer(winner),),
        "person",
        (winner.name,),
        tuple(x.name for x in bearers if x is not winner),
        (BEARER_INFO,),
        suql,
    )


_QUESTION_MAKERS = {"I": _type_i, "II": _type_ii, "III": _type_iii, "IV": _type_iv, "V": _type_v, "VI": _type_vi}


def _gold(rng: random.Random, spec: _Spec, bearers: Sequence[_Bearer]) -> tuple[str, bool]:
    """The annotator's single gold: one of the right answers, or (4%) a wrong value of the same kind."""
    if spec.wrong_pool and rng.random() < GOLD_WRONG_RATE:
        return rng.choice(sorted(set(spec.wrong_pool))), True
    return rng.choice(spec.gold_values), False


# --- real HybridQA tables (../shared/data/hybridqa) ----------------------------------------------------


def real_data_dir(data_dir: Path | None = None) -> Path | None:
    """``hybridqa/`` under ``data_dir`` (default: the user data folder, then ``../shared/data`` beside the
    checkout; see :mod:`worlds.data`), if present.  The engines pass the ``data_dir`` setting."""
    path = locate(search_roots(Path(data_dir) if data_dir is not None else None), "hybridqa")
    return path if path is not None and path.is_dir() else None


def _identifier(table_id: str, taken: set[str]) -> str:
    base = _slug(table_id) or "table"
    if base[0].isdigit():
        base = "t_" + base
    base = base[:60]
    name, k = base, 2
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return name


def _unique_columns(names: Iterable[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for raw in names:
        n = " ".join(str(raw).split()) or "column"
        c = seen.get(n, 0)
        seen[n] = c + 1
        out.append(n if c == 0 else f"{n} ({c + 1})")
    return out


def real_table(data: Mapping[str, Any], *, name: str, file: str = "") -> HybridTable:
    """One HybridQA table (its JSON object) as a :class:`HybridTable`.

    Every column with at least one linked cell gains an ``_Info`` column right after it: the
    passages of the cell's links, in link order, separated by a blank line (NULL when the
    cell links nowhere).
    """
    where = file or str(data.get("table_id", "?"))
    try:
        header = [h["name"] if isinstance(h, Mapping) else str(h) for h in data["header"]]
        raw_rows = data["rows"]
        passages = data.get("passages") or {}
        table_id = str(data.get("table_id") or name)
    except (KeyError, TypeError) as e:
        raise HybridDataError(f"{where}: not a HybridQA table (missing {e}).") from e
    if not isinstance(raw_rows, list) or not header:
        raise HybridDataError(f"{where}: a HybridQA table needs a header and a list of rows.")
    width = len(header)
    cells: list[list[tuple[str, list[str]]]] = []
    for i, row in enumerate(raw_rows):
        if not isinstance(row, list) or len(row) != width:
            raise HybridDataError(
                f"{where}: row {i} has {len(row) if isinstance(row, list) else 'no'} cells, the header {width}."
            )
        parsed = []
        for cell in row:
            if isinstance(cell, Mapping):
                parsed.append((str(cell.get("text", "")), [str(link) for link in cell.get("links") or []]))
            else:  # the older [text, links] pair form
                text, links = (cell[0], cell[1]) if isinstance(cell, list) and len(cell) == 2 else (cell, [])
                parsed.append((str(text), [str(link) for link in links or []]))
        cells.append(parsed)
    base_names = _unique_columns(header)
    linked = [any(r[j][1] for r in cells) for j in range(width)]
    columns: list[str] = []
    for j, n in enumerate(base_names):
        columns.append(n)
        if linked[j]:
            columns.append(n + INFO_SUFFIX)
    columns = _unique_columns(columns)
    rows = []
    for r in cells:
        out: list[str | None] = []
        for j, (text, links) in enumerate(r):
            out.append(text)
            if linked[j]:
                found = [str(passages[link]) for link in links if link in passages and passages[link]]
                out.append("\n\n".join(found) if found else None)
        rows.append(tuple(out))
    questions = tuple(
        HybridQuestion(
            str(q.get("question_id", f"{table_id}-{k}")),
            name,
            str(q.get("question", "")),
            str(q.get("answer-text", "")),
            None,
        )
        for k, q in enumerate(data.get("questions") or [])
        if isinstance(q, Mapping) and q.get("question")
    )
    title = " — ".join(p for p in (data.get("title"), data.get("section_title")) if p) or table_id
    return HybridTable(
        name, table_id, str(title), tuple(columns), tuple(rows), questions, "real", str(data.get("url") or "")
    )


def load_real(directory: Path | str | None = None) -> HybridWorld:
    """Every HybridQA table of ``directory`` (default: ``hybridqa/`` of ``../shared/data`` beside the checkout).

    Reads ``manifest.json`` when present (its table order), otherwise every ``*.json`` file.
    Raises :class:`HybridDataError` with a plain message for a missing folder or a bad file.
    """
    folder = Path(directory) if directory is not None else real_data_dir()
    if folder is None:
        raise HybridDataError(f"No HybridQA data found. {missing_message('hybridqa')}")
    if not folder.is_dir():
        raise HybridDataError(f"{folder} is not a folder of HybridQA tables.")
    manifest = folder / "manifest.json"
    files: list[Path]
    if manifest.is_file():
        try:
            listed = json.loads(manifest.read_text(encoding="utf-8")).get("tables", [])
            files = [folder / str(t["file"]) for t in listed]
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise HybridDataError(f"{manifest}: not a readable manifest ({e}).") from e
    else:
        files = sorted(p for p in folder.glob("*.json"))
    if not files:
        raise HybridDataError(f"{folder} holds no HybridQA tables (*.json).")
    taken: set[str] = set()
    tables = []
    for path in files:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError as e:
            raise HybridDataError(f"{path.name} is listed in the manifest but missing.") from e
        except (OSError, ValueError) as e:
            raise HybridDataError(f"{path.name}: not readable JSON ({e}).") from e
        if not isinstance(data, Mapping):
            raise HybridDataError(f"{path.name}: not a HybridQA table (a JSON object is expected).")
        tables.append(real_table(data, name=_identifier(str(data.get("table_id") or path.stem), taken), file=path.name))
    return HybridWorld("hybridqa-real", tuple(tables))
