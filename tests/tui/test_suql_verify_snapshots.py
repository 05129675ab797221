"""Snapshots of the SUQL tab's rows to verify not yet settled (lazy verification, issue 29.0), at 140 × 40 and at
80 × 24: the pane's title says they may shrink when verified, the "not asked" column lists what lazy left unasked,
and the footer (the pane focused) names v and V.  Regenerate with ``--snapshot-update``, then look at them."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import DataTable

from tests.tui.support import SIZE, make_app, open_tab, settle
from tests.tui.test_suql_verify import GROUPS_AND_SEATING
from tui.suql import SuqlEditor, layout_sql


async def _unsettled(pilot: Pilot) -> None:
    area = await open_tab(pilot, "suql")
    area.query_one("#suql-editor", SuqlEditor).text = layout_sql(GROUPS_AND_SEATING)
    area.run_query()
    await settle(pilot)
    area.query_one("#suql-verify", DataTable).focus()
    await pilot.pause()


def test_rows_to_verify_not_yet_settled(snap_compare):
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=_unsettled)


def test_rows_to_verify_not_yet_settled_80x24(snap_compare):
    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=_unsettled)
