"""Issue 28 items 1-2 through the pilot: completion in the raw-SQL editor, the SUQL console and the SPARQL console
(type a prefix, the list shows the candidates, Tab or Enter puts one in), the label of the QID under the cursor, and
the editing keys — select-all, clear, undo and redo, open and save with their refusals — each reaching the editor
past the app's own bindings."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Input, Label, Static

from tests.tui.support import SIZE, drive, make_app, open_tab, settle
from tui.editor import QueryEditor


async def type_text(pilot: Pilot, text: str) -> None:
    names = {" ": "space", "*": "asterisk", "?": "question_mark", ":": "colon", "'": "apostrophe", ".": "full_stop"}
    for ch in text:
        await pilot.press(names.get(ch, ch))


async def wait_for_list(pilot: Pilot, editor: QueryEditor) -> list[str]:
    await settle(pilot)  # the last key's lookup answered (each key cancels the one before)
    await pilot.pause()
    await pilot.pause()  # and its answer is in the list
    for _ in range(300):
        if editor.completion_list.is_open and editor.completion_list.option_count:
            break
        await pilot.pause(0.02)
    assert editor.completion_list.is_open, "the completion list never opened"
    return [
        str(editor.completion_list.get_option_at_index(i).prompt) for i in range(editor.completion_list.option_count)
    ]


async def editor_in(pilot: Pilot, tab: str, selector: str) -> tuple[Widget, QueryEditor]:
    """Open ``tab`` and give its editor ``selector`` the focus, empty: the tab's area and the editor."""
    area = await open_tab(pilot, tab)
    return area, await fresh(pilot, selector)


async def fresh(pilot: Pilot, selector: str) -> QueryEditor:
    editor = pilot.app.query_one(selector, QueryEditor)
    editor.focus()
    await pilot.press("ctrl+k")  # clear: a key the app does not take first
    await pilot.pause()
    assert editor.text == ""
    return editor


@drive
async def test_sql_editor_completes_columns_and_keywords_and_edits() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        _, editor = await editor_in(pilot, "restaurants", "#sql-editor")
        await type_text(pilot, "sel")
        assert (await wait_for_list(pilot, editor))[0].startswith("SELECT")
        await pilot.press("tab")
        await type_text(pilot, " rat")
        shown = await wait_for_list(pilot, editor)
        assert shown[0].startswith("rating") and "column · restaurants" in shown[0]
        await pilot.press("enter")  # Enter takes it too; the list closes
        await pilot.pause()
        assert editor.text == "SELECT rating" and not editor.completion_list.is_open
        await pilot.press("enter")  # with no list open, Enter is a new line
        assert editor.text == "SELECT rating\n"
        # select-all, then typing replaces; clear; undo brings the text back, redo clears again
        await pilot.press("ctrl+a")
        assert editor.selected_text == "SELECT rating\n"
        await pilot.press("ctrl+k")
        assert editor.text == ""
        await pilot.press("ctrl+z")
        assert editor.text == "SELECT rating\n"
        await pilot.press("ctrl+y")
        assert editor.text == ""
        await pilot.press("ctrl+z")
        await pilot.press("escape")  # no list open: Esc is the tab's, the text stays
        assert editor.text == "SELECT rating\n"


@drive
async def test_suql_editor_offers_answer_with_its_shape_and_ctrl_o_still_compares() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area, editor = await editor_in(pilot, "suql", "#suql-editor")
        await type_text(pilot, "SELECT * FROM restaurants WHERE ans")
        shown = await wait_for_list(pilot, editor)
        assert shown[0].startswith("answer(column, 'question')")
        await pilot.press("tab")
        await pilot.pause()
        assert editor.text == "SELECT * FROM restaurants WHERE answer("
        await pilot.press("ctrl+e")  # Ctrl+O is the tab's Compare here: Ctrl+E opens a file
        await pilot.pause()
        assert editor.query_one("#textarea__open_input", Input).has_focus
        await pilot.press("escape")
        await pilot.pause()
        assert not editor.query("#textarea__open_input")
        assert area.check_action("compare", ()) is not False  # Ctrl+O passes through the editor to the tab


