"""Issue 29.0 on PostgreSQL: rows to verify settled on demand.  A lazy SUQL run over a PostgreSQL table, then
``settle`` (which loads the candidates again from the server), returns exactly what the eager run returns: the
rows, the rows to verify and every answer; and both return what the same query returns over a CSV file of the same
rows (another source, DuckDB underneath).  Against a real server the tests start (tests/pg_server.py)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from engines.compose import open_tables
from engines.data.postgres import open_postgres
from engines.llm.client import llm_from_settings
from engines.settings import Settings
from engines.suql.workload import TEXT_CONDITIONS
from tests.pg_server import PgServer, pg_server  # noqa: F401 - the fixture
from worlds.restaurants import build

DB = "cs224v_settle"
A, B = TEXT_CONDITIONS[0][0], TEXT_CONDITIONS[6][0]  # family-friendly, easy parking: many Unknowns between them
QUERY = (
    f"SELECT id, name FROM restaurants WHERE answer(reviews, '{A}') = 'Yes' "
    f"AND answer(reviews, '{B}') = 'Yes' AND location = 'Palo Alto'"
)


@pytest.fixture(scope="module")
def rows() -> list[tuple[int, str, str, str]]:
    world, _ = build(n=600)
    return [(r._id, r.name, r.location, " ".join(r.reviews)) for r in world.rows]


@pytest.fixture(scope="module")
def pg(pg_server: PgServer, rows):  # noqa: F811
    url = pg_server.create_database(DB)
    with pg_server.admin(DB) as con:
        con.execute("CREATE TABLE restaurants (id integer PRIMARY KEY, name text, location text, reviews text)")
        with con.cursor() as cur:
            cur.executemany("INSERT INTO restaurants VALUES (%s, %s, %s, %s)", rows)
    source = open_postgres(url, Settings())
    yield source
    source.close()


def _engine(source):
    return source.suql_engine(llm_from_settings(Settings()), Settings(), pool=1)


def test_lazy_then_settling_on_postgresql_is_the_eager_run_and_the_file_s(pg, rows, tmp_path: Path) -> None:
    engine = _engine(pg)
    eager = engine.run(QUERY, mode="E", verify="eager")
    lazy = engine.run(QUERY, mode="E", verify="lazy")
    assert lazy.unsettled > 0 and lazy.stats.answer_calls < eager.stats.answer_calls  # lazy left rows to settle
    assert lazy.rows == eager.rows  # the matches first
    settled = engine.settle(lazy)
    assert settled.rows == eager.rows and settled.to_verify == eager.to_verify
    assert settled.settled and settled.unsettled == 0
    assert settled.known[0] == eager.known[0]  # the same answers, no more, no fewer
    assert lazy.stats.answer_calls + settled.stats.answer_calls == len(eager.known[0])
    assert settled.stats.verification_calls == settled.stats.answer_calls

    path = tmp_path / "restaurants.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "name", "location", "reviews"])
        w.writerows(rows)
    local = open_tables(Settings(), db=str(path))
    try:
        file_eager = _engine(local).run(QUERY, mode="E", verify="eager")
    finally:
        local.close()
    assert sorted(file_eager.rows) == sorted(eager.rows)

    def listed(result) -> list[tuple[int, tuple[str, ...]]]:  # _row is each source's own row number
        return sorted((r["id"], tuple(r["unknown"])) for r in result.to_verify)

    assert listed(file_eager) == listed(eager)
