"""The SUQL tab driven headless through the pilot: behaviour, not pixels."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, OptionList, Select, Static, TabbedContent

from engines.events import CallFinished, Event
from tests.tui.support import SIZE, EventGate, drive, finished_answer_call, make_app, settle
from tests.tui.support import open_tab as show_tab
from tui.app import CS224VApp
from tui.suql import CompareTable, SuqlArea, SuqlCallsTable, SuqlEditor, _Progress, layout_sql, sql_highlights

FAMILY = "family-friendly"  # lecture 7 §3.3: answer() written first, LIMIT 1, summary() in SELECT
ROMANTIC = "lecture 7 §2.5"  # romantic OR a great view in Mountain View, ORDER BY rating LIMIT 3


def EmitGate(area: SuqlArea, after: int) -> EventGate:
    """Holds the engine after ``after`` finished answer() calls, until Esc."""
    return EventGate(area, after, finished_answer_call)


async def open_tab(pilot: Pilot) -> SuqlArea:
    """Wait for the sessions, show the SUQL tab, return its area."""
    area = await show_tab(pilot, "suql")
    assert isinstance(area, SuqlArea)
    return area


def _column(table: DataTable, name: str) -> list[str]:
    labels = [column.label.plain for column in table.ordered_columns]
    index = labels.index(name)
    return [str(table.get_row_at(r)[index]) for r in range(table.row_count)]


def _text(app: CS224VApp, selector: str) -> str:
    return str(app.query_one(selector, Static).render())


def _counts(area: SuqlArea) -> dict[str, Any]:
    return dict(area._counts)


@drive
async def test_choosing_an_example_and_running_it_fills_every_pane() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot)
        examples = app.query_one("#suql-examples", OptionList)
        examples.focus()
        target = area.example(ROMANTIC)
        examples.highlighted = examples.get_option_index(area.option_id(target))
        await pilot.press("enter")
        editor = app.query_one("#suql-editor", SuqlEditor)
        assert editor.text == layout_sql(target.sql)
        assert editor.border_subtitle == ROMANTIC
        await pilot.press("ctrl+j")  # runs from the examples list too
        await settle(pilot)

        results = app.query_one("#suql-results", DataTable)
        assert results.row_count == 3
        assert [c.label.plain for c in results.ordered_columns] == ["name", "rating"]
        assert "conjunct 2" in _text(app, "#suql-plan") and "lazy" in _text(app, "#suql-plan")
        assert "OR (location = 'Mountain View'" in _text(app, "#suql-dnf")
        assert _text(app, "#suql-readback").startswith("I searched for restaurants in Mountain View")
        verify = app.query_one("#suql-verify", DataTable)
        assert verify.row_count == 1
        # cut after a word, within 40, and narrower where the pane needs the room for the other columns' labels
        shown = _column(verify, "unknown")[0]
        assert shown.endswith("…") and len(shown) <= 40
        assert "does it have a great view?; is it…".startswith(shown[:-1].rstrip())
        calls = app.query_one(SuqlCallsTable)
        assert calls.row_count == _counts(area)["answer"] == 6
        assert set(_column(calls, "latency")) == {"0 ms"}
        assert "Yes" in _column(calls, "verdict")
        assert "elapsed 0.00 s" in _text(app, "#suql-counters")
        assert _text(app, "#suql-status") == "done — 3 rows · 1 to verify · mode E"


@drive
async def test_mode_a_makes_more_calls_than_mode_e_on_the_family_friendly_example() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot)
        area.load_example(area.example(FAMILY))
        app.query_one("#suql-results", DataTable).focus()
        await pilot.press("a")  # letters are not mode keys (they would be typed in the editor)
        assert area.mode == "E"
        await pilot.press("f7", "f7", "f7")  # E → F → G → A
        assert area.mode == "A"
        assert app.query_one("#suql-mode", Select).value == "A"
        await pilot.press("ctrl+j")
        await settle(pilot)
        naive = _counts(area)
        assert "mode A" in _text(app, "#suql-plan")

        editor = app.query_one("#suql-editor", SuqlEditor)
        editor.focus()
        before = editor.text
        await pilot.press(
            "shift+f7", "f7", "f7", "f7", "f7"
        )  # works while typing, and types nothing: A → G → A → … → D → E
        assert area.mode == "D"
        await pilot.press("f7")
        assert area.mode == "E"
        assert editor.text == before
        await pilot.press("ctrl+j")
        await settle(pilot)
        lazy = _counts(area)

        assert naive["answer"] == 600 and naive["examined"] == 600
        assert lazy["answer"] < naive["answer"] and lazy["examined"] < naive["examined"]
        assert lazy["summary"] == 1  # summary() only for the one output row
        assert naive["summary"] > lazy["summary"]  # A: summaries for every passing row
        assert app.query_one("#suql-results", DataTable).row_count == 1


@drive
async def test_escape_cancels_the_run_and_keeps_what_was_decided() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot)
        area.load_example(area.example(ROMANTIC))
        gate = EmitGate(area, after=3).install()
        assert area.run_query()
        await gate.wait(pilot)
        assert area.is_busy
        await pilot.press("escape")
        await settle(pilot)

        assert not area.is_busy and app.is_running
        assert _text(app, "#suql-status").startswith("cancelled — 3 LLM calls made, 1 row decided")
        calls = app.query_one(SuqlCallsTable)
        assert calls.row_count == 3  # no further call after Esc
        assert "…" not in _column(calls, "verdict")
        results = app.query_one("#suql-results", DataTable)
        assert _column(results, "decided") == ["match"]
        assert "cancelled" in str(results.border_title)
        assert "conjunct 1" in _text(app, "#suql-plan")  # the plan stays
        assert app.query_one("#suql-editor", SuqlEditor).text == layout_sql(area.example(ROMANTIC).sql)

        del area._emit
        assert area.run_query()  # the session still works
        await settle(pilot)
        assert app.query_one("#suql-results", DataTable).row_count == 3


@drive
async def test_compare_modes_shows_seven_rows() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot)
        area.load_example(area.example(FAMILY))
        await pilot.press("ctrl+o")
        await settle(pilot)
        assert app.query_one("#suql-bottom", TabbedContent).active == "suql-compare-pane"
        table = app.query_one(CompareTable)
        assert table.row_count == 7
        assert _column(table, "mode") == list("ABCDEFG")
        answers = dict(zip(_column(table, "mode"), (int(v.replace(",", "")) for v in _column(table, "answer()"))))
        assert answers["A"] == 600 and answers["E"] < answers["C"] < answers["A"]
        assert set(_column(table, "wall")) == {"0.00 s"}  # the injected clock
        assert _column(table, "rows") == ["1", "1", "1", "1", "1", "1 ≈", "1"]
        assert _text(app, "#suql-status").startswith("compared the seven modes")


@drive
async def test_compare_modes_can_be_cancelled(monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot)
        area.load_example(area.example(FAMILY))
        held = threading.Event()
        report = _Progress.__call__

        def gated(progress: _Progress, event: Event) -> None:  # hold mode A after 5 answer() calls
            report(progress, event)
            if isinstance(event, CallFinished) and progress.answer == 5 and not held.is_set():
                cancel = area._cancel
                held.set()
                assert cancel is not None
                cancel.wait(timeout=30)

        monkeypatch.setattr(_Progress, "__call__", gated)
        assert area.compare_modes()
        while not held.is_set():
            await pilot.pause(0.01)
        await pilot.press("escape")
        await settle(pilot)
        table = app.query_one(CompareTable)
        assert _column(table, "wall") == ["stopped", *["not run"] * 6]
        assert _text(app, "#suql-status") == "cancelled — no mode finished; no further calls"
        assert not area.is_busy


BAD_QUERIES = [
    (
        "SELECT name FROM restaurants WHERE (answer(reviews, 'is it good?') = 'Yes'",
        "SUQL error at line 1, column 70",
        "Expecting )",
    ),
    ("DROP TABLE restaurants", "Refused — nothing ran at line 1, column 1", "DROP TABLE statements are refused"),
    (
        "SELECT name FROM restaurants WHERE st_distance(location, 'Stanford') < 3",
        "Refused — nothing ran",
        "a geographic function",
    ),
    (
        "SELECT name FROM restaurants WHERE answer(reviews) = 'Yes'",
        "Refused — nothing ran",
        "answer() takes a text and a question",
    ),
]


@drive
async def test_bad_suql_is_shown_in_the_tab_and_the_editor_keeps_its_text() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot)
        editor = app.query_one("#suql-editor", SuqlEditor)
        error = app.query_one("#suql-error", Static)
        editor.text = "  "
        assert not area.run_query()
        assert "editor is empty" in str(error.render())
        for query, title, message in BAD_QUERIES:
            editor.text = query
            editor.focus()
            await pilot.press("ctrl+j")
            await settle(pilot)
            assert error.display, query
            assert str(error.border_title) == title
            assert message in str(error.render())
            assert editor.text == query
            assert _text(app, "#suql-status").startswith(("refused", "error"))
            assert app.is_running and not area.is_busy

        def broken(*args: Any) -> None:
            raise RuntimeError("the engine broke")

        area._query_work = broken  # type: ignore[method-assign]
        await pilot.press("ctrl+j")
        await settle(pilot)
        assert "Unexpected RuntimeError: the engine broke" in str(error.render())
        assert _text(app, "#suql-status").startswith("error") and app.is_running
        del area._query_work

        editor.text = "SELECT name FROM restaurants WHERE location = 'Palo Alto' LIMIT 2"
        await pilot.press("ctrl+j")
        await settle(pilot)
        assert not error.display
        assert app.query_one("#suql-results", DataTable).row_count == 2
        assert "no answer() in the WHERE" in _text(app, "#suql-dnf")


@drive
async def test_calls_stream_in_while_the_query_runs() -> None:
    app = make_app(sim_latency_s=0.05)
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot)
        area.load_example(area.example(ROMANTIC))
        area.run_query()
        calls = app.query_one(SuqlCallsTable)
        seen_while_running = 0
        for _ in range(500):
            if not area.is_busy:
                break
            seen_while_running = max(seen_while_running, calls.row_count)
            await pilot.pause(0.01)
        await settle(pilot)
        assert seen_while_running >= 1
        assert calls.row_count >= seen_while_running
        assert app.query_one("#suql-results", DataTable).row_count == 3


@drive
async def test_world_switch_opens_the_world_and_lists_its_examples() -> None:
    from engines.compose import WORLDS

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot)
        select = app.query_one("#suql-world", Select)
        assert select.value == "restaurants"
        assert len(area.examples) > 100  # the lecture's and the paper's
        other = next(name for name in WORLDS if name != "restaurants")
        select.value = other
        await settle(pilot)
        assert area.world == other
        assert area.examples == WORLDS[other].examples
        assert other in str(app.query_one("#suql-examples", OptionList).border_subtitle)
        # the unedited restaurant example gave way to the new world's first
        assert app.query_one("#suql-editor", SuqlEditor).text == layout_sql(area.examples[0].sql)
        area.run_query()
        await settle(pilot)
        assert _text(app, "#suql-status").startswith("done")
        select.value = "restaurants"
        await settle(pilot)
        assert len(area.examples) > 100


@drive
async def test_f3_shows_the_tab_even_while_typing_and_the_palette_offers_its_actions() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        question = app.query_one("#question")
        question.focus()  # typing in the Restaurants tab's question box
        await pilot.press("f3")
        await settle(pilot)
        assert app.query_one("#areas", TabbedContent).active == "suql"
        assert isinstance(getattr(app.focused, "editor", None), SuqlEditor)  # the focus is in its text area
        assert question.value == ""  # nothing typed
        area = app.area("suql")
        assert isinstance(area, SuqlArea)
        titles = [c.title for c in app.palette_commands()]
        assert "SUQL: run the query in the editor" in titles
        assert "SUQL: compare modes A–G on the query in the editor" in titles
        assert "SUQL: mode E — D + retrieval ordering (current)" in titles
        assert "SUQL: world restaurants (current)" in titles
        assert "SUQL: examples…" in titles  # the examples are in their picker, not in the palette
        assert any(i.label == "SUQL paper #8" for i in area.example_items())
        command = next(c for c in app.palette_commands() if c.title.startswith("SUQL: mode B"))
        command.callback()
        assert area.mode == "B"
        assert "SUQL: mode B — the query as written (current)" in [c.title for c in app.palette_commands()]


def test_layout_sql_only_changes_whitespace() -> None:
    sql = (
        "WITH k AS (SELECT * FROM restaurants WHERE location = 'a AND b') SELECT name FROM k "
        "WHERE rating > 4 AND (x = 1 OR y = 2) ORDER BY rating DESC LIMIT 1;"
    )
    laid = layout_sql(sql)
    assert laid.split() == sql.split()
    assert laid.split("\n") == [
        "WITH k AS (SELECT * FROM restaurants WHERE location = 'a AND b')",
        "SELECT name",
        "FROM k",
        "WHERE rating > 4",
        "  AND (x = 1 OR y = 2)",
        "ORDER BY rating DESC",
        "LIMIT 1;",
    ]


def test_sql_highlights_mark_the_llm_functions_apart() -> None:
    line = "WHERE answer(reviews, 'café?') = 'Yes' AND rating >= 4.5 -- note"
    spans = {line.encode()[a:b].decode(): name for a, b, name in sql_highlights(line)}
    assert spans["WHERE"] == "keyword" and spans["AND"] == "keyword"
    assert spans["answer"] == "method.call"
    assert spans["'café?'"] == "string"  # byte offsets: the é takes two bytes
    assert spans["4.5"] == "number"
    assert spans["-- note"] == "comment"
