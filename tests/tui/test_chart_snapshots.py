"""Snapshots of the chart view (c in a focused results table): each kind at 140 × 40 — a bar chart of a category
against a number, lines of an ordered number against a number, a histogram of one number — one at 80 × 24, and the
"nothing to chart" message.  Each is the Restaurants tab's results of a real query.  Regenerate with
``--snapshot-update``, then look at them."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable

from tests.tui.support import SIZE, make_app, open_tab, settle

QUERIES = {
    # a category and a number: a bar chart, the mean rating of each price (4 categories)
    "bar": "SELECT price, rating FROM restaurants WHERE location = 'Palo Alto'",
    # an ordered number against a number: lines
    "lines": "SELECT num_reviews, rating FROM restaurants WHERE location = 'Palo Alto' ORDER BY num_reviews",
    # one number: a histogram
    "histogram": "SELECT rating FROM restaurants",
    "nothing": "SELECT name, address FROM restaurants WHERE location = 'Palo Alto' LIMIT 5",
}


def _run_before(sql: str):
    async def run_before(pilot: Pilot) -> None:
        area = await open_tab(pilot, "restaurants")
        assert area.run_sql(sql)
        await settle(pilot)
        pilot.app.query_one("#calls", DataTable).scroll_home(animate=False, immediate=True)
        pilot.app.query_one("#results", DataTable).focus()
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()

    return run_before


@pytest.mark.parametrize("kind", ["bar", "lines", "histogram", "nothing"])
def test_chart_kinds(snap_compare, kind):
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=_run_before(QUERIES[kind]))


def test_chart_at_80x24(snap_compare):
    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=_run_before(QUERIES["bar"]))
