"""Keys (issue 15 part 3): the help lists only keys that exist, tab and mode keys are never typed
and never need Alt, a palette command of another tab shows that tab, F8 maximises and restores."""

from __future__ import annotations

import re

import pytest
from textual.widget import Widget
from textual.widgets import Input, TabbedContent

from tests.tui.support import SIZE, drive, make_app, open_tab, settle
from tui.app import AREAS, CS224VApp
from tui.help import keys_help
from tui.widgets import ResultsTable

NAMES = {
    "esc": "escape",
    "enter": "enter",
    "⏎": "enter",
    "space": "space",
    "backspace": "backspace",
    "tab": "tab",
    "home": "home",
    "end": "end",
    "→": "right",
    "←": "left",
    "↑": "up",
    "↓": "down",
    "[": "left_square_bracket",
    "]": "right_square_bracket",
    "/": "slash",
    "?": "question_mark",
    "pgdn": "pagedown",
    "pgup": "pageup",
}


def _textual_key(token: str) -> str:
    """``Ctrl+PgDn`` → ``ctrl+pagedown``, ``Shift+F7`` → ``shift+f7``, ``→`` → ``right``."""
    parts = token.split("+")
    *mods, key = parts
    name = NAMES.get(key.lower(), key.lower())
    return "+".join([*(m.lower() for m in mods), name])


def help_keys(markdown: str) -> set[str]:
    """Every key the help's key tables name, as Textual names it."""
    keys: set[str] = set()
    in_table = False
    for line in markdown.splitlines():
        if line.startswith("| key |"):
            in_table = True
            continue
        if not line.startswith("|"):
            in_table = False
            continue
        if not in_table or line.startswith("| ---"):
            continue
        cell = re.sub(r"\([^)]*\)", "", line.split("|")[1]).strip()
        for token in re.split(r" / | · | or |, ", cell):
            token = token.strip()
            if not token:
                continue
            ranged = re.fullmatch(r"F(\d+) … F(\d+)", token)
            if ranged:
                keys.update(f"f{n}" for n in range(int(ranged[1]), int(ranged[2]) + 1))
                continue
            assert " " not in token, f"cannot read the key {token!r} in the help row {line!r}"
            keys.add(_textual_key(token))
    return keys


def bound_keys(app: CS224VApp, area: Widget) -> set[str]:
    """The keys bound on the app, the screen, the area and every widget in it."""
    keys: set[str] = set()
    nodes = [app, app.screen, area, *area.walk_children(Widget)]
    for node in nodes:
        for binding in node._bindings:
            keys.update(part.strip() for part in binding[0].split(","))
    return keys


@pytest.mark.parametrize("tab", [spec.id for spec in AREAS])
@drive
async def test_the_help_names_only_keys_that_are_bound(tab: str) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, tab)
        named = help_keys(area.HELP) | help_keys(keys_help())
        missing = named - bound_keys(app, area)
        assert not missing, f"the {tab} help names keys nothing binds: {sorted(missing)}"


def test_the_help_reader_reads_a_row_of_keys() -> None:
    # the reader the test above relies on: a key that is not bound would be reported
    table = "| key | what |\n| --- | --- |\n| F2 … F4 / Alt+1 (in a box) · → or n | x |\n"
    assert help_keys(table) == {"f2", "f3", "f4", "alt+1", "right", "n"}


@drive
async def test_tab_and_mode_keys_are_f_keys_or_ctrl_and_priority() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        for spec in AREAS:
            area = await open_tab(pilot, spec.id)
            for node in (app, area):
                for key, binding in node._bindings:
                    if binding.action.startswith(
                        ("show_tab", "cycle_tab", "cycle_mode", "cycle_view", "mode(", "view(")
                    ):
                        assert "alt+" not in key, f"{key} ({binding.action}) needs Alt"
                        assert re.search(r"(^|\+)f\d+$", key) or key.startswith("ctrl+"), (
                            f"{key} ({binding.action}) can be typed"
                        )
                        assert binding.priority, f"{key} ({binding.action}) does not work while typing"


@drive
async def test_a_palette_command_of_another_tab_shows_that_tab() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_tab(pilot, "suql")
        await open_tab(pilot, "restaurants")
        tabs = app.query_one("#areas", TabbedContent)
        command = next(c for c in app.palette_commands() if c.title == "SUQL: run the query in the editor")
        command.callback()
        await settle(pilot)
        assert tabs.active == "suql"
        # a tab never shown offers a command that opens it
        opener = next(c for c in app.palette_commands() if c.title == "Lab: open the tab")
        opener.callback()
        await settle(pilot)
        assert tabs.active == "lab"
        assert app.area("lab").is_mounted


@drive
async def test_f8_maximises_the_focused_pane_and_restores_it() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = app.query_one(ResultsTable)
        table.focus()
        await pilot.press("f8")
        assert app.screen.maximized is table
        assert table.region.width == 80  # the whole screen's width
        await pilot.press("f8")
        assert app.screen.maximized is None
        app.query_one("#question", Input).focus()
        await pilot.press("f8")  # also from a text box, and nothing is typed
        assert app.screen.maximized is not None
        assert app.screen.maximized.region.height >= 24 - 3  # the whole screen but the footer (and a border)
        assert app.query_one("#question", Input).value == ""
        await pilot.press("f8")
        assert app.screen.maximized is None
