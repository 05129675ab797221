"""The stepper replays SPINACH's own run logs: the logged rows, not a re-run; every trajectory listed and searchable."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Input, OptionList, Static

from tests.tui.support import SIZE, drive, make_app, settle
from tests.tui.support import open_tab as show_tab
from tui.app import CS224VApp
from tui.kg import KgArea
from tui.kg.stepper import TrajectoryPicker

LOG = Path(__file__).parents[1] / "engines" / "spinach" / "data" / "qald10_head.log"
"""The head of SPINACH's real QALD-10 run log: three states (Riemann, a budget run, the Witcher)."""


async def open_stepper(pilot) -> KgArea:
    area = await show_tab(pilot, "kg")
    assert isinstance(area, KgArea)
    area.show_view("stepper")
    await pilot.pause()
    return area


def _text(app: CS224VApp, selector: str) -> str:
    return str(app.query_one(selector, Static).render())


def _screen_text(app: CS224VApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


@drive
async def test_stepping_through_a_replayed_spinach_log(tmp_path: Path) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_stepper(pilot)
        assert not area.pick_trajectory()  # nothing loaded: nothing to list
        # a malformed log says what is wrong
        bad = tmp_path / "bad.log"
        bad.write_text('[{"question": "q", "actions": [{"action_name": "fly"}]}]', encoding="utf-8")
        area.load_trajectory(str(bad))
        await settle(pilot)
        assert app.query_one("#kg-stepper-error", Static).display
        assert "Action 1 of state 1 has an unknown action_name 'fly'" in _text(app, "#kg-stepper-error")

        box = app.query_one("#kg-load", Input)
        box.focus()
        box.value = str(LOG)
        await pilot.press("enter")
        await settle(pilot)
        assert len(area.steps) == 4 and area.position == 0
        assert "After whom is the Riemannian geometry named?" in _text(app, "#kg-run-head")
        assert "1 of 3" in _text(app, "#kg-run-head") and "t lists them" in _text(app, "#kg-status")
        assert "policy spinach-log (gpt-4o)" in _text(app, "#kg-run-head")

        await pilot.press("right", "right")  # step 3: the query, with the rows SPINACH logged on Wikidata
        assert area.current_step.action == "execute_sparql"
        shown = _text(app, "#kg-step-observation")
        assert "Logged result — 1 row, status ok (SPINACH ran it on Wikidata; not re-run here)" in shown
        assert "person = Q42299" in shown and "wd:Q761383[Riemannian geometry]" in shown
        assert "rows" in _text(app, "#kg-step-feedback") and "1 row" in _text(app, "#kg-step-feedback")

        # e: the query goes to the editor, but nothing runs it on this graph (it was meant for Wikidata)
        ran: list[str] = []
        area._query_work = ran.append  # a query run on this graph would come through here
        await pilot.press("e")
        await settle(pilot)
        assert area.view == "console" and ran == []
        assert app.query_one("#kg-editor").text == area.current_step.argument
        assert "logged, not run" in str(app.query_one("#kg-editor").border_subtitle)
        area.show_view("stepper")
        await pilot.pause()
        app.query_one("#kg-step").focus()

        await pilot.press("end")  # the answer: the final query's logged rows
        head = _text(app, "#kg-answer-head")
        assert "1 row" in head and "not re-run here" in head
        assert area._scored.trajectory.answer[0]["person"]["value"].endswith("/Q42299")

        await pilot.press("t")  # every trajectory, searchable
        await pilot.pause()
        assert isinstance(app.screen, TrajectoryPicker)
        assert app.screen.query_one("#kg-picker-list", OptionList).option_count == 3
        await pilot.press(*"witcher")
        await pilot.pause()
        assert app.screen.query_one("#kg-picker-list", OptionList).option_count == 1
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, TrajectoryPicker)
        assert "the witcher" in _text(app, "#kg-run-head") and "3 of 3" in _text(app, "#kg-run-head")
        assert len(area.steps) == 7 and area.position == 0
        await pilot.press("end")
        assert "1 row" in _text(app, "#kg-answer-head")

        # the budget run: no final query, and nothing of this graph passed off as its answer
        await pilot.press("t")
        await pilot.pause()
        await pilot.press(*"2", "enter")
        await settle(pilot)
        assert len(area.steps) == 15
        await pilot.press("end")
        # SPINACH logged no final query for it: "none logged", not an answer with no rows
        assert "none logged" in _text(app, "#kg-answer-head") and "no rows" not in _text(app, "#kg-answer-head")


@drive
async def test_every_trajectory_of_a_long_log_is_listed_and_found(tmp_path: Path) -> None:
    state = json.loads(LOG.read_text(encoding="utf-8"))[0]
    states = [{**state, "question": f"Question number {n}: {state['question']}"} for n in range(1, 61)]
    path = tmp_path / "long.log"
    path.write_text(json.dumps(states), encoding="utf-8")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_stepper(pilot)
        area.load_trajectory(str(path))
        await settle(pilot)
        titles = [c.title for c in app.palette_commands()]
        assert "Knowledge graph: list and search the 60 trajectories of long.log" in titles
        assert not any("show loaded trajectory" in t for t in titles)  # not 20 palette entries
        assert area.pick_trajectory()
        await pilot.pause()
        listed = app.screen.query_one("#kg-picker-list", OptionList)
        assert listed.option_count == 60 and "60 of 60 match" in str(listed.border_subtitle)
        await pilot.press(*"number 47:")
        await pilot.pause()
        assert listed.option_count == 1
        await pilot.press("enter")
        await settle(pilot)
        assert "Question number 47:" in _text(app, "#kg-run-head") and "47 of 60" in _text(app, "#kg-run-head")
        await pilot.press("t")
        await pilot.pause()
        await pilot.press("escape")  # Esc closes the list; the trajectory shown stays
        await pilot.pause()
        assert not isinstance(app.screen, TrajectoryPicker) and "47 of 60" in _text(app, "#kg-run-head")
