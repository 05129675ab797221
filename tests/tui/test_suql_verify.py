"""The SUQL tab's rows to verify, settled on demand (issue 29.0): the pane says they are not yet settled, lists
what is known, and v / V in it ask the remaining conditions, the calls streaming in as verification calls."""

from __future__ import annotations

from textual.widgets import DataTable, Static

from tests.tui.support import SIZE, drive, make_app, open_tab, settle
from tui.suql import SuqlArea, SuqlCallsTable

GROUPS_AND_SEATING = (
    "SELECT _id, name FROM restaurants WHERE location = 'Sunnyvale' "
    "AND answer(reviews, 'is it good for groups?') = 'Yes' "
    "AND answer(reviews, 'does it have outdoor seating?') = 'Yes'"
)


def _column(table: DataTable, name: str) -> list[str]:
    labels = [column.label.plain for column in table.ordered_columns]
    index = labels.index(name)
    full = getattr(table, "full_cell", None)  # a results table cuts long cells to fit: read them whole
    return [
        str(full(r, index) if callable(full) and full(r, index) is not None else table.get_row_at(r)[index])
        for r in range(table.row_count)
    ]


@drive
async def test_v_settles_the_highlighted_row_and_shift_v_every_row() -> None:
    app = make_app()  # the settings' default: lazy verification
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "suql")
        assert isinstance(area, SuqlArea)
        assert area.run_query(GROUPS_AND_SEATING)
        await settle(pilot)
        lazy = area._result
        assert lazy is not None and not lazy.settled and lazy.unsettled > 1
        verify = app.query_one("#suql-verify", DataTable)
        assert str(verify.border_title) == "To verify · not yet settled"
        assert "lazy: may shrink when verified" in str(verify.border_subtitle)
        assert verify.row_count == len(lazy.to_verify)
        not_asked = _column(verify, "not asked")
        assert all(n in ("is it good for groups?", "does it have outdoor seating?") for n in not_asked)
        assert "not yet settled" in str(app.query_one("#suql-status", Static).render())
        calls = app.query_one(SuqlCallsTable)
        before = calls.row_count

        verify.focus()
        verify.move_cursor(row=0)
        await pilot.press("enter")
        await settle(pilot)
        one = area._result
        assert one is not None and one.unsettled == lazy.unsettled - 1
        assert one.stats.verification_calls == one.stats.answer_calls == 1
        assert calls.row_count == before + 1  # the one call streamed in, marked as a verification call
        assert _column(calls, "row")[-1].startswith("verify · ")
        assert "verification 1" in str(app.query_one("#suql-counters", Static).render())

        await pilot.press("V")
        await settle(pilot)
        settled = area._result
        assert settled is not None and settled.settled and settled.verify == "eager"
        assert str(verify.border_title) == "To verify · condition unknown"
        assert "not asked" not in [c.label.plain for c in verify.ordered_columns]
        assert verify.row_count == len(settled.to_verify) <= len(lazy.to_verify)
        eager = area._runner.session.engine.run(GROUPS_AND_SEATING, mode="E", verify="eager")
        assert settled.rows == eager.rows and settled.to_verify == eager.to_verify
        await pilot.press("V")  # nothing left to settle: said so, no call
        await settle(pilot)
        assert area._result is settled
        assert "nothing to verify" in str(app.query_one("#suql-status", Static).render())
