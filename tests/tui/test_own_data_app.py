"""The app over a user's own tables (--db): the Restaurants and SUQL tabs open them, show the schema browser
(tables, columns, types, roles) and run the agents and SUQL on them; the built-in worlds stay one switch away."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from tests.engines.data.conftest import HOSTILE, hotel_rows, write_csv
from tests.tui.support import SIZE, drive, make_app, open_tab, settle
from tui.restaurants import RestaurantsArea
from tui.schema_pane import SchemaPane
from tui.suql import SuqlArea
from tui.widgets import ResultsTable, SqlEditor


def _labels(pane: SchemaPane) -> list[str]:
    out: list[str] = []

    def walk(node) -> None:
        label = node.label
        out.append(label.plain if isinstance(label, Text) else str(label))
        for child in node.children:
            walk(child)

    walk(pane.root)
    return out


def _data(tmp_path: Path) -> Path:
    rows = [{**r, HOSTILE: r["id"] % 2} for r in hotel_rows()]
    return write_csv(tmp_path / "hotels.csv", rows)


@drive
async def test_the_agent_tab_over_your_data_shows_the_schema_and_answers(tmp_path: Path) -> None:
    path = _data(tmp_path)
    app = make_app(db=str(path))
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "restaurants")
        assert isinstance(area, RestaurantsArea)
        pane = app.query_one("#rest-schema", SchemaPane)
        assert pane.display
        labels = _labels(pane)
        assert labels[0] == "hotels.csv (CSV file)" and "hotels — 24 rows" in labels
        assert "city  VARCHAR  enum · classify()" in labels
        assert "notes  VARCHAR  free text · answer()" in labels
        assert f"{HOSTILE}  BIGINT  number" in labels  # a name that is markup or SQL is shown as it is
        assert {"Berlin", "Paris", "Rome"} <= set(labels)
        assert app.query_one("#sql-editor", SqlEditor).text.startswith('SELECT\n  *\nFROM "hotels"')
        area.ask("how many hotels in Rome?")
        await settle(pilot)
        results = app.query_one("#results", ResultsTable)
        assert results.row_count == 1 and str(results.get_row_at(0)[0]) == "8"


@drive
async def test_the_suql_tab_opens_your_data_with_examples_made_from_it(tmp_path: Path) -> None:
    path = _data(tmp_path)
    app = make_app(db=str(path))
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "suql")
        assert isinstance(area, SuqlArea)
        assert area.world == str(path)
        assert app.query_one("#suql-schema", SchemaPane).display
        assert [e.title for e in area.examples][:2] == ["hotels: the first rows", "hotels: rows per city"]
        mention = next(e for e in area.examples if "answer()" in e.title)
        area.load_example(mention)
        area.run_query()
        await settle(pilot)
        results = app.query_one("#suql-results", ResultsTable)
        assert results.row_count == 5
        # the built-in worlds are still there; their schema pane is hidden
        area.set_world("courses")
        await settle(pilot)
        assert area.world == "courses" and not app.query_one("#suql-schema", SchemaPane).display


@drive
async def test_a_bad_source_is_an_error_in_the_tab_not_a_crash(tmp_path: Path) -> None:
    app = make_app(db=str(tmp_path / "missing.csv"))
    async with app.run_test(size=SIZE) as pilot:
        await open_tab(pilot, "restaurants")
        await settle(pilot)
        error = app.query_one("#error")
        assert error.display and "No such file" in str(error.render())
