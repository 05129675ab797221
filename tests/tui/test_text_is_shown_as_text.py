"""Issue 25: every text the app shows from data is shown as the text it is.

A value, a column name, a label, a file name or a server's message may hold Textual markup (``[b]…[/b]`` restyles,
``[link="…"]`` makes a hyperlink, a malformed tag stops the widget) and characters a terminal obeys (ESC starts an
escape sequence: ``\\x1b]0;…`` retitles the window; C1 ``\\x9b`` is a one-byte CSI; U+202E reorders what follows).
Each test drives the real app to a view that shows such text and reads what the screen draws: the brackets are
there, no raw ESC, C1 or bidi control is, and nothing is a link."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.geometry import Region
from textual.widget import Widget

from tests.engines.data.conftest import hotel_rows, write_csv
from tests.loopback_http import LoopbackServer, Reply
from tests.tui.support import SIZE, drive, make_app, open_tab, settle

MARKUP = '[link="http://evil.example"]click[/link] [b]bold[/b]'
"""Valid Textual markup: read as markup it becomes a hyperlink and bold text, and its brackets vanish."""
CONTROLS = "\x1b]0;PWNED\x07 \x9b31m \u202eexe.txt"
"""An OSC that retitles the terminal, a C1 CSI, a right-to-left override."""
HOSTILE = f"{MARKUP} {CONTROLS}"
RAW = ("\x1b", "\x9b", "\u202e")
"""What must never reach the screen as it is."""
SHOWN = ("click[/link]", "[b]bold[/b]", "\\x1b]0;PWNED", "\\x9b31m", "\\u202eexe.txt")
"""What the screen shows instead (no token holds a space: a wrapped line never cuts one)."""


def _lines(widget: Widget) -> list[str]:
    """What ``widget`` draws, line by line, border and border titles included."""
    width, height = widget.outer_size
    return ["".join(s.text for s in line) for line in widget.render_lines(Region(0, 0, width, height))]


def _frame(app: Any) -> list[Any]:
    """The frame the terminal would get now, line by line (panes, borders, lists, toasts, tooltips)."""
    return app.screen._compositor.render_strips()


def assert_shown_as_text(app: Any, *widgets: Widget, shown: tuple[str, ...] = SHOWN) -> None:
    """The frame holds no raw ESC, C1 or bidi control and no hyperlink; each of ``widgets`` shows every token of
    ``shown`` (the brackets kept, the controls escaped)."""
    strips = _frame(app)
    frame = ["".join(s.text for s in strip) for strip in strips]
    raw = [line for line in frame if any(ch in line for ch in RAW)]
    assert not raw, f"drawn raw: {raw!r}"
    links = [s.text for strip in strips for s in strip if s.style is not None and s.style.link]
    assert not links, f"drawn as hyperlinks: {links}"
    for widget in widgets:
        drawn = "\n".join(_lines(widget))
        missing = [token for token in shown if token not in drawn]
        assert not missing, f"{widget.id or widget}: {missing} not shown in\n{drawn}"


class HostileEndpoint(LoopbackServer):
    """A SPARQL endpoint that answers every query with HTTP 400 and an error body holding markup and controls."""

    def handle(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Reply:
        return Reply(f"Error: {HOSTILE}".encode(), status=400, content_type="text/plain")


@drive
async def test_a_sparql_servers_error_is_shown_as_text() -> None:
    """The console's error pane quotes what the endpoint said."""
    server = HostileEndpoint()
    try:
        app = make_app(kg_endpoint=f"{server.url}/sparql")
        async with app.run_test(size=SIZE) as pilot:
            area = await open_tab(pilot, "kg")
            area.run_query("SELECT ?s WHERE { ?s ?p ?o } LIMIT 1")
            await settle(pilot)
            box = app.query_one("#kg-console-error")
            assert box.display
            assert_shown_as_text(app, box)
    finally:
        server.close()


def _turtle(text: str) -> str:
    return "".join(f"\\u{ord(c):04X}" if not c.isprintable() or c in '"\\' else c for c in text)


@drive
async def test_a_label_in_your_graph_is_shown_as_text_in_the_browser(tmp_path: Path) -> None:
    """--rdf: an entity's label in the search hits, the page's head and its border title (read as markup, a label
    with a tag that closes nothing raised MarkupError there and stopped the app)."""
    ttl = tmp_path / "hostile.ttl"
    ttl.write_text(
        "@prefix ex: <http://example.org/> .\n@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        f'ex:evil rdfs:label "Evil {_turtle(HOSTILE)} [/]" ; ex:knows ex:bob .\n'  # [/]: a tag that closes nothing
        'ex:bob rdfs:label "Bob" .\n',
        encoding="utf-8",
    )
    app = make_app(kg_rdf=(ttl,))
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "kg")
        area.show_view("browser")
        area.search("Evil")
        await settle(pilot)
        hits = app.query_one("#kg-hits")
        assert area._hits, "the search found nothing"
        area.open_entity(area._hits[0].id)
        await settle(pilot)
        assert area._page is not None and area._page.label.startswith("Evil")
        assert_shown_as_text(app, hits, app.query_one("#kg-page-head"), shown=(*SHOWN, "[/]"))
        title = _lines(app.query_one("#kg-page-pane"))[0]  # the border title, cut at the pane's width
        assert 'Page · Evil [link="http://evil.example"]click[/link]' in title, title


