"""Lab defects of issue 28 item 5: the size's radio buttons differ without colour (● chosen, ○ not), and an
export's file name carries the experiment's name."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from textual.widgets import Input, RadioButton

from tests.tui.support import drive, make_app, open_tab, settle
from tui.export import ExportScreen
from tui.warning_line import WarningLine


def _marks(app) -> dict[str, str]:
    """Each size button's text as drawn, without its colours."""
    return {size: app.query_one(f"#lab-size-{size}", RadioButton).render().plain for size in ("small", "full")}


@drive
async def test_the_chosen_size_is_marked_without_colour_and_an_export_is_named_after_the_experiment(
    tmp_path: Path,
) -> None:
    app = make_app()
    app.wall_clock = lambda: datetime(2026, 12, 1, 19, 4, 12)
    app.export_dir = tmp_path
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        area = await open_tab(pilot, "lab")
        marks = _marks(app)
        assert area.run_size == "full" and "●" in marks["full"] and "○" in marks["small"] and "●" not in marks["small"]
        await pilot.press("s")
        await pilot.pause()
        marks = _marks(app)
        assert area.run_size == "small" and "●" in marks["small"] and "○" in marks["full"]

        area.select("l6-classify")
        await pilot.pause()
        await pilot.press("ctrl+j")
        await settle(pilot)
        app.query_one("#lab-table").focus()
        await pilot.press("f9")
        await pilot.pause()
        assert isinstance(app.screen, ExportScreen)
        path = app.screen.query_one("#export-path", Input).value
        assert Path(path).name == "lab-l6-classify-small-20261201-190412.csv"
        assert not app.query_one(WarningLine).display  # no engine warned: no warning line
