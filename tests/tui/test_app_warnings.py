"""Engine warnings reach the user on the warning line under the header (issue 28 item 5: not a toast over the
content), readable in full in its tooltip and in F1's help, never as text printed over the screen."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input

from tests.tui.support import SIZE, drive, make_app, settle
from tui.help import HelpScreen
from tui.warning_line import WarningLine


@drive
async def test_an_unusable_answer_cache_is_on_the_warning_line_and_the_question_is_still_answered(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    app = make_app(cache_enabled=True, cache_dir=blocker / "cache")
    notified: list[tuple[str, str, str]] = []  # every toast, also one that expired before the checks ran
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
        assert not [m for severity, _, m in notified if severity == "warning"], notified  # no toast
        line = app.query_one(WarningLine)
        assert line.display and line.size.height == 1 and len(line.messages) == 1
        assert "answer cache" in line.messages[0]
        drawn = str(line.render())
        assert drawn.startswith("⚠ ") and "F1 shows it in full" in drawn and len(drawn) <= line.size.width
        assert "answer cache" in str(line.tooltip)
        assert "rows" in str(app.query_one("#status").render())
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen) and "## Warnings" in app.screen.area_help
        assert line.messages[0] in app.screen.area_help
