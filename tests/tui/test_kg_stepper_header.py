"""Enter on the stepper's question list before a question is highlighted, or on a group's header, highlights the
group's first question and the status line says Enter runs it (issue 28 item 5: it did nothing, said nothing)."""

from __future__ import annotations

from textual.widgets import OptionList, Static

from tests.tui.support import drive, make_app
from tests.tui.test_kg_app import open_tab


@drive
async def test_enter_on_the_list_header_highlights_the_first_question_and_says_enter_runs_it() -> None:
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        area = await open_tab(pilot, "stepper")
        questions = app.query_one("#kg-questions", OptionList)
        questions.focus()
        await pilot.pause()
        assert questions.highlighted is None and questions.get_option_at_index(0).disabled  # the header
        await pilot.press("enter")
        await pilot.pause()
        first = next(i for i in range(questions.option_count) if not questions.get_option_at_index(i).disabled)
        assert questions.highlighted == first
        status = str(app.query_one("#kg-status", Static).render())
        assert status.endswith("Enter runs it") and questions.get_option_at_index(first).id in status
        assert not area.is_running  # nothing ran yet: the first Enter only showed what the next one does
        await pilot.press("enter")
        await pilot.pause()
        assert "running the agent on" in str(app.query_one("#kg-status", Static).render()) or area.steps
