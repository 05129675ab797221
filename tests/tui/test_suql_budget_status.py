"""The SUQL tab's status line says when a run stopped at the per-query budget of LLM calls."""

from __future__ import annotations

from textual.widgets import DataTable, Static

from tests.tui.support import SIZE, drive, make_app, open_tab, settle
from tui.suql import SuqlArea


@drive
async def test_the_status_line_shows_the_budget_message() -> None:
    app = make_app(suql_call_budget=3)
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "suql")
        assert isinstance(area, SuqlArea)
        area.load_example(area.example("family-friendly"))
        app.query_one("#suql-results", DataTable).focus()
        await pilot.press("f7", "f7", "f7")  # E → F → G → A: answer() on every row, far past 3 calls
        assert area.mode == "A"
        await pilot.press("ctrl+j")
        await settle(pilot)
        status = str(app.query_one("#suql-status", Static).render())
        assert status.startswith("done — ")
        assert (
            "Stopped after 3 LLM calls (the per-query budget, CS224V_SUQL_CALL_BUDGET): the results are partial."
            in status
        )
        assert area._counts["answer"] == 3
