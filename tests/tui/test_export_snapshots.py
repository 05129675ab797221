"""Snapshots of the export prompt (F9) and the cell view (v) at 140 × 40 and 80 × 24 (issue 15 part 4).

The prompt's default file name carries the time: the app's wall clock is fixed here.  Regenerate with
``--snapshot-update``, then look at them.
"""

from __future__ import annotations

from datetime import datetime

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable

from tests.tui.support import SIZE, make_app, open_tab, settle
from tui.screenshots import RESTAURANTS_QUESTION, SUQL_EXAMPLE

SIZES = {"140x40": SIZE, "80x24": (80, 24)}


def _app():
    app = make_app()
    app.wall_clock = lambda: datetime(2026, 12, 1, 19, 4, 12)
    return app


@pytest.mark.parametrize("size", list(SIZES))
def test_export_prompt(snap_compare, size):
    async def run_before(pilot: Pilot) -> None:
        area = await open_tab(pilot, "suql")
        area.load_example(area.example(SUQL_EXAMPLE))
        area.run_query()
        await settle(pilot)
        # the calls table behind the dialog follows the calls as they stream in; where a scroll to the last one had
        # got when the picture is taken differed (CI, an idle machine), and at its end its scrollbar thumb is drawn
        # at one of two places (tui/screenshots.py): bring it to its start first
        pilot.app.query_one("#suql-calls", DataTable).scroll_home(animate=False, immediate=True)
        await pilot.pause()
        pilot.app.query_one("#suql-results", DataTable).focus()
        await pilot.press("f9")
        await pilot.pause()

    assert snap_compare(_app(), terminal_size=SIZES[size], run_before=run_before)


@pytest.mark.parametrize("size", list(SIZES))
def test_cell_view_of_a_call(snap_compare, size):
    async def run_before(pilot: Pilot) -> None:
        area = await open_tab(pilot, "restaurants")
        area.ask(RESTAURANTS_QUESTION)
        await settle(pilot)
        calls = pilot.app.query_one("#calls", DataTable)
        calls.focus()
        calls.move_cursor(row=calls.row_count - 1, animate=False)
        await pilot.pause()
        await pilot.press("v")
        await pilot.pause()

    assert snap_compare(_app(), terminal_size=SIZES[size], run_before=run_before)
