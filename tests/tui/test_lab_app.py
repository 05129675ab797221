"""The Lab tab driven headless through the pilot: behaviour, not pixels."""

from __future__ import annotations

import asyncio

from textual.pilot import Pilot
from textual.widgets import ProgressBar, Static
from textual_plotext import PlotextPlot

from tests.tui.support import SIZE, drive, make_app, open_tab, settle
from tui.app import CS224VApp
from tui.lab import ExperimentTree, LabArea
from tui.widgets import ResultsTable


def _area(app: CS224VApp) -> LabArea:
    area = app.area("lab")
    assert isinstance(area, LabArea)
    return area


def _text(app: CS224VApp, selector: str) -> str:
    return str(app.query_one(selector, Static).render())


async def _open(pilot: Pilot) -> LabArea:
    await settle(pilot)
    await open_tab(pilot, "lab")
    return _area(pilot.app)


@drive
async def test_the_list_groups_experiments_by_lecture_and_highlighting_shows_the_caption() -> None:
    from engines import lab

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await _open(pilot)
        tree = app.query_one(ExperimentTree)
        assert app.focused is tree
        assert [str(n.label) for n in tree.root.children] == [f"Lecture {n}" for n in lab.lectures()]
        first = lab.experiments()[0]
        assert area.selected == first.name
        assert first.title in _text(app, "#lab-caption")
        await pilot.press("down", "down")
        await pilot.pause()
        third = lab.experiments()[2]
        assert area.selected == third.name
        caption = _text(app, "#lab-caption")
        assert third.title in caption and "Measured" in caption
        assert app.query_one("#lab-caption").border_title.startswith(third.name)
        assert app.query_one("#lab-table", ResultsTable).row_count == 0


@drive
async def test_running_fills_the_table_notes_and_chart_and_results_are_kept() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await _open(pilot)
        await pilot.press("s")  # full → small
        assert area.run_size == "small"
        area.select("l6-classify")
        await pilot.pause()
        await pilot.press("ctrl+j")
        await settle(pilot)
        table = app.query_one("#lab-table", ResultsTable)
        assert table.row_count == 4
        assert [str(table.get_row_at(r)[0]) for r in range(4)] == ["exact", "similarity", "llm_all", "retrieve_llm"]
        notes = _text(app, "#lab-notes-text")
        assert "holds — " in notes
        assert app.query_one(PlotextPlot).display
        assert not app.query_one("#lab-progress-row").display
        assert _text(app, "#lab-status").startswith("done — l6-classify (small)")

        area.select("l6-eval-ties")  # not run: empty, no chart
        await pilot.pause()
        assert table.row_count == 0 and not app.query_one(PlotextPlot).display
        area.select("l6-classify")  # kept from before
        await pilot.pause()
        assert table.row_count == 4 and "holds" in _text(app, "#lab-notes-text")


@drive
async def test_differs_notes_use_the_warning_colour() -> None:
    from tui.lab import _notes_content

    content = _notes_content(["holds — a: b.", "differs — c: d. Why: e"])
    assert content.plain == "• holds — a: b.\n• differs — c: d. Why: e"
    styles = {str(span.style) for span in content.spans}
    assert any("$warning" in s for s in styles) and any("$text-success" in s for s in styles)


@drive
async def test_escape_cancels_a_full_size_run_and_the_app_stays_alive() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await _open(pilot)
        assert area.run_size == "full"
        area.select("l7-workload")  # 360 steps at full size (~20 s): long enough to cancel
        await pilot.pause()
        await pilot.press("enter")
        for _ in range(200):  # until the progress bar moves
            await asyncio.sleep(0.02)
            await pilot.pause()
            if (app.query_one("#lab-progress", ProgressBar).progress or 0) > 0:
                break
        assert area.is_busy and app.query_one("#lab-progress-row").display
        assert "l7-workload" in _text(app, "#lab-progress-text")
        await pilot.press("escape")
        await settle(pilot)
        assert not area.is_busy
        assert _text(app, "#lab-status").startswith("cancelled l7-workload")
        assert not app.query_one("#lab-progress-row").display
        assert app.query_one("#lab-table", ResultsTable).row_count == 0
        # still alive: a small run works afterwards
        area.run_experiment("l6-eval-ties", size="small")
        await settle(pilot)
        assert app.query_one("#lab-table", ResultsTable).row_count > 0


@drive
async def test_palette_offers_lab_commands() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await _open(pilot)
        titles = [c.title for c in area.commands()]
        assert "Lab: size small" in titles and "Lab: size full (current)" in titles
        assert any(t.startswith("Lab: run l6-classify — ") for t in titles)
