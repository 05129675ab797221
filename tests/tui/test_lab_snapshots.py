"""Snapshots of the Lab tab at 140 × 40 (regenerate with ``--snapshot-update``, then look at them).

Deterministic: sim backend without cache or latency, no animations, steady cursors, no durations on
screen, workers finished before capture; the charts are plotext drawings of fixed data at a fixed size.
"""

from __future__ import annotations

from textual.pilot import Pilot

from tests.tui.support import SIZE, make_app, open_tab, settle
from tui.lab import LabArea


async def _run(pilot: Pilot, name: str | None = None) -> None:
    await settle(pilot)
    await open_tab(pilot, "lab")
    area = pilot.app.area("lab")
    assert isinstance(area, LabArea)
    if name is None:
        return
    area.set_size("small")
    area.select(name)
    await pilot.pause()
    await pilot.press("enter")
    await settle(pilot)


def test_idle(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        await _run(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_after_small_classify(snap_compare):
    """A table, its notes and a bar chart."""

    async def run_before(pilot: Pilot) -> None:
        await _run(pilot, "l6-classify")

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_after_small_threshold_sweep(snap_compare):
    """A line chart (the similarity threshold of exercise 2)."""

    async def run_before(pilot: Pilot) -> None:
        await _run(pilot, "l6-classify-threshold")

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_table_without_chart(snap_compare):
    async def run_before(pilot: Pilot) -> None:
        await _run(pilot, "l6-eval-ties")

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)
