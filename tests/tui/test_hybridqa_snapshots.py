"""Snapshots of the HybridQA tab at 140 × 40 (regenerate with ``--snapshot-update``, then look at them).

Deterministic: sim backend without cache or latency, a clock stuck at 0.0 (latencies and
elapsed read 0), no animations, steady cursors, workers finished before capture.
"""

from __future__ import annotations

from textual.pilot import Pilot

from tests.tui.support import SIZE, make_app, settle
from tests.tui.test_hybridqa_app import COMPARISON, open_tab


def test_generated_question_before_running(snap_compare):
    """Type V chosen: its type and gold in the card; the rows, a linked cell's passage below."""

    async def run_before(pilot: Pilot) -> None:
        area = await open_tab(pilot)
        area.choose_question(COMPARISON)
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_generated_question_after_running(snap_compare):
    """The same question run: the SUQL, the plan, the passages read (two by the fallback), EM/F1, judged."""

    async def run_before(pilot: Pilot) -> None:
        area = await open_tab(pilot)
        area.choose_question(COMPARISON)
        await pilot.press("ctrl+j")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_real_table_loaded(snap_compare):
    """A real HybridQA table with the sim backend: its rows and a passage, and the notice."""

    async def run_before(pilot: Pilot) -> None:
        await open_tab(pilot)
        await pilot.press("s")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)
