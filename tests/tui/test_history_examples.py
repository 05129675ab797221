"""History and examples (issue 15 part 5): what the user ran comes back with ↑/↓ and Ctrl+R, also after a restart;
each tab's examples are in a searchable picker (Ctrl+L), not in the command palette.

The history folder is the per-test tmp folder tests/conftest.py sets (CS224V_HISTORY_DIR).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.fuzzy import Matcher
from textual.widgets import Input, OptionList

from engines.settings import Settings
from tests.tui.support import SIZE, drive, make_app, open_tab, settle, steady
from tui.editor import QueryEditor
from tui.history import MAX_ENTRIES, BoxWalker, HistoryStore
from tui.pickers import PickItem, SearchPicker, matching
from tui.suql_view import layout_sql

# --- the store ------------------------------------------------------------------------------------------------


def test_the_store_keeps_runs_once_in_a_row_bounded_and_per_tab(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path, "suql", limit=5)
    assert store.add("suql", "SELECT 1")
    assert not store.add("suql", "SELECT 1")  # the same run again, right after itself: kept once
    assert not store.add("suql", "   ")  # nothing to keep
    assert store.add("sql", "SELECT 1")  # another box's run is its own
    for n in range(2, 8):
        store.add("suql", f"SELECT {n}")
    assert store.add("suql", "SELECT 1")  # not right after itself any more: kept again
    again = HistoryStore(tmp_path, "suql", limit=5)
    assert [e.text for e in again.entries] == ["SELECT 4", "SELECT 5", "SELECT 6", "SELECT 7", "SELECT 1"]
    assert not again.warnings
    assert HistoryStore(tmp_path, "kg").entries == []  # one file per tab
    assert (tmp_path / "suql.jsonl").is_file()
    assert Settings().history_dir.name.startswith("history")  # the tmp folder of tests/conftest.py
    assert Settings.model_fields["history_dir"].default_factory().parts[-2:] == ("cs224v-tui", "history")
    assert MAX_ENTRIES >= 100


def test_a_corrupt_history_file_is_set_aside_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "restaurants.jsonl"
    good = json.dumps({"box": "question", "text": "Any coffee shop?"})
    path.write_text(f'{good}\nnot json\n{{"box": 3, "text": "x"}}\n[1, 2]\n', encoding="utf-8")
    store = HistoryStore(tmp_path, "restaurants")
    assert store.texts("question") == ["Any coffee shop?"]
    assert len(store.warnings) == 1 and "3 of its lines" in store.warnings[0]
    assert (tmp_path / "restaurants.jsonl.bad").read_text(encoding="utf-8").count("\n") == 4  # nothing is lost
    assert path.read_text(encoding="utf-8") == good + "\n"  # the readable part, cleanly
    assert not HistoryStore(tmp_path, "restaurants").warnings  # said once

    path.write_bytes(b"\xff\xfe\x00garbage")
    store = HistoryStore(tmp_path, "restaurants")
    assert store.entries == [] and "not UTF-8" in store.warnings[0]
    assert store.add("question", "still works")

    (tmp_path / "kg.jsonl").mkdir()  # a folder where the file should be: read and write fail, nothing raises
    store = HistoryStore(tmp_path, "kg")
    assert store.entries == [] and store.warnings
    assert store.add("sparql", "ASK {}") and store.texts("sparql") == ["ASK {}"]  # kept for the session


def test_an_unwritable_history_folder_keeps_the_session_history(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    store = HistoryStore(blocker / "history", "suql")  # its parent is a file: it cannot be created
    assert store.add("suql", "SELECT 1") and store.add("suql", "SELECT 2")
    assert store.texts("suql") == ["SELECT 1", "SELECT 2"]
    assert len(store.warnings) == 1 and "this session only" in store.warnings[0]


def test_the_walk_never_takes_edited_text() -> None:
    texts = ["q1", "q2", "q3"]
    walker = BoxWalker()
    assert walker.target(texts, "", None, -1) == 2  # an empty box: the newest
    assert walker.target(texts, "q3", None, -1) == 1  # the run still in the editor: the one before
    assert walker.target(texts, "sample", "sample", -1) == 2  # the app's own text (an example)
    assert walker.target(texts, "my edit", "sample", -1) is None  # the user's text: the key is the editor's
    assert walker.target(texts, "", None, 1) is None  # ↓ walks only back from a walk
    assert walker.target([], "", None, -1) is None


def test_the_picker_matches_every_word_without_case_or_accents() -> None:
    items = [PickItem("Show me a café", "sample", 1), PickItem("Cheap bbq", "lecture", 2, more="SELECT x")]
    assert matching(items, "CAFE show") == [0]
    assert matching(items, "select lecture") == [1]
    assert matching(items, "") == [0, 1]
    assert matching(items, "nothing") == []


# --- in the app -----------------------------------------------------------------------------------------------


async def _ask(pilot, text: str) -> None:
    box = pilot.app.query_one("#question", Input)
    box.focus()
    box.value = text
    await pilot.press("enter")
    await settle(pilot)


@drive
async def test_restaurants_history_walks_searches_and_survives_a_restart() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "restaurants")
        box = app.query_one("#question", Input)
        await _ask(pilot, "Show me a café in Palo Alto")
        await _ask(pilot, "Any coffee shop in Mountain View?")
        assert box.value == ""
        await pilot.press("up")
        assert box.value == "Any coffee shop in Mountain View?"
        await pilot.press("up")
        assert box.value == "Show me a café in Palo Alto"
        await pilot.press("up")  # the oldest: it stays
        assert box.value == "Show me a café in Palo Alto"
        await pilot.press("down", "down")
        assert box.value == ""  # past the newest: the empty box again
        box.value = "my own words"
        await pilot.press("up")
        assert box.value == "my own words"  # typed text is never replaced

        # Ctrl+R: type to filter (no accent needed), Enter puts it in the box
        box.value = ""
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert isinstance(app.screen, SearchPicker) and app.screen.id == "history-picker"
        await pilot.press(*"cafe")
        await pilot.pause()
        assert [i.text for i in (app.screen.items[n] for n in app.screen.shown)] == ["Show me a café in Palo Alto"]
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, SearchPicker)
        assert box.value == "Show me a café in Palo Alto" and app.focused is box
        await pilot.press("ctrl+r", "escape")  # Esc closes, nothing changes
        assert not isinstance(app.screen, SearchPicker) and box.value == "Show me a café in Palo Alto"

        # the SQL editor: ↑ at its first line walks only while it holds no edits of the user's
        editor = app.query_one("#sql-editor", QueryEditor)
        area.run_sql("SELECT 42 AS answer")
        await settle(pilot)
        editor.focus()
        editor.text = "SELECT name FROM restaurants\nLIMIT 2"
        editor.cursor_location = (0, 3)
        await pilot.press("up")
        assert editor.text == "SELECT name FROM restaurants\nLIMIT 2"  # the user's query: ↑ is the editor's
        area.example_chosen(("sql", editor.text))  # the same text, put there by the app (an example)
        editor.cursor_location = (0, 3)
        await pilot.press("up")
        assert editor.text == "SELECT 42 AS answer"
        editor.cursor_location = (0, len(editor.text))  # ↓ at the last line: back to the text it left
        await pilot.press("down")
        assert editor.text == "SELECT name FROM restaurants\nLIMIT 2"
        assert area.history.texts("sql") == ["SELECT 42 AS answer"]  # the example was loaded, never run

    again = make_app()  # a restart: the same history folder
    async with again.run_test(size=SIZE) as pilot:
        await open_tab(pilot, "restaurants")
        box = again.query_one("#question", Input)
        box.focus()
        await pilot.press("up")
        assert box.value == "Any coffee shop in Mountain View?"
        await pilot.press("up")
        assert box.value == "Show me a café in Palo Alto"


@drive
async def test_the_example_pickers_load_without_running() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        # Restaurants: a sample question into the question box
        area = await open_tab(pilot, "restaurants")
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert isinstance(app.screen, SearchPicker) and app.screen.id == "examples-picker"
        await pilot.press(*"mission")
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert app.query_one("#question", Input).value == "Cheap bbq in the Mission District"
        assert not area.history.entries  # loaded, not run: not recorded
        await pilot.press("ctrl+l", "escape")
        assert not isinstance(app.screen, SearchPicker)

        # SUQL: a paper query into the editor, searchable by its source
        area = await open_tab(pilot, "suql")
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert len(app.screen.items) == len(area.examples) > 100  # the lecture's and the paper's 100
        await pilot.press(*"paper #8")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)
        editor = app.query_one("#suql-editor", QueryEditor)
        assert area._loaded is not None and area._loaded.source.startswith("SUQL paper #8")
        assert app.focused is editor.text_input and editor.text == layout_sql(area._loaded.sql)  # its text area
        assert not area.history.entries

        # HybridQA: a question of another table is chosen (not run)
        area = await open_tab(pilot, "hybridqa")
        first_table = area.table.name
        items = area.example_items()
        other = next(i for i in items if i.value[1] != first_table)
        area.example_chosen(other.value)
        await settle(pilot)
        assert area.table.name == other.value[1] and area.question.question_id == other.value[2]
        assert area.result is None and not area.history.entries

        # Knowledge graph: a SPARQL example into the console, a question highlighted in the stepper
        area = await open_tab(pilot, "kg")
        items = area.example_items()
        sparql = next(i for i in items if i.value[0] == "sparql" and "award" in i.text)
        area.example_chosen(sparql.value)
        await settle(pilot)
        assert area.view == "console" and app.query_one("#kg-editor", QueryEditor).text == sparql.value[1].query
        question = next(i for i in items if i.value == ("question", "c3_3"))
        area.example_chosen(question.value)
        await settle(pilot)
        questions = app.query_one("#kg-questions", OptionList)
        assert area.view == "stepper" and questions.get_option_at_index(questions.highlighted).id == "c3_3"
        assert not area.steps and not area.history.entries  # nothing ran


@drive
async def test_suql_kg_and_hybridqa_keep_what_ran() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        # SUQL: ↑ at the first line of an example walks to the query run; ↓ at the last line back to the example
        area = await open_tab(pilot, "suql")
        ran = app.query_one("#suql-editor", QueryEditor).text
        area.run_query()
        await settle(pilot)
        area.load_example(area.example("SUQL paper #8"))
        example = app.query_one("#suql-editor", QueryEditor).text
        editor = app.query_one("#suql-editor", QueryEditor)
        editor.focus()
        editor.cursor_location = (0, 0)
        await pilot.press("up")
        assert editor.text == ran
        editor.cursor_location = editor.document.end
        await pilot.press("down")
        assert editor.text == example
        assert area.history.texts("suql") == [ran]

        # Knowledge graph: Ctrl+R brings a console query back into the editor
        area = await open_tab(pilot, "kg")
        first = app.query_one("#kg-editor", QueryEditor).text
        area.run_query()
        await settle(pilot)
        area.load_example(area.example("award"))
        app.query_one("#kg-editor", QueryEditor).focus()
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert isinstance(app.screen, SearchPicker) and [i.text for i in app.screen.items] == [first]
        await pilot.press("enter")
        await settle(pilot)
        assert app.query_one("#kg-editor", QueryEditor).text == first

        # HybridQA: the questions are a list (↑/↓ are its own); Ctrl+R chooses a question run before
        area = await open_tab(pilot, "hybridqa")
        asked = area.question
        area.run_question()
        await settle(pilot)
        options = app.query_one("#hqa-questions", OptionList)
        options.focus()
        await pilot.press("down")
        assert area.question is not asked  # the list moved: no history walk there
        await pilot.press("ctrl+r")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)
        assert area.question is asked


@drive
async def test_a_hybridqa_question_of_the_other_source_switches_the_source_back() -> None:
    """The history (or the examples) hold questions of both sources: choosing one of the source not shown switches
    the source, opening its tables the first time, and chooses the question there (nothing runs)."""
    from engines.hybridqa.session import open_hybridqa

    app = make_app()
    real_session = open_hybridqa(app.settings, source="real")  # only to name one of its questions
    table = real_session.world.tables[1]
    unopened = ("real", table.name, table.questions[0].question_id)
    real_session.close()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "hybridqa")
        assert area.source == "generated" and "real" not in area._runner.sessions
        area.example_chosen(unopened)  # the real tables open first, then the question is chosen there
        await settle(pilot)
        assert (area.source, area.table.name, area.question.question_id) == unopened
        area.set_source("generated")
        await settle(pilot)
        area.run_question()
        await settle(pilot)
        ran = area.history.entries[-1]
        area.set_source("real")
        await settle(pilot)
        assert area.source == "real" and area.question is not None
        real = area.example_items()[3].value
        area.set_source("generated")
        await settle(pilot)
        area.history_chosen(ran)  # its source is the one shown: nothing to switch
        await settle(pilot)
        assert area.source == "generated" and area.question.question_id == ran.meta["question_id"]
        area.example_chosen(real)  # the real tables are open: switched at once
        await settle(pilot)
        assert (area.source, area.table.name, area.question.question_id) == real
        area.history_chosen(ran)
        await settle(pilot)
        assert area.source == "generated" and area.table.name == ran.meta["table"]
        assert area.question.question_id == ran.meta["question_id"] and len(area.history.entries) == 1


@drive
async def test_the_palette_holds_no_examples() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        areas = [await open_tab(pilot, tab) for tab in ("restaurants", "suql", "hybridqa", "kg")]
        examples = {item.text for area in areas for item in area.example_items()}
        assert len(examples) > 400  # the lecture's, the paper's, every question
        titles = [c.title for c in app.palette_commands()]
        for area in areas:
            assert titles.count(f"{area.TITLE}: examples…") == 1 and titles.count(f"{area.TITLE}: history…") == 1
        stepping = ("Restaurants: ask sample turn", "Restaurants: restart the sample dialogue")  # one entry, an action
        flooded = [t for t in titles if not t.startswith(stepping) and any(e in t for e in examples)]
        assert not flooded, flooded[:5]
        matcher = Matcher("export")
        assert not [t for t in titles if matcher.match(t) > 0 and any(e in t for e in examples)]
        assert len(titles) < 150
        # the palette entry opens the picker of its tab (and shows the tab first)
        command = next(c for c in app.palette_commands() if c.title == "SUQL: examples…")
        command.callback()
        await pilot.pause()
        assert isinstance(app.screen, SearchPicker) and app.screen.title_text == "SUQL · examples"
        await pilot.press("escape")
        await settle(pilot)
        assert app.active_tab == "suql"


@drive
async def test_the_picker_search_box_is_steady_and_apart_from_the_dialog_border() -> None:
    """The search box follows the app's cursor_blink (a blinking cursor was drawn or not by when the picture was
    taken: the 80x24 snapshot's flake under load), and its border sits a column inside the dialog's (Input's own
    tall border, drawn against the dialog's, read as one ragged double border)."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await open_tab(pilot, "suql")
        await pilot.press("ctrl+l")
        await pilot.pause()
        await pilot.press(*"family")
        assert isinstance(app.screen, SearchPicker)
        search = app.screen.query_one("#picker-search", Input)
        assert search.cursor_blink is False and search._cursor_visible
        await pilot.pause(0.7)  # past a blink
        assert search._cursor_visible
        dialog = app.screen.query_one("#picker-dialog").region
        box = search.region
        assert dialog.x + 1 < box.x and box.right < dialog.right - 1, (dialog, box)
        assert search.styles.border_top[0] == "round"
    blinking = make_app()
    blinking.cursor_blink = True
    async with blinking.run_test(size=(80, 24)) as pilot:
        await open_tab(pilot, "restaurants")
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert blinking.screen.query_one("#picker-search", Input).cursor_blink is True


@pytest.mark.parametrize("size", ["140x40", "80x24"])
def test_examples_picker_snapshot(snap_compare, size):
    async def run_before(pilot) -> None:
        await open_tab(pilot, "suql")
        await settle(pilot)  # the tab behind the picker has finished loading
        # at 80x24 the tab's stacked columns scroll: bring every scrolled container to its top, so the picture
        # behind the dialog does not depend on where the focus's scroll-into-view had got to
        for widget in pilot.app.screen.query("*"):
            if widget.is_scrollable:
                widget.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        await pilot.press("ctrl+l")
        await pilot.pause()
        await pilot.press(*"family")
        await settle(pilot)
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()

    sizes = {"140x40": SIZE, "80x24": (80, 24)}
    assert snap_compare(make_app(), terminal_size=sizes[size], run_before=run_before)


@pytest.mark.parametrize("size", ["140x40", "80x24"])
def test_history_picker_snapshot(snap_compare, size):
    async def run_before(pilot) -> None:
        await open_tab(pilot, "restaurants")
        for question in (
            "Show me a café in Palo Alto",
            "Any coffee shop in Mountain View?",
            "Cheap bbq in the Mission",
        ):
            await _ask(pilot, question)
        await pilot.press("ctrl+r")
        await steady(pilot)  # the tab behind the picker has scrolled to the last reply

    sizes = {"140x40": SIZE, "80x24": (80, 24)}
    assert snap_compare(make_app(), terminal_size=sizes[size], run_before=run_before)
