"""At 80×24 (the panes stacked) the agent's reply stays in view after a turn, not scrolled away to the results
table (issue 28 item 5), turn after turn."""

from __future__ import annotations

from textual.widgets import Input

from tests.tui.support import drive, make_app, open_tab, settle


def _reply_in_view(app) -> bool:
    """The reply's first line of text is drawn on the screen (the widget found there is the reply)."""
    reply = app.query("#dialogue .entry-agent").last()
    region = reply.content_region
    try:
        found, _ = app.screen.get_widget_at(region.x + 1, region.y)
    except Exception:  # nothing there: off the screen
        return False
    return found is reply


@drive
async def test_the_reply_stays_in_view_at_80x24() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        area = await open_tab(pilot, "restaurants")
        questions = (
            "Show me luxury vegan places in Sunnyvale with at least 4.5 stars.",
            "yes",
            "Show me italian restaurants in Palo Alto",
        )
        for question in questions:
            box = app.query_one("#question", Input)
            box.focus()
            box.value = question
            await pilot.press("enter")
            await settle(pilot)
            for _ in range(5):
                await pilot.pause()
            assert _reply_in_view(app), question
            assert not area.is_busy
