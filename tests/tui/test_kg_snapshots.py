"""Snapshots of the Knowledge-graph tab at 140 × 40 (regenerate with ``--snapshot-update``, then look at them).

Deterministic: sim backend without cache or latency, a clock stuck at 0.0 (query times read 0 ms),
no animations, steady cursors, workers finished before capture.  The stepper runs SPINACH on
``ROLLBACK_QUESTION`` (c1_3): twelve steps, a repeat rolled back at step 6 and a premature stop rolled
back at step 8, the answer right (row-F1 1.00).
"""

from __future__ import annotations

from textual.pilot import Pilot

from tests.tui.support import SIZE, make_app, settle
from tests.tui.test_kg_app import ROLLBACK_QUESTION, open_tab


def test_console_with_rows(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        await open_tab(pilot, "console")
        await pilot.press("ctrl+j")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_console_with_a_syntax_error(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        area = await open_tab(pilot, "console")
        area.load_example(area.example("missing brace"))
        await pilot.press("ctrl+j")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_console_on_a_users_rdf_file(snap_compare):
    """--rdf: the examples for any graph, the classes by instance count run, IRIs written with the file's prefixes."""
    from tests.tui.test_kg_app import FIXTURES

    async def run_before(pilot: Pilot) -> None:
        await open_tab(pilot, "console")
        await pilot.press("ctrl+j")
        await settle(pilot)

    app = make_app(kg_rdf=(FIXTURES / "people.ttl",))
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_entity_page(snap_compare):
    """Ilse Whitlock: her award's year is a P585 qualifier (quirk 5), shown under the value."""

    async def run_before(pilot: Pilot) -> None:
        await open_tab(pilot, "browser")
        await pilot.press(*"Whitlock")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


async def _run(pilot: Pilot):
    area = await open_tab(pilot, "stepper")
    area.run_question(ROLLBACK_QUESTION)
    await settle(pilot)
    return area


def test_stepper_at_the_first_step(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        await _run(pilot)
        await pilot.press("home")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_stepper_at_a_rolled_back_step(snap_compare):
    """Step 8, a stop whose query returned no rows: rolled back, struck through; step 6 (a repeat) is struck too."""

    async def run_before(pilot: Pilot) -> None:
        area = await _run(pilot)
        await pilot.press("home", *["right"] * 7)
        await pilot.pause()
        assert area.current_step is not None and area.current_step.rolled_back

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_stepper_at_the_last_step(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        await _run(pilot)
        await pilot.press("home", "end")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)
