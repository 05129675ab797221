"""What each tab draws on screen: no pane shows a refused statement's previous query, each knowledge-graph
view has its own status line, the Lab's size switch, chart legend and tree titles, the SUQL counter line at
140 columns, and screenshots without runs of text drawn from leading spaces."""

from __future__ import annotations

import re

from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Input, RadioButton, Static

from tests.tui.support import SIZE, drive, make_app, open_tab, settle
from tui.screenshots import robust_svg
from tui.widgets import ResultsTable, SqlEditor


def _shown(widget: Widget) -> str:
    """The text the widget draws on screen, line by line (what a person sees, cut where it is cut)."""
    lines = widget.render_lines(Region(0, 0, widget.size.width, widget.size.height))
    return "\n".join("".join(segment.text for segment in line) for line in lines)


@drive
async def test_a_refused_statement_leaves_no_pane_showing_the_previous_query() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        box = app.query_one("#question", Input)
        box.focus()
        box.value = "Show me a café in Palo Alto"
        await pilot.press("enter")
        await settle(pilot)
        assert "cafe" in _shown(app.query_one("#sql-rewritten"))  # the turn's query is shown
        editor = app.query_one("#sql-editor", SqlEditor)
        editor.text = "DROP TABLE restaurants"
        editor.focus()
        await pilot.press("ctrl+j")
        await settle(pilot)
        for pane in ("#route", "#sql-parsed", "#sql-rewritten", "#readback"):
            shown = _shown(app.query_one(pane))
            assert "cafe" not in shown and "café" not in shown, f"{pane} still shows the previous query: {shown!r}"
        assert "DROP TABLE" in _shown(app.query_one("#sql-parsed"))
        assert app.query_one(ResultsTable).row_count == 0


@drive
async def test_each_knowledge_graph_view_has_its_own_status_line() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "kg")
        area.show_view("console")
        await pilot.press("ctrl+j")
        await settle(pilot)
        status = app.query_one("#kg-status", Static)
        console_status = str(status.render())
        assert "25 rows" in console_status
        area.show_view("browser")
        await settle(pilot)
        assert str(status.render()) != console_status  # the console's rows are not the browser's
        assert str(status.render()).startswith("ready")
        area.show_view("console")
        await settle(pilot)
        assert str(status.render()) == console_status  # and come back with the console


@drive
async def test_the_lab_size_switch_highlights_the_size_chosen() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "lab")
        sizes = app.query_one("#lab-size")
        sizes.focus()
        await pilot.pause()
        app.query_one("#lab-list").focus()
        for _ in range(3):
            await pilot.press("s")
            await pilot.pause()
            on = [b.id for b in app.query(RadioButton) if b.value]
            highlighted = [b.id for b in app.query(RadioButton) if b.has_class("-selected")]
            assert on == [f"lab-size-{area.run_size}"]
            assert highlighted in ([], on), f"{highlighted} is highlighted while {on} is chosen"


@drive
async def test_the_suql_counter_line_keeps_its_elapsed_time_at_140_columns() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "suql")
        area.load_example(area.example("family-friendly"))
        area.set_mode("A")  # every row examined: the longest counter line
        area.run_query()
        await settle(pilot)
        shown = " ".join(_shown(app.query_one("#suql-counters")).split())  # the line may wrap, not be cut
        assert "examined 600" in shown
        assert re.search(r"elapsed \d+\.\d\d s", shown), shown


def test_the_screenshots_draw_no_run_of_text_from_leading_spaces() -> None:
    # librsvg (the README's PNGs) drops the leading spaces of a run: "cs224v-tui— sim", "2rolled back"
    svg = (
        '<text class="r1" x="10" y="20" textLength="24.4" clip-path="url(#a)">ab</text>'
        '<text class="r2" x="34.4" y="20" textLength="36.6" clip-path="url(#a)">&#160;—&#160;</text>'
        '<text class="r3" x="71" y="20" textLength="146.4" clip-path="url(#a)">&#160;rolled&#160;back</text>'
    )
    fixed = robust_svg(svg)
    assert ">&#160;rolled" not in fixed and ">rolled&#160;back</text>" in fixed
    assert 'x="83.2"' in fixed and 'textLength="134.2"' in fixed  # one cell (12.2) later, one cell shorter
    assert ">&#160;—&#160;<" not in fixed and ">—&#160;<" in fixed


def test_the_lab_chart_legend_leaves_the_bars_uncovered() -> None:
    import asyncio

    from textual.app import App, ComposeResult
    from textual_plotext import PlotextPlot

    from engines.lab.core import Chart, Series
    from tui.lab import _draw

    class ChartApp(App[None]):
        def compose(self) -> ComposeResult:
            yield PlotextPlot()

    chart = Chart(
        "bar",
        "classify()",
        "method",
        "score",
        ("exact", "llm_all"),
        (Series("precision", (1.0, 0.925)), Series("recall", (0.026, 0.949))),
    )

    async def drawn() -> list[str]:
        app = ChartApp()
        async with app.run_test(size=(60, 16)) as pilot:
            plot = app.query_one(PlotextPlot)
            _draw(plot, chart)
            await pilot.pause()
            return _shown(plot).splitlines()

    lines = asyncio.run(drawn())
    legend = [line for line in lines if "precision" in line or "recall" in line]
    assert len(legend) == 2
    for line in legend:  # the legend's own marker, and no bar beside it (a bar of 1.00 reached these rows)
        assert line.count("█") == 2, line
    assert any(line.count("█") > 2 for line in lines)  # the bars are drawn, below the legend


@drive
async def test_the_lab_tree_cuts_titles_after_a_whole_word() -> None:
    from rich.cells import cell_len

    from tui.lab import ExperimentTree

    for size in (SIZE, (80, 24)):
        app = make_app()
        async with app.run_test(size=size) as pilot:
            await open_tab(pilot, "lab")
            tree = app.query_one(ExperimentTree)
            width = tree.label_width()
            cut = 0
            for leaf_id, (section, title) in tree.full_labels.items():
                shown = tree.get_node_by_id(leaf_id).label.plain
                assert cell_len(shown) <= width, f"{shown!r} is wider than the tree ({width})"
                if shown != f"{section} {title}":
                    cut += 1
                    kept = shown.removesuffix("…")
                    assert shown.endswith("…") and f"{section} {title}".startswith(kept + " "), shown  # a whole word
            assert cut, "no title is long enough to be cut: the test checks nothing"
