"""Help's key column is as wide as its longest key (bounded): "Enter (in the question box)" fits on one line at
140 columns instead of wrapping over four (issue 28 item 5)."""

from __future__ import annotations

from textual.widgets import Static

from tests.tui.support import drive, make_app, open_tab
from tui.help import HelpScreen


async def _key_cell_height(pilot, text: str) -> int:
    screen = pilot.app.screen
    assert isinstance(screen, HelpScreen)
    for _ in range(100):
        await pilot.pause(0.02)
        cells = [c for c in screen.query(Static) if "cell" in c.classes and str(c.content).strip() == text]
        if cells and cells[0].size.height:
            await pilot.pause(0.05)
            return cells[0].size.height
    raise AssertionError(f"no help cell {text!r}")


@drive
async def test_the_longest_key_fits_on_one_line_at_140_columns_and_wraps_at_most_once_at_80() -> None:
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await open_tab(pilot, "restaurants")
        await pilot.press("f1")
        assert await _key_cell_height(pilot, "Enter (in the question box)") == 1
        await pilot.resize_terminal(80, 24)
        assert await _key_cell_height(pilot, "Enter (in the question box)") <= 2
