"""Snapshots of the SUQL tab at 140 × 40 (regenerate with ``--snapshot-update``, then look at them).

Deterministic: sim backend without cache or latency (so one call at a time), a
clock stuck at 0.0 (latencies, elapsed and wall times read 0), no animations,
steady cursors, workers finished before capture.  The mid-stream screen holds the
engine at a gate after a fixed number of answer() calls (see ``EmitGate``); the
app's closing cancels the held run.
"""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import OptionList

from tests.tui.support import SIZE, make_app, settle, steady
from tests.tui.test_suql_app import FAMILY, ROMANTIC, EmitGate, open_tab
from tui.suql import SuqlEditor


def test_idle(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        await open_tab(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_mid_stream(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        area = await open_tab(pilot)
        area.load_example(area.example(ROMANTIC))
        gate = EmitGate(area, after=4).install()
        area.run_query()
        await gate.wait(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_finished(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        area = await open_tab(pilot)
        area.load_example(area.example(ROMANTIC))
        await pilot.press("ctrl+j")
        await steady(pilot)  # the calls table and the results drawn in full

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_compare_modes(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        area = await open_tab(pilot)
        area.load_example(area.example(FAMILY))
        await pilot.press("ctrl+o")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_error_unservable_paper_query(snap_compare):
    """The SUQL paper's query #8 asks for a geographic distance: refused, with the engine's reason."""

    async def run_before(pilot: Pilot) -> None:
        area = await open_tab(pilot)
        examples = pilot.app.query_one("#suql-examples", OptionList)
        target = area.example("SUQL paper #8")
        examples.focus()
        examples.highlighted = examples.get_option_index(area.option_id(target))
        await pilot.press("enter")
        pilot.app.query_one("#suql-editor", SuqlEditor).focus()
        await pilot.press("ctrl+j")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)
