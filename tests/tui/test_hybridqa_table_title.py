"""HybridQA's table chooser has a clear title naming its keys, not "Table · [ ]" (issue 28 item 5)."""

from __future__ import annotations

from textual.widgets import Select

from tests.tui.support import drive, make_app, open_tab


@drive
async def test_the_table_chooser_says_what_it_is_and_its_keys() -> None:
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await open_tab(pilot, "hybridqa")
        chooser = app.query_one("#hqa-table", Select)
        title = str(chooser.border_title)
        assert title == "Table · [ previous · ] next"
        assert "[ shows the previous one, ] the next" in str(chooser.tooltip)
        assert chooser.region.width >= len(title) + 4  # room for the whole title on its border
