"""Export and copy defects of issue 28 item 5: F9 writes an absolute path where it was typed (under --out's rules,
else refuses in the prompt), Shift+F9's row as JSON keeps the values' types, the palette has Export and Copy."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

import pytest
from textual.command import CommandPalette
from textual.widgets import Input, OptionList

from tests.tui.support import SIZE, drive, make_app, open_tab, settle
from tui.app import CS224VApp
from tui.export import CopyMenu, ExportScreen, TargetRefused, export_target
from tui.screenshots import RESTAURANTS_QUESTION

NOW = datetime(2026, 12, 1, 19, 4, 12)


def _app(tmp_path: Path) -> CS224VApp:
    app = make_app()
    app.wall_clock = lambda: NOW
    app.export_dir = tmp_path / "exports"
    return app


# --- where a typed path goes ------------------------------------------------------------------------------


def test_an_absolute_path_typed_over_the_proposed_name_is_written_where_typed(tmp_path):
    folder = tmp_path / "exports"
    assert export_target(f"{folder}/{tmp_path}/x.csv", folder) == tmp_path / "x.csv"
    assert export_target(f"{tmp_path}/x.csv", folder) == tmp_path / "x.csv"
    assert export_target("x.csv", folder) == folder / "x.csv"
    assert export_target(f"{folder}/sub/x.csv", folder) == folder / "sub" / "x.csv"


def test_a_tilde_expands(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert export_target("~/x.csv", Path("~") / "cs224v-exports") == tmp_path / "x.csv"
    assert export_target("~/cs224v-exports/~/x.csv", Path("~") / "cs224v-exports") == tmp_path / "x.csv"


def test_refused_like_out(tmp_path):
    folder = tmp_path / "exports"
    with pytest.raises(TargetRefused, match="does not exist"):
        export_target(f"{tmp_path}/no/such/x.csv", folder)
    source = tmp_path / "data.csv"
    source.write_text("a\n1\n")
    with pytest.raises(TargetRefused, match="reads"):
        export_target(str(source), folder, [source])
    os.symlink(source, tmp_path / "link.csv")
    with pytest.raises(TargetRefused, match="symbolic link"):
        export_target(str(tmp_path / "link.csv"), folder)
    hard = tmp_path / "hard.csv"
    os.link(source, hard)
    with pytest.raises(TargetRefused, match="reads"):
        export_target(str(hard), folder, [source])
    code = Path(__file__).resolve().parents[2] / "tui" / "rows.csv"
    with pytest.raises(TargetRefused, match="source files"):
        export_target(str(code), folder)
    with pytest.raises(TargetRefused, match="leaves the exports folder"):
        export_target("../../x.csv", folder)


def test_a_db_folder_s_tables_are_files_the_app_reads(tmp_path):
    """--db naming a folder reads every file in it (a table each): F9 replaces none of them, as --out does not."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "items.csv").write_text("a\n1\n")
    app = make_app(db=str(data))
    assert (data / "items.csv") in app._read_paths()
    with pytest.raises(TargetRefused, match="reads"):
        export_target(str(data / "items.csv"), tmp_path / "exports", app._read_paths())


@drive
async def test_f9_absolute_paths_row_as_json_and_the_palette(tmp_path: Path) -> None:
    """One app, one question: F9 writes an absolute path typed over the proposed name and refuses a missing
    folder in the prompt; Shift+F9's row as JSON is typed; the palette's Export and Copy open F9's and Shift+F9's
    screens."""
    app = _app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await open_tab(pilot, "restaurants")
        app.active_area.ask(RESTAURANTS_QUESTION)
        await settle(pilot)
        results = app.query_one("#results")
        results.focus()
        results.move_cursor(row=0, column=0, animate=False)
        await pilot.pause()

        # F9: the proposed name is selected: typing an absolute path replaces the name, the folder stays in front
        await pilot.press("f9")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ExportScreen)
        await pilot.pause()
        await pilot.press(*f"{tmp_path}/mine.json")
        box = screen.query_one("#export-path", Input)
        assert box.value == f"{tmp_path / 'exports'}/{tmp_path}/mine.json"
        await pilot.press("enter")
        await pilot.pause()
        assert (tmp_path / "mine.json").exists() and not (tmp_path / "exports").exists()
        assert json.loads((tmp_path / "mine.json").read_text(encoding="utf-8"))

        await pilot.press("f9")
        await pilot.pause()
        screen = app.screen
        box = screen.query_one("#export-path", Input)
        box.value = f"{tmp_path}/missing/x.csv"
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen  # refused in the prompt, which stays open with the path as typed
        message = str(screen.query_one("#export-message").content)
        assert message.startswith("Cannot write there:") and "does not exist" in message and "\n" not in message
        assert box.value == f"{tmp_path}/missing/x.csv" and not (tmp_path / "missing").exists()
        await pilot.press("escape")
        await pilot.pause()

        # Shift+F9: the row as JSON keeps numbers and lists typed
        results.focus()
        await pilot.pause()
        columns, rows = results.export_table()
        await pilot.press("shift+f9")
        await pilot.pause()
        menu = app.screen
        assert isinstance(menu, CopyMenu)
        titles = [item.title for item in menu.items]
        index = next(i for i, t in enumerate(titles) if t.startswith("Row as JSON"))
        menu.query_one(OptionList).highlighted = index
        await pilot.press("enter")
        await pilot.pause()
        copied = json.loads(app.clipboard)
        assert list(copied) == columns
        assert isinstance(copied["rating"], float) and copied["rating"] == float(rows[0][columns.index("rating")])
        assert isinstance(copied["cuisines"], list) and copied["cuisines"] == list(rows[0][columns.index("cuisines")])

        # the palette: Export and Copy
        for query, screen_type in (("Export: write", ExportScreen), ("Copy: the cell", CopyMenu)):
            await pilot.press("ctrl+p", *query)
            palette = app.screen
            lists: list = []
            for _ in range(200):
                await pilot.pause(0.01)
                lists = list(palette.query("CommandList"))
                if lists and lists[0].option_count:
                    break
            assert isinstance(palette, CommandPalette) and lists and lists[0].option_count
            await pilot.press("enter")
            for _ in range(50):
                await pilot.pause(0.01)
                if isinstance(app.screen, screen_type):
                    break
            assert isinstance(app.screen, screen_type), type(app.screen).__name__
            await pilot.press("escape")
            await pilot.pause()
