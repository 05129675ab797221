"""The app marks a question part of which the query does not use beside the read-back (--db)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from tests.engines.data.conftest import hotel_rows, write_csv
from tests.tui.support import SIZE, drive, make_app, open_tab, settle


@drive
async def test_the_read_back_is_marked_with_what_was_not_understood(tmp_path: Path) -> None:
    app = make_app(db=str(write_csv(tmp_path / "hotels.csv", hotel_rows())))
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "restaurants")
        area.ask("how many hotels have a sauna?")
        await settle(pilot)
        shown = str(app.query_one("#readback", Static).content)
        assert shown == "I counted hotels.  ⚠ not understood: 'sauna'"
        area.ask("how many hotels in Rome?")
        await settle(pilot)
        assert str(app.query_one("#readback", Static).content) == "I counted hotels whose city is 'Rome'."
