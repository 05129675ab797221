"""A small laptop catalogue for lecture 7 §2.2's second slide query (Thunderbolt 3 and at least 16 GB of RAM).

``build(seed)`` returns the visible :class:`LaptopWorld` (what a database shows: name, ram, price, ``about`` — the
product blurb — and ``description`` — the long text) and, apart from it, the :class:`LaptopTruth`: which laptops
really have a Thunderbolt 3 port.  A laptop that has one says so in its blurb, in its description, or in both —
"where the answer is written is often unclear", the lecture's reason to ask every text column with OR; one without
says nothing of Thunderbolt, or that its USB-C port is not one.  Only evaluators take the truth.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import NamedTuple

import duckdb

TABLE = "laptops"
DEFAULT_SEED = 3

_BRANDS = ("Corvid", "Halden", "Nimbus", "Osprey", "Quill", "Tessel", "Vanta", "Wren")
_LINES = ("Air", "Pro", "Studio", "Flex", "Book", "Edge", "Core", "Lite")
_BLURBS = (
    "A light everyday machine with a bright display.",
    "Built for long battery life and quiet work.",
    "A sturdy laptop for students and travel.",
    "Fast, slim and made for creative work.",
)
_DESCRIPTIONS = (
    "An aluminium body, a backlit keyboard and a 1080p webcam.",
    "A 14-inch display, stereo speakers and a fingerprint reader.",
    "A 16-inch display with a numeric keypad and a large touchpad.",
    "A convertible hinge, pen support and a glass touchpad.",
)
_TB_ABOUT = ("Two Thunderbolt 3 ports drive your monitors.", "Thunderbolt 3 for fast docks and displays.")
_TB_DESC = ("Ports: 2x Thunderbolt 3 (USB-C), HDMI, headphone jack.", "Connectivity includes a Thunderbolt 3 port.")
_NO_TB = ("Ports: USB-C (not Thunderbolt), 2x USB-A, HDMI.", "It charges over USB-C; there is no Thunderbolt port.")


@dataclass(frozen=True)
class Laptop:
    _id: int
    name: str
    ram: int
    price: int
    about: str
    description: str


@dataclass(frozen=True)
class LaptopTruth:
    thunderbolt: frozenset[int]


@dataclass(frozen=True)
class LaptopWorld:
    rows: tuple[Laptop, ...]
    table: str = TABLE

    def schema(self) -> str:
        return (
            f"CREATE TABLE {self.table} (_id INTEGER PRIMARY KEY, name TEXT, ram INTEGER, price INTEGER, "
            "about TEXT, description TEXT);"
        )

    def load(self, con: duckdb.DuckDBPyConnection) -> None:
        con.execute(
            f"CREATE TABLE {self.table} (_id INTEGER PRIMARY KEY, name VARCHAR, ram INTEGER, price INTEGER, "
            "about VARCHAR, description VARCHAR)"
        )
        con.executemany(
            f"INSERT INTO {self.table} VALUES (?, ?, ?, ?, ?, ?)",
            [(r._id, r.name, r.ram, r.price, r.about, r.description) for r in self.rows],
        )


class Built(NamedTuple):
    world: LaptopWorld
    truth: LaptopTruth


def build(seed: int = DEFAULT_SEED, n: int = 60) -> Built:
    rng = random.Random(seed)
    rows, tb = [], set()
    for i in range(1, n + 1):
        about, desc = rng.choice(_BLURBS), rng.choice(_DESCRIPTIONS)
        if rng.random() < 0.45:
            tb.add(i)
            where = rng.choice(("about", "description", "description", "both"))
            if where in ("about", "both"):
                about = f"{about} {rng.choice(_TB_ABOUT)}"
            if where in ("description", "both"):
                desc = f"{desc} {rng.choice(_TB_DESC)}"
        elif rng.random() < 0.5:
            desc = f"{desc} {rng.choice(_NO_TB)}"
        name = f"{rng.choice(_BRANDS)} {rng.choice(_LINES)} {i}"
        rows.append(Laptop(i, name, rng.choice((8, 8, 16, 16, 32)), rng.randrange(600, 2600, 50), about, desc))
    return Built(LaptopWorld(tuple(rows)), LaptopTruth(frozenset(tb)))
