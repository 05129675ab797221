"""Snapshots of every tab at 80 × 24, the smallest terminal the app supports (issue 15 part 2).

The 140 × 40 snapshots of each tab are in the tab's own ``test_*_snapshots.py``.  Each state here is the
one the README screenshot shows, after its run: at 80 × 24 the tab's columns stack (the -narrow and
-short breakpoints) and the results the status line speaks of are scrolled into view.
Regenerate with ``--snapshot-update``, then look at them.
"""

from __future__ import annotations

from textual.pilot import Pilot

from tests.tui.support import make_app, open_tab, settle
from tui.screenshots import HYBRIDQA_QUESTION, KG_QUESTION, LAB_EXPERIMENT, RESTAURANTS_QUESTION, SUQL_EXAMPLE

SMALL = (80, 24)


def test_restaurants_after_a_question(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        area = await open_tab(pilot, "restaurants")
        area.ask(RESTAURANTS_QUESTION)
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=SMALL, run_before=run_before)


def test_suql_after_a_query(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        area = await open_tab(pilot, "suql")
        area.load_example(area.example(SUQL_EXAMPLE))
        area.run_query()
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=SMALL, run_before=run_before)


def test_hybridqa_after_a_question(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        area = await open_tab(pilot, "hybridqa")
        area.choose_question(HYBRIDQA_QUESTION)
        area.run_question()
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=SMALL, run_before=run_before)


def test_kg_stepper_after_a_run(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        area = await open_tab(pilot, "kg")
        area.show_view("stepper")
        area.run_question(KG_QUESTION)
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=SMALL, run_before=run_before)


def test_lab_after_a_run(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        area = await open_tab(pilot, "lab")
        area.run_experiment(LAB_EXPERIMENT)  # at the size the tab opens with (full)
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=SMALL, run_before=run_before)
