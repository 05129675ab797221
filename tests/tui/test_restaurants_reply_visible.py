"""At 80×24 (the panes stacked) the agent's reply stays in view after a turn, not scrolled away to the results
table, turn after turn; and the status line is cut at a phrase's end (issue 28 item 5)."""

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
            for _ in range(100):  # the scroll lands a few frames after the turn (later on a busy machine)
                if _reply_in_view(app):
                    break
                await pilot.pause(0.02)
            assert _reply_in_view(app), question
            assert not area.is_busy

        # the status line is cut at a phrase's end at 80 columns, the whole of it in its tooltip
        long = "done — 108 rows · the query ran in 0.01 s · tokens (estimated) ≈12,345 in · ≈678 out · cost none"
        area._set_status(long, "done")
        await pilot.pause()
        status = app.query_one("#status")
        shown = str(status.render())
        assert shown.endswith(" …") and long.startswith(shown[:-2]) and len(shown) <= status.content_region.width
        assert str(status.tooltip).startswith(long)  # the run's tokens follow it