@drive
async def test_your_tables_names_and_values_are_shown_as_text(tmp_path: Path) -> None:
    """--db: a CSV whose header and values hold markup and controls, in the schema pane, the SQL views, the
    editor, the read-back, a long cell's tooltip and the copy menu; the question box holding such text; the export
    prompt's path and the notification that quotes it.  What is copied keeps the text as it is."""
    from textual.visual import visualize

    from tui.export import CopyMenu, ExportScreen, copy_items
    from tui.widgets import ResultsTable, SqlEditor

    column = f"[b]x[/b]{CONTROLS}"
    long_value = f"{HOSTILE} " + "x" * 40  # longer than a cell: the whole value is the cell's tooltip
    rows = [{**r, column: long_value} for r in hotel_rows()]
    path = write_csv(tmp_path / "hotels.csv", rows)
    app = make_app(db=str(path))
    app.export_dir = tmp_path / "exports"
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        area = await open_tab(pilot, "restaurants")
        assert_shown_as_text(app, app.query_one("#rest-schema"), shown=("[b]x[/b]\\x1b]0;PWNED",))
        sql = f"SELECT \"{column}\" FROM hotels WHERE name = '{HOSTILE}' OR id < 2"
        app.query_one("#sql-editor", SqlEditor).text = sql
        app.query_one("#question").value = HOSTILE  # as ↑ brings back a question from the history file
        area.run_sql(sql)
        await settle(pilot)
        results = app.query_one("#results", ResultsTable)
        assert results.row_count == 2
        assert_shown_as_text(app, app.query_one("#readback"), app.query_one("#sql-parsed"))
        # the editor and the question box draw pictures (␛) of the controls; their text stays as it is
        assert app.query_one("#sql-editor", SqlEditor).text == sql and app.query_one("#question").value == HOSTILE
        # the tooltip of a long cell, drawn as the Tooltip widget draws it (a Static that reads markup)
        results.focus()
        results.move_cursor(row=0, column=0, animate=False)
        await pilot.pause()
        tooltip = visualize(results, results.tooltip, markup=True).plain
        assert "[b]bold[/b] \\x1b]0;PWNED\\x07 \\x9b31m" in tooltip and not any(ch in tooltip for ch in RAW), tooltip
        # the copy menu shows the read-back as text; copying it gives the sentence as it is
        readback = next(item.text for item in copy_items(area) if item.title == "Read-back")
        assert HOSTILE in readback
        await pilot.press("shift+f9")
        await pilot.pause()
        assert isinstance(app.screen, CopyMenu)
        assert_shown_as_text(app, app.screen.query_one("#copy-options"), shown=("click[/link]", "[b]bold[/b]"))
        await pilot.press("escape")
        await pilot.pause()
        # F9: a file name holding brackets and a bidi control, typed in the prompt; the notification quotes it
        await pilot.press("f9")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ExportScreen)
        target = tmp_path / "[b]rows[/b]\u202ecsv.txt.csv"
        target.parent.mkdir()  # "[b]rows[": an absolute path is written where typed, into a folder that exists
        screen.query_one("#export-path").value = str(target)
        await pilot.pause()
        assert_shown_as_text(app)
        await pilot.press("enter")
        assert target.exists()
        for _ in range(100):  # the toast is mounted a frame or two later
            await pilot.pause(0.01)
            toasts = list(app.screen.query("Toast"))
            if toasts:
                break
        assert toasts, "no notification"
        await pilot.pause()
        assert_shown_as_text(app)
        message = toasts[0].render().plain  # the toast's text before it is wrapped to its width
        assert "[b]rows[/b]\\u202ecsv.txt.csv" in message and "\u202e" not in message, message


@drive
async def test_the_suql_calls_view_shows_what_the_data_says_as_text(tmp_path: Path) -> None:
    """SUQL over your data: the examples' subtitle names the file's folder, the call detail and the calls table's
    tooltip quote a row's name and the sentence answer() relied on."""
    from textual.command import CommandPalette
    from textual.visual import visualize

    from tui.suql import SuqlCallsTable

    rows = [
        {**r, "name": f"{r['name']} {HOSTILE}", "notes": f"The breakfast {HOSTILE} was fresh."} for r in hotel_rows()
    ]
    folder = tmp_path / "[b]data"
    folder.mkdir()
    path = write_csv(folder / "hotels.csv", rows)
    app = make_app(db=str(path))
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "suql")
        area.load_example(next(e for e in area.examples if "answer()" in e.title))
        area.run_query()
        await settle(pilot)
        calls = app.query_one(SuqlCallsTable)
        assert calls.row_count >= 1
        calls.focus()
        calls.move_cursor(row=0, animate=False)
        await pilot.pause()
        assert_shown_as_text(app, app.query_one("#suql-call-detail"))
        tooltip = visualize(calls, calls.tooltip, markup=True).plain
        assert "[b]bold[/b]" in tooltip and "\\x1b]0;PWNED" in tooltip and not any(ch in tooltip for ch in RAW)
        # the command palette lists the worlds: yours is named by its path
        await pilot.press("ctrl+p", *"SUQL: world")
        palette = app.screen
        for _ in range(200):
            await pilot.pause(0.01)
            lists = list(palette.query("CommandList"))
            if lists and lists[0].option_count:
                break
        assert isinstance(palette, CommandPalette) and lists and lists[0].option_count, "the palette found nothing"
        assert_shown_as_text(app, lists[0], shown=("[b]data/hotels.csv",))
