"""Snapshots of the query editors (issue 28 items 1-2): the completion list open in the raw-SQL editor, the SUQL
console and the SPARQL console at 140 × 40, the SPARQL one at 80 × 24, and the line naming the QID under the cursor.
Regenerate with ``--snapshot-update``, then look at them."""

from __future__ import annotations

from textual.pilot import Pilot

from tests.tui.support import SIZE, make_app, settle, steady
from tests.tui.test_editor import editor_in, type_text, wait_for_list

SMALL = (80, 24)


async def _completing(pilot: Pilot, tab: str, selector: str, text: str) -> None:
    _, editor = await editor_in(pilot, tab, selector)
    await steady(pilot)  # the tab's layout is final before the editor is scrolled into view (stacked at 80 x 24)
    editor.scroll_visible(animate=False, top=True, immediate=True)  # the same place however the focus scrolled
    await steady(pilot)
    await type_text(pilot, text)
    await wait_for_list(pilot, editor)
    await steady(pilot)  # the stacked columns' scroll and the label line have landed


def test_sql_editor_completing_a_column(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        await _completing(pilot, "restaurants", "#sql-editor", "SELECT na")

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_suql_editor_completing_answer(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        await _completing(pilot, "suql", "#suql-editor", "SELECT * FROM restaurants WHERE ans")

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_sparql_editor_completing_a_property_by_label(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        await _completing(pilot, "kg", "#kg-editor", "SELECT ?x WHERE { ?x wdt:inst")

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_sparql_editor_completing_at_80x24(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        await _completing(pilot, "kg", "#kg-editor", "?x wdt:P31 wd:hum")

    assert snap_compare(make_app(), terminal_size=SMALL, run_before=run_before)


def test_sparql_editor_names_the_qid_under_the_cursor(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        await editor_in(pilot, "kg", "#kg-editor")
        await type_text(pilot, "SELECT ?x WHERE { ?x wdt:P31 wd:Q1000 ")
        await pilot.press("left", "left")
        await settle(pilot)
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)
