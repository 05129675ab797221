"""The chart view (c in a focused table; the palette's "Chart the focused table"), opened from a result table in
each tab: it draws the table's typed rows, the keys cycle the kind and the columns, F9 exports the source table,
and a table with nothing to chart says why."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import DataTable
from textual_plotext import PlotextPlot

from tests.tui.support import SIZE, drive, make_app, open_tab, settle
from tui.chart import ChartScreen
from tui.chart_choice import ChartData, NothingToChart
from tui.screenshots import KG_QUESTION, LAB_EXPERIMENT, RESTAURANTS_QUESTION, SUQL_EXAMPLE


async def _chart(pilot: Pilot, selector: str) -> ChartScreen:
    table = pilot.app.query_one(selector, DataTable)
    table.focus()
    await pilot.pause()
    await pilot.press("c")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, ChartScreen), f"c opened {type(screen).__name__}"
    columns, rows = table.export_table()  # type: ignore[attr-defined]
    assert screen.columns == columns and [list(r) for r in screen.rows] == rows  # every row, typed
    return screen


async def _close(pilot: Pilot) -> None:
    await pilot.press("escape")
    await pilot.pause()
    assert not isinstance(pilot.app.screen, ChartScreen)


@drive
async def test_restaurants_results_chart_cycles_and_exports(tmp_path: Path) -> None:
    app = make_app()
    app.export_dir = tmp_path
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "restaurants")
        area.ask("Show me restaurants in Palo Alto")
        await settle(pilot)
        screen = await _chart(pilot, "#results")
        assert isinstance(screen.result, ChartData), screen.caption
        first = screen.caption
        assert first.startswith(("bar · ", "lines · ", "histogram · "))
        assert screen.query_one(PlotextPlot).display
        kinds = {screen.spec.kind}  # type: ignore[union-attr]
        for _ in range(3):
            await pilot.press("k")
            kinds.add(screen.spec.kind)  # type: ignore[union-attr]
        assert len(kinds) >= 2
        before = screen.spec
        await pilot.press("y")
        assert screen.spec != before and screen.caption != first or screen.spec == before
        # F9 in the chart view exports the table the chart was drawn from
        await pilot.press("f9")
        await pilot.pause()
        export = app.screen
        assert type(export).__name__ == "ExportScreen" and export.source is screen.source  # type: ignore[attr-defined]
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen
        await _close(pilot)


@drive
async def test_nothing_to_chart_is_said_instead_of_a_chart() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "restaurants")
        area.ask(RESTAURANTS_QUESTION)
        await settle(pilot)
        table = app.query_one("#results", DataTable)
        table.show_rows(["name", "address"], [["A", "1 Main St"], ["B", "2 Main St"]])  # type: ignore[attr-defined]
        screen = await _chart(pilot, "#results")
        assert isinstance(screen.result, NothingToChart)
        assert screen.query_one("#chart-message").display and not screen.query_one(PlotextPlot).display
        assert screen.caption.startswith("nothing to chart: no column holds numbers")
        await _close(pilot)


@drive
async def test_suql_lab_and_kg_stepper_tables_chart_in_one_session() -> None:
    """The SUQL results, the Lab's table (typed floats, not their text) and the KG stepper's answer rows (from
    the palette's command), one tab after another in one app."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "suql")
        area.load_example(area.example(SUQL_EXAMPLE))
        area.run_query()
        await settle(pilot)
        screen = await _chart(pilot, "#suql-results")
        assert screen.caption  # a chart, or why not
        await _close(pilot)

        area = await open_tab(pilot, "lab")
        area.run_experiment(LAB_EXPERIMENT)
        await settle(pilot)
        screen = await _chart(pilot, "#lab-table")
        assert isinstance(screen.result, ChartData), screen.caption
        assert any(isinstance(v, float) for row in screen.rows for v in row)  # numbers, not their display text
        await _close(pilot)

        area = await open_tab(pilot, "kg")
        area.show_view("stepper")
        area.run_question(KG_QUESTION)
        await settle(pilot)
        table = app.query_one("#kg-answer-rows", DataTable)
        table.focus()
        await pilot.pause()
        command = next(c for c in app.palette_commands() if c.title == "Chart the focused table")
        command.callback()
        await pilot.pause()
        assert isinstance(app.screen, ChartScreen)
        await _close(pilot)


@drive
async def test_kg_console_numbers_read_from_sparql_literals() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "kg")
        area.show_view("console")
        await settle(pilot)
        query = "SELECT ?x ?n WHERE { VALUES (?x ?n) { ('a' 1) ('b' 2) ('a' 5) ('c' 3) } }"
        assert area.run_query(query)
        await settle(pilot)
        screen = await _chart(pilot, "#kg-results")
        assert isinstance(screen.result, ChartData), screen.caption
        assert screen.caption.startswith("bar · x = x · y = sum(n)") and "numbers read from text" in screen.caption
        assert dict(zip(screen.result.labels, screen.result.values)) == {"a": 6.0, "b": 2.0, "c": 3.0}
        await _close(pilot)


class _Plot(App[None]):
    def compose(self) -> ComposeResult:
        yield PlotextPlot(id="p")


@drive
async def test_lab_chart_ticks_of_scores_end_at_1() -> None:
    from engines.lab.core import Chart, Series
    from tui.lab import _draw

    app = _Plot()
    async with app.run_test(size=(80, 20)) as pilot:
        plot = app.query_one(PlotextPlot)
        chart = Chart("bar", "F1", "method", "F1", ("exact", "llm"), (Series("a", (0.4, 1.0)), Series("b", (0.9, 0.7))))
        _draw(plot, chart)
        await pilot.pause()
        drawn = plot.render().plain  # type: ignore[union-attr]
        assert "1.33" not in drawn and "1.2" not in drawn
        assert "0.8" in drawn and "1┤" in drawn.replace(" ", "")


@drive
async def test_kg_console_header_click_sorts_numbers_as_numbers_and_export_keeps_the_query_order() -> None:
    from tui.kg import KgResultsTable

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "kg")
        area.show_view("console")
        await settle(pilot)
        assert area.run_query("SELECT ?x ?n WHERE { VALUES (?x ?n) { ('a' 9) ('b' 10) ('c' UNDEF) ('d' 100) } }")
        await settle(pilot)
        table = app.query_one("#kg-results", KgResultsTable)
        before = table.export_table()
        n = [str(c.label) for c in table.ordered_columns].index("n")
        for expected in (["a", "b", "d", "c"], ["d", "b", "a", "c"]):  # ▲ then ▼; unbound last both ways
            table.post_message(DataTable.HeaderSelected(table, table.ordered_columns[n].key, n, Text("n")))
            await pilot.pause()
            assert [str(table.get_row_at(r)[0]) for r in range(4)] == expected
        assert str(table.ordered_columns[n].label).endswith("▼")
        assert table.export_table() == before  # the query's order
