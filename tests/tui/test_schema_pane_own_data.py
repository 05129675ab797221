"""Issue 26, item 3, in the schema pane: over a CSV file it says which file a table was read from, that the types
were inferred from its values, which fields were read as NULL and how many values of each column are NULL; over
PostgreSQL it lists the catalogue at once and describes a table only when its node is expanded (the source keeps
it for the session)."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from types import SimpleNamespace

import pytest
from textual.app import App, ComposeResult

from engines.data.source import open_source
from engines.settings import Settings
from tests.pg_server import PgServer, pg_server  # noqa: F401 - the fixture
from tests.tui.support import drive, wait_for_workers
from tui.schema_pane import SchemaPane, SchemaSubject

DB = "cs224v_pane"
ROWS = 120_000


class PaneApp(App):
    def compose(self) -> ComposeResult:
        yield SchemaPane(id="pane")


def labels(pane: SchemaPane) -> list[str]:
    out: list[str] = []

    def walk(node) -> None:
        out.append(node.label.plain)
        for child in node.children:
            walk(child)

    walk(pane.root)
    return out


@drive
async def test_the_pane_says_how_a_csv_was_read_and_its_nulls() -> None:
    try:
        dist = importlib.metadata.distribution("palmerpenguins")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("palmerpenguins is not installed (pip install -e '.[test]')")
    path = Path(str(dist.locate_file("palmerpenguins/data/penguins.csv")))
    with open_source(str(path), Settings()) as source:
        app = PaneApp()
        async with app.run_test(size=(120, 40)) as pilot:
            pane = app.query_one(SchemaPane)
            pane.follow(SchemaSubject.of_session(SimpleNamespace(source=source), "", {}))
            await pilot.pause()
            shown = labels(pane)
    assert "penguins — 344 rows" in shown
    assert (
        "read from penguins.csv; types inferred from its values · NULL: NA, N/A, NaN, null, NULL, empty fields" in shown
    )
    assert "bill_length_mm  DOUBLE  number  2 NULL" in shown
    assert "sex  VARCHAR  enum · classify()  11 NULL" in shown
    assert "species  VARCHAR  enum · classify()" in shown  # no NULL: nothing said


@pytest.fixture(scope="module")
def db(pg_server: PgServer) -> str:  # noqa: F811
    url = pg_server.create_database(DB)
    with pg_server.admin(DB) as con:
        con.execute(
            "CREATE TABLE trips AS SELECT g AS id, (ARRAY['bike','bus','tram'])[1 + g % 3] AS mode "
            f"FROM generate_series(1, {ROWS}) AS g"
        )
        con.execute("CREATE TABLE stops (id int PRIMARY KEY, name text)")
        con.execute("INSERT INTO stops VALUES (1, 'Central'), (2, 'Harbour')")
        con.execute("ANALYZE")
    return url


@drive
async def test_a_postgresql_table_is_described_when_its_node_is_expanded(db) -> None:
    from engines.data.postgres import open_postgres

    source = open_postgres(db, Settings())
    try:
        app = PaneApp()
        async with app.run_test(size=(120, 40)) as pilot:
            pane = app.query_one(SchemaPane)
            pane.follow(SchemaSubject.of_session(SimpleNamespace(source=source), "", {}))
            await pilot.pause()
            trips = next(n for n in pane.root.children if n.data == "trips")
            assert trips.label.plain.startswith(f"trips — about {ROWS:,} rows — types only")
            assert source.sandbox.statements == []  # listed from the catalogue: no row read
            trips.expand()
            await pilot.pause()
            await wait_for_workers(pilot)
            await pilot.pause()
            trips = next(n for n in pane.root.children if n.data == "trips")
            assert trips.label.plain == f"trips — {ROWS:,} rows"
            assert "mode  VARCHAR  enum · classify()" in labels(pane)
            assert {"bike", "bus", "tram"} <= set(labels(pane))
            # described once, by the source, for the session: the stops table was not read
            assert source.schema.table("trips").described and not source.schema.table("stops").described
            assert all('"stops"' not in sql for sql, _ in source.sandbox.statements)
    finally:
        source.close()
