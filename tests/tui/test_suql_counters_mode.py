"""After F7 the SUQL counters are labelled as the last run's (its mode), not shown as the new mode's (issue 28
item 5); back in the run's mode they are that mode's again."""

from __future__ import annotations

from textual.widgets import Static

from tests.tui.support import SIZE, drive, make_app, settle
from tests.tui.test_suql_app import FAMILY, open_tab


def _line(app) -> str:
    return str(app.query_one("#suql-counters", Static).render())


@drive
async def test_f7_labels_the_counts_as_the_last_runs() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot)
        area.load_example(area.example(FAMILY))
        assert area.mode == "E"
        await pilot.press("ctrl+j")
        await settle(pilot)
        ran = dict(area._counts)
        assert ran["answer"] > 0 and "last run" not in _line(app)
        await pilot.press("f7")  # E → F
        await pilot.pause()
        assert area.mode == "F"
        assert _line(app).startswith("last run mode E") and f"answer() {ran['answer']:,}" in _line(app)
        await pilot.press("shift+f7")  # back to E: the counts are that mode's again
        await pilot.pause()
        assert "last run" not in _line(app)
