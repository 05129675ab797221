"""Snapshots of the warning line under the header (issue 28 item 5): an answer cache that cannot be opened
(its folder would be inside /dev/null) warns on one line, the tab's content below it uncovered; at 140 × 40 and at
80 × 24, where the warning is cut at a phrase's end. Regenerate with ``--snapshot-update``, then look at them."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from tests.tui.support import make_app, open_tab, settle
from tui.screenshots import RESTAURANTS_QUESTION


@pytest.mark.parametrize("size", [(140, 40), (80, 24)], ids=["140x40", "80x24"])
def test_a_cache_warning_on_the_warning_line(snap_compare, size):
    async def run_before(pilot: Pilot) -> None:
        area = await open_tab(pilot, "restaurants")
        area.ask(RESTAURANTS_QUESTION)
        await settle(pilot)

    # a folder per size: the cache warns once per folder and process
    app = make_app(cache_enabled=True, cache_dir=Path(f"/dev/null/cs224v-cache-{size[0]}"))
    assert snap_compare(app, terminal_size=size, run_before=run_before)
