"""The Restaurants tab driven headless through the pilot: behaviour, not pixels."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Static, TabbedContent

from engines.sql.dialogue import COURSE_DIALOGUE
from tests.tui.support import SIZE, drive, make_app, settle
from tui.app import CS224VApp
from tui.help import HelpScreen
from tui.restaurants import SAMPLE_DIALOGUE, RestaurantsArea
from tui.widgets import CallsTable, ResultsTable, SqlEditor


def _area(app: CS224VApp) -> RestaurantsArea:
    area = app.area("restaurants")
    assert isinstance(area, RestaurantsArea)
    return area


def _column(table: DataTable, name: str) -> list[str]:
    labels = [column.label.plain for column in table.ordered_columns]
    index = labels.index(name)
    return [str(table.get_row_at(r)[index]) for r in range(table.row_count)]


def _text(app: CS224VApp, selector: str) -> str:
    widget = app.query_one(selector, Static)
    return str(widget.render())


async def _ask(pilot: Pilot, question: str) -> None:
    box = pilot.app.query_one("#question", Input)
    box.focus()
    box.value = question
    await pilot.press("enter")


@drive
async def test_cafe_question_shows_only_palo_alto_rows() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _ask(pilot, "Show me a café in Palo Alto")
        await settle(pilot)
        results = app.query_one(ResultsTable)
        assert results.row_count > 0
        assert set(_column(results, "location")) == {"Palo Alto"}
        assert all("cafe" in c or "coffee & tea" in c for c in _column(results, "cuisines"))
        assert results.border_subtitle == f"{results.row_count} rows"
        assert "'cafe' = ANY(cuisines)" in _text(app, "#sql-rewritten")  # 'café' as said, classified
        assert "needs the database" in _text(app, "#route")
        calls = app.query_one(CallsTable)
        # 'café' folds to the enum value 'cafe': an exact match, so classify() asks no LLM
        assert [str(calls.get_row_at(r)[1]) for r in range(calls.row_count)] == ["route", "parse", "respond"]
        latency = [c.key.value for c in calls.ordered_columns].index("latency")
        assert {str(calls.get_row_at(r)[latency]) for r in range(calls.row_count)} == {"0 ms"}
        assert _text(app, "#status").startswith("done")
        assert app.query_one("#question", Input).value == ""


@drive
async def test_question_without_results_shows_zero_rows_and_the_reply() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _ask(pilot, "Show me luxury vegan places in Sunnyvale with at least 4.5 stars.")
        await settle(pilot)
        results = app.query_one(ResultsTable)
        assert results.row_count == 0
        assert results.border_subtitle == "0 rows"
        replies = [str(e.render()) for e in app.query(".entry-agent").results(Static)]
        assert "no results" in replies[-1]


@drive
async def test_turn_without_database_says_so() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _ask(pilot, "What is dim sum?")
        await settle(pilot)
        assert "no database needed" in _text(app, "#route")
        assert app.query_one(ResultsTable).border_subtitle == "no query"
        assert "without the database" in _text(app, "#status")


@drive
async def test_refused_statement_is_shown_and_the_editor_keeps_its_text() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        editor = app.query_one("#sql-editor", SqlEditor)
        editor.text = "DROP TABLE restaurants"
        editor.focus()
        await pilot.press("ctrl+j")
        await settle(pilot)
        error = app.query_one("#error", Static)
        assert error.display
        assert "Refused" in str(error.border_title)
        assert "DROP TABLE statements are refused" in str(error.render())
        assert editor.text == "DROP TABLE restaurants"
        assert _text(app, "#status") == "refused"
        # the table is still there: a correct query runs afterwards
        editor.text = "SELECT name FROM restaurants WHERE location = 'Palo Alto' LIMIT 3"
        await pilot.press("ctrl+j")
        await settle(pilot)
        assert not error.display
        assert app.query_one(ResultsTable).row_count == 3


@drive
async def test_sql_error_reports_line_and_column() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        editor = app.query_one("#sql-editor", SqlEditor)
        editor.text = "SELECT nme FROM restaurants"
        editor.focus()
        await pilot.press("ctrl+enter")
        await settle(pilot)
        assert "line 1, column 8" in str(app.query_one("#error", Static).border_title)
        assert editor.text == "SELECT nme FROM restaurants"
        assert editor.cursor_location == (0, 7)


@drive
async def test_escape_cancels_a_running_turn_and_the_app_lives_on() -> None:
    app = make_app(sim_latency_s=2.0)  # long calls: Esc interrupts the wait at once
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _ask(pilot, "Show me a café in Palo Alto")
        await pilot.pause(0.1)
        assert _area(app).is_busy
        await pilot.press("escape")
        await settle(pilot)
        status = _text(app, "#status")
        # a call that finished before Esc (on a loaded machine, the classifier's) is counted in the run's usage
        usage = _area(app).run_usage
        assert status == (f"stopped · {usage.line()}" if usage.calls else "stopped")
        assert not _area(app).is_busy
        assert app.is_running
        assert app.query(".entry-note")
        # nothing is lost: the question is back in the box, and the next turn runs
        assert app.query_one("#question", Input).value == "Show me a café in Palo Alto"
        assert _area(app).ask("What is dim sum?")
        await settle(pilot)
        assert _text(app, "#status").startswith("done")


@drive
async def test_claude_without_a_key_is_refused_and_sim_stays(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    app = make_app()
    notices: list[dict[str, Any]] = []
    async with app.run_test(size=SIZE) as pilot:
        monkeypatch.setattr(app, "notify", lambda message, **kw: notices.append({"message": message, **kw}))
        await settle(pilot)
        app.use_backend("claude")
        await settle(pilot)
        assert app.settings.backend == "sim"
        assert app.sub_title == "sim · seed 224"
        errors = [n for n in notices if n.get("severity") == "error"]
        assert errors and "ANTHROPIC_API_KEY" in errors[0]["message"]
        # the sim session still answers
        await _ask(pilot, "Show me a café in Palo Alto")
        await settle(pilot)
        assert app.query_one(ResultsTable).row_count > 0


@drive
async def test_tab_keys_are_f_keys_that_work_while_typing_and_are_never_typed() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        tabs = app.query_one("#areas", TabbedContent)
        question = app.query_one("#question", Input)
        question.focus()
        await pilot.press("1", "2")  # digits are text, not tab keys
        assert tabs.active == "restaurants" and question.value == "12"
        await pilot.press("f6")  # the Lab, from inside the question box
        await settle(pilot)
        assert tabs.active == "lab"
        assert question.value == "12"
        await pilot.press("f2")  # back: the cursor returns to the question box
        await settle(pilot)
        assert tabs.active == "restaurants"
        assert app.focused is question and question.value == "12"
        app.query_one(ResultsTable).focus()
        await pilot.press("f2")  # the tab's own key jumps to its question box
        assert app.focused is question
        await pilot.press("alt+1")  # Alt+digit is no key of the app any more
        assert tabs.active == "restaurants"


@drive
async def test_help_opens_with_question_mark_and_f1_and_closes_with_escape() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.query_one(ResultsTable).focus()
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        app.query_one("#question", Input).focus()
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("f1")
        assert not isinstance(app.screen, HelpScreen)
        assert app.query_one("#question", Input).value == ""


@drive
async def test_palette_commands_cover_the_area_and_the_backend() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        titles = [c.title for c in app.palette_commands()]
        assert "LLM: use sim (current)" in titles and "LLM: use claude" in titles
        assert f"Restaurants: ask sample turn 1/8 — {SAMPLE_DIALOGUE[0]}" in titles
        assert "Restaurants: clear the dialogue" in titles
        assert "Restaurants: focus the raw SQL editor" in titles
        assert {f"Restaurants: classify method {m}" for m in ("exact", "similarity", "retrieve_llm")} <= set(titles)
        assert "Restaurants: classify method llm_all (current)" in titles

        # two sample turns, one at a time: the second refines the first
        area = _area(app)
        area.ask_next_sample_turn()
        await settle(pilot)
        area.ask_next_sample_turn()
        await settle(pilot)
        assert set(_column(app.query_one(ResultsTable), "location")) == {"Menlo Park"}
        assert all("italian" in c for c in _column(app.query_one(ResultsTable), "cuisines"))
        assert any(t.startswith("Restaurants: ask sample turn 3/8") for t in (c.title for c in app.palette_commands()))

        area.set_classify_method("exact")
        assert area.settings.classify_method == "exact"
        area.clear_dialogue()
        await pilot.pause()
        assert not app.query(".entry")
        await _ask(pilot, "Show me a café in Palo Alto")
        await settle(pilot)
        assert "exact" in _text(app, "#sql-rewritten")


def test_importing_the_app_loads_no_engine_heavyweights() -> None:
    code = (
        "import sys\n"
        "import tui.app\n"
        "heavy = sorted({'duckdb', 'sqlglot', 'anthropic', 'engines.compose'} & set(sys.modules))\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@drive
async def test_a_failing_agent_query_is_shown_in_the_tab() -> None:
    from engines.events import QueryFailed, QueryParsed, TurnStarted

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        area = _area(app)
        for event in (
            TurnStarted("Show me nothing", 1),
            QueryParsed("SELECT nme FROM restaurants"),
            QueryFailed("SELECT nme FROM restaurants", 'Referenced column "nme" not found'),
        ):
            area._emit(event)  # as the agent's worker hands them on: each posts its typed message
        await pilot.pause()
        error = app.query_one("#error", Static)
        assert error.display and "nme" in str(error.render())
        assert "failed before classify()" in _text(app, "#sql-rewritten")
        assert app.query_one(ResultsTable).border_subtitle == "the query failed"


@drive
async def test_an_unexpected_worker_error_is_shown_and_the_app_lives_on(monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        area = _area(app)

        def broken(utterance: str, cancel: object) -> None:
            raise RuntimeError("the engine broke")

        monkeypatch.setattr(area, "_ask_work", broken)
        await _ask(pilot, "Show me a café in Palo Alto")
        await settle(pilot)
        assert app.is_running
        assert "Unexpected RuntimeError: the engine broke" in str(app.query_one("#error", Static).render())
        assert _text(app, "#status").startswith("error")
        assert app.query_one("#question", Input).value == "Show me a café in Palo Alto"
        monkeypatch.undo()
        assert area.ask("Thanks!")
        await settle(pilot)
        assert _text(app, "#status").startswith("done")


@drive
async def test_switching_backend_rebuilds_the_session_and_keeps_the_dialogue() -> None:
    from pydantic import SecretStr

    app = make_app()
    app.settings = app.settings.model_copy(update={"anthropic_api_key": SecretStr("sk-test-not-used")})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _ask(pilot, "Show me a café in Palo Alto")
        await settle(pilot)
        area = _area(app)
        history = list(area._session.agent.history)
        app.use_backend("claude")  # builds the client only: no request is sent
        await settle(pilot)
        # the backend, then the session's tokens and cost (the turn's calls, kept across the switch)
        assert app.sub_title.startswith(f"claude · {app.settings.claude_model} · session ≈")
        assert area.settings.backend == "claude"
        assert area._session.llm.backend.name == "claude"
        assert area._session.agent.history == history
        app.use_backend("sim")
        await settle(pilot)
        assert app.sub_title.startswith("sim · seed 224 · session ≈")
        assert area._session.llm.backend.name == "sim"
        assert len(app.query(".entry")) == 2
        assert "LLM: use openai" in [c.title for c in app.palette_commands()]  # a local model, from the palette
        app.use_backend("openai")  # builds the client only: no request is sent
        await settle(pilot)
        assert area.settings.backend == "openai" and area._session.agent.history == history
        assert app.sub_title.startswith("openai")


@drive
async def test_simulated_latency_is_a_setting_in_the_app() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        titles = [c.title for c in app.palette_commands()]
        assert "LLM: simulated latency 0 s per call (current)" in titles
        app.use_latency(0.3)
        await settle(pilot)
        assert app.settings.sim_latency_s == 0.3
        assert "0.3 s per call" in app.sub_title
        assert all(area.settings.sim_latency_s == 0.3 for area in app.areas if hasattr(area, "settings"))


@drive
async def test_the_course_world_is_selectable_in_the_agent_tab() -> None:
    from textual.widgets import Select

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _ask(pilot, "Show me a café in Palo Alto")
        await settle(pilot)
        app.query_one("#rest-world", Select).value = "courses"
        await settle(pilot)
        assert _area(app)._world == "courses"
        assert not list(app.query(".entry"))  # switching the world clears the dialogue
        assert "courses" in app.query_one("#question", Input).placeholder
        assert "C1-C6" in _text(app, "#dialogue-hint")
        await _ask(pilot, "Which autumn courses fit my schedule and are practical?")
        await settle(pilot)
        results = app.query_one(ResultsTable)
        assert _column(results, "course_id") == ["C1", "C3"]
        replies = [str(e.render()) for e in app.query(".entry-agent").results(Static)]
        assert "C1" in replies[-1] and "To verify" in replies[-1] and "C6" in replies[-1]
        assert "NOT EXISTS" in _text(app, "#sql-parsed")
        assert _area(app).run_sql("SELECT id FROM courses ORDER BY id")  # raw SQL on the course sandbox
        await settle(pilot)
        assert "C1" in _column(results, "id")

        # the palette offers the course world's sample dialogue, not the restaurants'
        titles = [c.title for c in app.palette_commands()]
        assert f"Restaurants: ask sample turn 1/{len(COURSE_DIALOGUE)} — {COURSE_DIALOGUE[0]}" in titles
        assert not any(SAMPLE_DIALOGUE[0] in t or "café" in t for t in titles)
        _area(app).ask_next_sample_turn()  # "hello": the greeting knows the database holds courses
        await settle(pilot)
        greeting = [str(e.render()) for e in app.query(".entry-agent").results(Static)][-1]
        assert "courses" in greeting and "restaurant" not in greeting.lower()


@drive
async def test_the_suql_agent_over_the_restaurants() -> None:
    """Lecture 7 §4 in the agent tab: text-only wishes become answer() conditions; unknown rows wait, in words."""
    from textual.widgets import Select

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.query_one("#rest-world", Select).value = "restaurants-suql"
        await settle(pilot)
        assert "answer() conditions" in _text(app, "#dialogue-hint")
        titles = [c.title for c in app.palette_commands()]
        assert any("Find me a spicy vegan place" in i.text for i in _area(app).example_items())  # the examples picker
        assert "Restaurants: agent and world — restaurants · SUQL agent (current)" in titles
        assert "Restaurants: agent and world — courses · SUQL agent" in titles
        await _ask(pilot, "Find me a spicy vegan place in Sunnyvale with a view")
        await settle(pilot)
        parsed = _text(app, "#sql-parsed")
        assert (
            "answer(reviews, 'does it have a view?')" in parsed  # the user's words, asked
            and "answer(reviews, 'is it spicy?')" in parsed
        )
        reply = [str(e.render()) for e in app.query(".entry-agent").results(Static)][-1]
        assert (
            "To verify" in reply and "whether it has a view" in reply and "answer(" not in reply.split("To verify")[1]
        )
        # every match, not the first three: mode E now finds three full matches before any unknown row
        await _ask(pilot, "Show me all the places in Palo Alto with a great view")
        await settle(pilot)
        reply = [str(e.render()) for e in app.query(".entry-agent").results(Static)][-1]
        listed = reply.split("To verify")[1]
        assert listed.count("(unknown") == 5 and re.search(r"; and \d+ more$", listed)  # a long list is counted
        # back to the Text-to-SQL agent: the same wish has no column, and the reply says so
        app.query_one("#rest-world", Select).value = "restaurants"
        await settle(pilot)
        await _ask(pilot, "Find me a spicy vegan place in Sunnyvale with a view")
        await settle(pilot)
        assert "answer(" not in _text(app, "#sql-parsed")