@drive
async def test_sparql_editor_completes_labels_with_their_ids_and_names_the_id_under_the_cursor() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        _, editor = await editor_in(pilot, "kg", "#kg-editor")
        await type_text(pilot, "wd")
        shown = await wait_for_list(pilot, editor)
        assert shown[0].startswith("wd:") and "http://www.wikidata.org/entity/" in shown[0]  # prefixes first
        await pilot.press("escape")
        await type_text(pilot, "t:inst")
        shown = await wait_for_list(pilot, editor)
        assert any(s.startswith("wdt:P31 — instance of") for s in shown)
        for _ in range(shown.index(next(s for s in shown if s.startswith("wdt:P31")))):
            await pilot.press("down")
        await pilot.press("tab")
        await pilot.pause()
        assert editor.text == "wdt:P31"
        await settle(pilot)
        label = str(editor.query_one("#kg-editor-label", Static).render())
        assert "P31 — instance of" in label
        await type_text(pilot, " wd:Q1000")
        await pilot.press("escape")
        await settle(pilot)
        assert "Q1000 — human" in str(editor.query_one("#kg-editor-label", Static).render())


@drive
async def test_open_and_save_a_query_file_and_their_refusals(tmp_path) -> None:
    app = make_app(editor_max_file_bytes=1024)
    async with app.run_test(size=SIZE) as pilot:
        await open_tab(pilot, "restaurants")
        editor = pilot.app.query_one("#sql-editor", QueryEditor)
        editor.focus()
        before = editor.text

        async def submit(key: str, path: str) -> str:
            await pilot.press(key)
            await pilot.pause()
            box = editor.query_one("#textarea__open_input, #textarea__save_input", Input)
            assert box.has_focus
            box.value = str(path)
            await pilot.press("enter")
            await settle(pilot)
            return str(editor.query_one("#textarea__save_open_input_label", Label).render())

        big = tmp_path / "big.sql"
        big.write_text("-- " + "x" * 2000)
        assert "is not opened: it is 2,003 bytes; the most read is 1,024 bytes" in await submit("ctrl+o", big)
        assert editor.text == before  # the editor keeps its text
        latin = tmp_path / "latin.sql"
        latin.write_bytes("SELECT 'café'".encode("latin-1"))
        await pilot.press("escape")
        assert "is not UTF-8 text" in await submit("ctrl+o", latin)
        assert editor.text == before
        good = tmp_path / "good.sql"
        good.write_text("SELECT name FROM restaurants")
        await pilot.press("escape")
        await submit("ctrl+o", good)
        assert editor.text == "SELECT name FROM restaurants" and not editor.query("#textarea__open_input")
        await pilot.press("ctrl+z")  # opening a file is one edit: undo gives the old text back
        assert editor.text == before
        await pilot.press("ctrl+y")
        source = tmp_path / "tool.py"
        source.write_text("print('mine')")
        assert "another kind of file" in await submit("ctrl+s", source)
        assert source.read_text() == "print('mine')"
        await pilot.press("escape")
        assert "exists: Enter again replaces it" in await submit("ctrl+s", good)
        await pilot.press("escape")
        await submit("ctrl+s", tmp_path / "saved")
        assert (tmp_path / "saved.sql").read_text() == "SELECT name FROM restaurants"


@drive
async def test_a_prefixed_name_is_replaced_whole_whatever_the_completer_state() -> None:
    """Seen in CI: keys that outran the list left textual-textarea's plain-word state (``\\w+``), and taking
    ``wdt:P31`` for ``wdt:inst`` gave ``wdt:wdt:P31``."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        _, editor = await editor_in(pilot, "kg", "#kg-editor")
        area = editor.text_input
        assert area is not None
        for typed, taken, expected in (
            ("?x wdt:inst", "wdt:P31", "?x wdt:P31"),
            ("?x wd:hum", "wd:Q1000", "?x wd:Q1000"),
            ("SELECT inst", "wdt:P31", "SELECT wdt:P31"),  # a bare word: the word alone is replaced
        ):
            editor.text = typed
            area.cursor_location = (0, len(typed))
            area.completer_active = "word"
            area.replace_current_word(taken)
            assert editor.text == expected


@drive
async def test_the_completion_list_fits_inside_the_editor_in_one_step() -> None:
    """The list is placed in one step where it fits (textual-textarea shrank it a row per resize, and where it
    ended, the last entry hidden under the editor's edge or not, depended on how resizes interleaved)."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        _, editor = await editor_in(pilot, "restaurants", "#sql-editor")
        await type_text(pilot, "SELECT na")
        shown = await wait_for_list(pilot, editor)
        await pilot.pause()
        listed = editor.completion_list
        box = editor.text_container.content_region
        assert len(shown) == listed.option_count >= 4
        assert box.y <= listed.region.y and listed.region.bottom <= box.bottom, (listed.region, box)
        cursor_y = listed.cursor_offset[1]
        below = editor.text_container.content_size.height - cursor_y - 1
        assert listed.region.height == min(listed.MAX_ROWS, listed.option_count, below)
        assert listed.max_scroll_y == listed.option_count - listed.region.height  # the rest reached by scrolling
