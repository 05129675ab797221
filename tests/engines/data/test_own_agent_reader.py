"""The simulated reader on tables and questions of its own (none of benchmarks/own_data_ask.py's): every answer
is right with nothing flagged, or names what it could not use — never a confident wrong answer — and most are
right.  Each question's answer is computed here in Python from the rows, apart from any SQL."""

from __future__ import annotations

import datetime as dt
import importlib.util
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from engines.compose import open_source_agent
from engines.settings import Settings
from tests.engines.data.conftest import write_csv, write_jsonl

ROOT = Path(__file__).resolve().parents[3]


def _benchmark():
    spec = importlib.util.spec_from_file_location("own_data_ask", ROOT / "benchmarks" / "own_data_ask.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["own_data_ask"] = module
    spec.loader.exec_module(module)
    return module


same_answer = _benchmark().same_answer

CITIES = ("Lyon", "Basel", "Milan", "Vienna", "Munich", "Turin", "Geneva", "Zurich", "Graz", "Dijon", "Bern", "Linz")
PARTS = ("Central", "North", "East")
STATIONS = [f"{c} {p}" for p in PARTS for c in CITIES]  # 36 names: more than an enumeration shows


def train_rows() -> list[dict]:
    return [
        {
            "train_no": 100 + i,
            "operator": "SNCF" if i % 10 < 4 else "DB" if i % 10 < 7 else "SBB" if i % 10 < 9 else "OBB",
            "from_station": STATIONS[i % 36],
            "to_station": STATIONS[(i * 5 + 3) % 36],
            "distance_km": 50 + (i * 37) % 900,
            "delay_minutes": None if i % 9 == 0 else (i * 7) % 45,
            "travel_date": (dt.date(2023, 1, 1) + dt.timedelta(days=13 * i)).isoformat(),
            "class": ("first", "second")[i % 2],
        }
        for i in range(72)
    ]


AUTHORS = [
    f"{f} {l}" for f in ("Mary", "Ada", "Jane", "Karl", "Leo") for l in ("Shelley", "Byron", "Austen", "Marx", "Kahn")
]


def book_rows() -> list[dict]:
    return [
        {
            "title": f"Volume {i}",
            "author": AUTHORS[(i * 7) % 25],
            "genre": "fiction" if i % 10 < 4 else "history" if i % 10 < 7 else "poetry" if i % 10 < 9 else "science",
            "pages": 80 + (i * 53) % 600,
            "price_usd": round(5 + (i * 17 % 40) + i / 100, 2),  # every price its own
            "published": f"{2015 + i % 8}-{1 + i % 12:02d}-{1 + i % 27:02d}",
            "isbn": None if i % 6 == 0 else f"978-{i:06d}",
        }
        for i in range(40)
    ]


Rows = list[dict]


def count(pred: Callable[[dict], bool]) -> Callable[[Rows], list[tuple]]:
    return lambda rows: [(sum(1 for r in rows if pred(r)),)]


def agg(fn: Callable[[list], float], column: str, pred: Callable[[dict], bool] = lambda r: True):
    return lambda rows: [(fn([r[column] for r in rows if pred(r) and r[column] is not None]),)]


def per(column: str) -> Callable[[Rows], list[tuple]]:
    return lambda rows: sorted(Counter(r[column] for r in rows).items())


def most(column: str) -> Callable[[Rows], list[tuple]]:
    return lambda rows: [(Counter(r[column] for r in rows).most_common(1)[0][0],)]


def top(n: int, key: str, columns: tuple[str, ...], reverse: bool = True) -> Callable[[Rows], list[tuple]]:
    return lambda rows: [tuple(r[c] for c in columns) for r in sorted(rows, key=lambda r: r[key], reverse=reverse)[:n]]


def mean(xs: list) -> float:
    return sum(xs) / len(xs)


def year(r: dict, key: str) -> int:
    return int(r[key][:4])


TRAINS: list[tuple[str, Callable[[Rows], list[tuple]] | None]] = [
    ("how many DB trains are there?", count(lambda r: r["operator"] == "DB")),
    ("how many trains from Lyon Central?", count(lambda r: r["from_station"] == "Lyon Central")),
    ("how many trains go to Basel North?", count(lambda r: r["to_station"] == "Basel North")),
    ("how many trains have a distance over 500 km?", count(lambda r: r["distance_km"] > 500)),
    ("how many trains are longer than 800 km?", count(lambda r: r["distance_km"] > 800)),
    ("how many trains have no delay recorded?", count(lambda r: r["delay_minutes"] is None)),
    ("what is the average delay of SBB trains?", agg(mean, "delay_minutes", lambda r: r["operator"] == "SBB")),
    ("how many trains per operator?", per("operator")),
    ("which operator has the most trains?", most("operator")),
    ("show the 3 longest trips", top(3, "distance_km", ("train_no", "distance_km"))),
    ("what is the shortest distance?", agg(min, "distance_km")),
    (
        "how many trains ran in March 2024?",
        count(lambda r: r["travel_date"].startswith("2024-03")),
    ),
    (
        "how many first class trains are delayed more than 20 minutes?",
        count(lambda r: r["class"] == "first" and (r["delay_minutes"] or 0) > 20),
    ),
    ("total distance of OBB trains", agg(sum, "distance_km", lambda r: r["operator"] == "OBB")),
    (
        "how many second class trains left in 2025?",
        count(lambda r: r["class"] == "second" and year(r, "travel_date") == 2025),
    ),
    ("how many trains have a restaurant car?", None),
    ("how many trains are electric?", None),
]

BOOKS: list[tuple[str, Callable[[Rows], list[tuple]] | None]] = [
    ("how many history books are there?", count(lambda r: r["genre"] == "history")),
    ("how many books have more than 300 pages?", count(lambda r: r["pages"] > 300)),
    ("how many books cost under 20 dollars?", count(lambda r: r["price_usd"] < 20)),
    ("how many books by Mary Shelley?", count(lambda r: r["author"] == "Mary Shelley")),
    ("what is the average price of poetry books?", agg(mean, "price_usd", lambda r: r["genre"] == "poetry")),
    ("books per genre", per("genre")),
    ("which genre has the most books?", most("genre")),
    ("how many books were published in 2019?", count(lambda r: year(r, "published") == 2019)),
    ("how many books have no isbn?", count(lambda r: r["isbn"] is None)),
    (
        "how many fiction books cost more than 30 dollars and have over 400 pages?",
        count(lambda r: r["genre"] == "fiction" and r["price_usd"] > 30 and r["pages"] > 400),
    ),
    ("show the 3 cheapest books", top(3, "price_usd", ("title", "price_usd"), reverse=False)),
    ("show the 2 most expensive books", top(2, "price_usd", ("title", "price_usd"))),
    ("how many books are hardcover?", None),
    ("how many books won an award?", None),
]


def gold_columns(rows: list[tuple]) -> list[str]:
    return [f"c{i}" for i in range(len(rows[0]))] if rows else []


def outcomes(path: Path, table: Rows, questions) -> Counter:
    session = open_source_agent(str(path), Settings())
    seen: Counter = Counter()
    try:
        for question, answer in questions:
            session.agent.reset()
            turn = session.agent.ask(question)
            flagged = bool(turn.not_understood)
            answered = turn.needs_database and turn.error is None and turn.sql is not None
            if answer is None:
                outcome = "flagged or declined" if flagged or not answered else "confidently wrong"
            elif not answered:
                outcome = "flagged or declined"
            else:
                gold = answer(table)
                right = same_answer(gold_columns(gold), gold, turn.columns, turn.rows)
                outcome = (
                    ("right but flagged" if flagged else "correct")
                    if right
                    else ("flagged or declined" if flagged else "confidently wrong")
                )
            assert outcome != "confidently wrong", (question, turn.sql, turn.rows[:5], turn.reply)
            seen[outcome] += 1
    finally:
        session.close()
    return seen


@pytest.mark.parametrize(
    "name, rows, questions, write",
    [
        ("trains.csv", train_rows, TRAINS, write_csv),
        ("books.jsonl", book_rows, BOOKS, write_jsonl),
    ],
)
def test_no_confident_wrong_answer_and_most_are_right(tmp_path, name, rows, questions, write):
    table = rows()
    seen = outcomes(write(tmp_path / name, table), table, questions)
    answerable = sum(1 for _, a in questions if a is not None)
    assert seen["confidently wrong"] == 0
    assert seen["correct"] >= 0.7 * answerable, seen
