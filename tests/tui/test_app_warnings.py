"""Engine warnings reach the user as notifications, never as text printed over the screen."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input

from tests.tui.support import SIZE, drive, make_app, settle


@drive
async def test_an_unusable_answer_cache_is_a_notification_and_the_question_is_still_answered(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    app = make_app(cache_enabled=True, cache_dir=blocker / "cache")
    notified: list[tuple[str, str, str]] = []  # every notification, also one that expired before the checks ran
    shown = app.notify

    def record(message, *, title="", severity="information", **kw):
        notified.append((severity, title, str(message)))
        return shown(message, title=title, severity=severity, **kw)

    app.notify = record  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        box = app.query_one("#question", Input)
        box.focus()
        box.value = "Show me a café in Palo Alto"
        await pilot.press("enter")
        await settle(pilot)
        await pilot.pause()
        warnings = [m for severity, title, m in notified if severity == "warning" and title == "Warning"]
        assert len(warnings) == 1, notified
        assert "answer cache" in warnings[0]
        assert "rows" in str(app.query_one("#status").render())
