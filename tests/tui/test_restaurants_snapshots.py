"""Snapshots of the Restaurants tab at 140 × 40 (regenerate with ``--snapshot-update``, then look at them).

Deterministic: sim backend without cache or latency, a clock stuck at 0.0 (every
latency reads "0 ms"), no animations, steady cursors, workers finished before capture.
"""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import Input

from tests.tui.support import SIZE, make_app, settle
from tui.widgets import SqlEditor


async def _ask(pilot: Pilot, question: str) -> None:
    await settle(pilot)
    box = pilot.app.query_one("#question", Input)
    box.focus()
    box.value = question
    await pilot.press("enter")
    await settle(pilot)


def test_idle(snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=settle)


def test_after_cafe_question(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        await _ask(pilot, "Show me a café in Palo Alto")

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_after_question_without_results(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        await _ask(pilot, "Show me luxury vegan places in Sunnyvale with at least 4.5 stars.")

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_after_sql_error(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        editor = pilot.app.query_one("#sql-editor", SqlEditor)
        editor.text = "SELECT nme FROM restaurants"
        editor.focus()
        await pilot.press("ctrl+j")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_help_screen(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        await pilot.press("f1")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)
