"""Small data files of every supported format, built in tmp_path at test time."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

HOSTILE = '"; DROP TABLE x; --'

NOTES = (
    "A lovely stay with a quiet garden and friendly staff. The breakfast was fresh.",
    "Noisy street, but the rooms were clean. The lift was broken for two days.",
    "Great pool on the roof and a view of the old town. Parking is expensive.",
)


def hotel_rows(n: int = 24) -> list[dict]:
    cities = ("Paris", "Rome", "Berlin")
    return [
        {
            "id": i,
            "name": f"Hotel {i}",
            "city": cities[i % 3],
            "price": 40 + 5 * i,
            "notes": NOTES[(i // 3) % 3],  # every city has every kind of note
        }
        for i in range(n)
    ]


def write_csv(path: Path, rows: list[dict], delim: str = ",") -> Path:
    con = duckdb.connect()
    try:
        con.execute("CREATE TABLE t AS SELECT UNNEST(?, recursive := true)", [rows])
        con.table("t").write_csv(str(path), sep=delim, header=True)  # the path as an argument, not SQL text
    finally:
        con.close()
    return path


def write_parquet(path: Path, rows: list[dict]) -> Path:
    con = duckdb.connect()
    try:
        con.execute("CREATE TABLE t AS SELECT UNNEST(?, recursive := true)", [rows])
        con.table("t").write_parquet(str(path))
    finally:
        con.close()
    return path


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def write_duckdb(path: Path, rows: list[dict]) -> Path:
    con = duckdb.connect(str(path))
    try:
        con.execute("CREATE TABLE hotels AS SELECT UNNEST(?, recursive := true)", [rows])
        con.execute("CREATE SCHEMA archive")
        con.execute("CREATE TABLE archive.old AS SELECT 1 AS id, 'gone' AS what")
    finally:
        con.close()
    return path


@pytest.fixture
def hotels_csv(tmp_path: Path) -> Path:
    return write_csv(tmp_path / "hotels.csv", hotel_rows())


@pytest.fixture
def hotels_duckdb(tmp_path: Path) -> Path:
    return write_duckdb(tmp_path / "hotels.duckdb", hotel_rows())
