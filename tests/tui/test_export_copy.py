"""Export, copy and the cell view in every tab where they apply (issue 15 part 4), driven by the keys:
F9 opens the path prompt (the extension picks CSV, JSON or Parquet; each file is read back), Ctrl+C in a
table copies, Shift+F9 is the copy menu (query, read-back), v shows the highlighted cell in full."""

from __future__ import annotations

import csv
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, OptionList, Select, Static

from tests.tui.support import SIZE, drive, make_app, open_tab, settle
from tui.app import CS224VApp
from tui.export import CellView, CopyMenu, ExportScreen
from tui.screenshots import HYBRIDQA_QUESTION, KG_QUESTION, LAB_EXPERIMENT, RESTAURANTS_QUESTION, SUQL_EXAMPLE

NOW = datetime(2026, 12, 1, 19, 4, 12)


def _app(tmp_path: Path) -> CS224VApp:
    app = make_app()
    app.wall_clock = lambda: NOW
    app.export_dir = tmp_path / "exports"
    return app


async def _open_prompt(pilot: Pilot) -> ExportScreen:
    await pilot.press("f9")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, ExportScreen), f"F9 opened {type(screen).__name__}"
    return screen


async def _submit(pilot: Pilot, screen: ExportScreen, path: Path | str) -> None:
    box = screen.query_one("#export-path", Input)
    box.value = str(path)
    await pilot.press("enter")
    await pilot.pause()


async def _export(pilot: Pilot, path: Path, source: int | None = None) -> None:
    """F9, choose the ``source``-th table (when given), write ``path``: the prompt closes."""
    screen = await _open_prompt(pilot)
    if source is not None:
        screen.query_one("#export-source", Select).value = source
        await pilot.pause()
    await _submit(pilot, screen, path)
    assert not isinstance(pilot.app.screen, ExportScreen), screen.query_one("#export-message").content
    assert path.exists()


def _parquet(path: Path) -> tuple[list[str], list[tuple[Any, ...]]]:
    rel = duckdb.connect().read_parquet(str(path))
    return rel.columns, rel.fetchall()


def _csv(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


async def _focus(pilot: Pilot, selector: str) -> DataTable:
    table = pilot.app.query_one(selector, DataTable)
    table.focus()
    await pilot.pause()
    return table


async def _view(pilot: Pilot) -> CellView:
    await pilot.press("v")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, CellView), f"v opened {type(screen).__name__}"
    return screen


async def _close(pilot: Pilot) -> None:
    await pilot.press("escape")
    await pilot.pause()
    assert not isinstance(pilot.app.screen, (CellView, CopyMenu, ExportScreen))


@drive
async def test_restaurants_export_in_three_formats_copy_and_cell_view(tmp_path: Path) -> None:
    app = _app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "restaurants")
        area.ask(RESTAURANTS_QUESTION)
        await settle(pilot)
        results = await _focus(pilot, "#results")
        columns, rows = results.export_table()
        assert rows, "the question returns rows"

        # the prompt proposes a file in the export folder named after tab, table and time; typing replaces the
        # name (a bare name is CSV)
        screen = await _open_prompt(pilot)
        box = screen.query_one("#export-path", Input)
        assert box.value == str(tmp_path / "exports" / "restaurants-results-20261201-190412.csv")
        await pilot.press("m", "i", "n", "e")
        assert box.value == str(tmp_path / "exports" / "mine")
        await pilot.press("enter")
        await pilot.pause()
        read = _csv(tmp_path / "exports" / "mine.csv")
        assert read[0] == columns and len(read) == len(rows) + 1
        assert read[1][columns.index("name")] == rows[0][columns.index("name")]

        await _export(pilot, tmp_path / "r.json")
        objects = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
        assert [o["name"] for o in objects] == [r[columns.index("name")] for r in rows]

        await _export(pilot, tmp_path / "r.parquet")
        names, back = _parquet(tmp_path / "r.parquet")
        assert names == columns and len(back) == len(rows)
        assert back[0][columns.index("name")] == rows[0][columns.index("name")]

        # Ctrl+C copies the highlighted cell, in full; it does not ask whether to quit
        results.move_cursor(row=0, column=columns.index("name"), animate=False)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.clipboard == str(rows[0][columns.index("name")])
        # v opens the cell in full; Esc closes it
        view = await _view(pilot)
        assert view.value == str(rows[0][columns.index("name")])
        await _close(pilot)

        # the calls table: Ctrl+C copies the highlighted call (its row), v shows every field of it, F9 exports them
        calls = await _focus(pilot, "#calls")
        calls.move_cursor(row=0, animate=False)
        await pilot.press("ctrl+c")
        record = next(iter(calls.call_records.values()))
        assert app.clipboard.split("\t")[:2] == [str(record["call"]), record["function"]]
        view = await _view(pilot)
        assert f"input: {record['input']}" in view.value and "input_tokens: " in view.value
        await _close(pilot)
        await _export(pilot, tmp_path / "calls.json")
        exported = json.loads((tmp_path / "calls.json").read_text(encoding="utf-8"))
        assert [c["input"] for c in exported] == [r["input"] for r in calls.call_records.values()]
        assert all(c["input_tokens"] > 0 and c["tokens_estimated"] is True for c in exported)

        # the copy menu: the query and the read-back
        await pilot.press("shift+f9")
        await pilot.pause()
        menu = app.screen
        assert isinstance(menu, CopyMenu)
        titles = [item.title for item in menu.items]
        assert "Read-back" in titles and "Query — SQL (after classify)" in titles
        options = menu.query_one(OptionList)
        options.highlighted = titles.index("Read-back")
        await pilot.press("enter")
        await pilot.pause()
        assert app.clipboard == str(area.query_one("#readback").content).strip()
        await pilot.press("shift+f9")
        await pilot.pause()
        app.screen.query_one(OptionList).highlighted = titles.index("Query — SQL (after classify)")
        await pilot.press("enter")
        await pilot.pause()
        assert app.clipboard.lstrip().upper().startswith("SELECT")


@drive
async def test_export_errors_are_clear_and_lose_nothing(tmp_path: Path) -> None:
    app = _app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "restaurants")
        area.ask(RESTAURANTS_QUESTION)
        await settle(pilot)
        await _focus(pilot, "#results")
        screen = await _open_prompt(pilot)
        message = screen.query_one("#export-message")

        await _submit(pilot, screen, tmp_path / "rows.xlsx")  # an unknown extension: said, the prompt stays
        assert app.screen is screen and "end the name in one of" in str(message.content)
        assert screen.query_one("#export-path", Input).value == str(tmp_path / "rows.xlsx")  # as typed

        blocker = tmp_path / "file"
        blocker.write_text("x")
        await _submit(pilot, screen, blocker / "r.csv")  # unwritable
        assert app.screen is screen and "Cannot write" in str(message.content)

        kept = tmp_path / "kept.csv"
        kept.write_text("precious", encoding="utf-8")
        await _submit(pilot, screen, kept)  # exists: refused until a second Enter
        assert app.screen is screen and "Enter again replaces it" in str(message.content)
        assert kept.read_text(encoding="utf-8") == "precious"
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is not screen and kept.read_text(encoding="utf-8").startswith("_id,")

        # a name typed with its extension picks the format
        await _open_prompt(pilot)
        await pilot.press(*"typed.parquet", "enter")
        await pilot.pause()
        assert _parquet(tmp_path / "exports" / "typed.parquet")[0][0] == "_id"
        (tmp_path / "exports" / "typed.parquet").unlink()
        (tmp_path / "exports").rmdir()

        # Esc writes nothing
        screen = await _open_prompt(pilot)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, ExportScreen)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "kept.csv"]


@drive
async def test_keys_are_typed_in_text_boxes_and_say_so_elsewhere(tmp_path: Path) -> None:
    app = _app(tmp_path)
    notices: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        await open_tab(pilot, "restaurants")
        app.notify = lambda message, **kw: notices.append(message)  # type: ignore[method-assign]
        box = app.query_one("#question", Input)
        box.focus()
        await pilot.press("v")
        assert box.value == "v" and not isinstance(app.screen, CellView)  # typed, not a key of the app
        await pilot.press("f9")  # no query yet: nothing to export, said so
        await pilot.pause()
        assert not isinstance(app.screen, ExportScreen) and any("Nothing to export" in n for n in notices)
        await pilot.press("ctrl+c")  # in a text box: its own copy, never the quit
        await pilot.pause()
        assert app.is_running


@drive
async def test_suql_exports_results_rows_to_verify_and_calls(tmp_path: Path) -> None:
    app = _app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "suql")
        area.load_example(area.example(SUQL_EXAMPLE))
        area.run_query()
        await settle(pilot)
        verify = app.query_one("#suql-verify", DataTable)
        v_columns, v_rows = verify.export_table()
        assert v_rows, "the example leaves rows to verify"
        await _focus(pilot, "#suql-results")
        screen = await _open_prompt(pilot)
        labels = [s.title for s in screen.sources]
        assert labels[0] == "Results" and "To verify · condition unknown" in labels and "LLM calls" in labels
        await _close(pilot)

        await _export(pilot, tmp_path / "verify.parquet", source=labels.index("To verify · condition unknown"))
        names, back = _parquet(tmp_path / "verify.parquet")
        assert names == v_columns and len(back) == len(v_rows)

        await _export(pilot, tmp_path / "calls.csv", source=labels.index("LLM calls"))
        read = _csv(tmp_path / "calls.csv")
        calls = app.query_one("#suql-calls", DataTable)
        assert read[0][:4] == ["call", "function", "row", "input"] and len(read) == calls.row_count + 1

        # the cell view of a call shows its whole question and evidence
        await _focus(pilot, "#suql-calls")
        record = next(iter(calls.call_records.values()))
        view = await _view(pilot)
        assert f"input: {record['input']}" in view.value and "evidence: " in view.value
        await _close(pilot)

        await pilot.press("shift+f9")
        await pilot.pause()
        titles = [item.title for item in app.screen.items]
        assert any(t.startswith("Query — ") for t in titles) and "Read-back" in titles
        await _close(pilot)


@drive
async def test_hybridqa_rows_and_passage_calls(tmp_path: Path) -> None:
    app = _app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "hybridqa")
        area.choose_question(HYBRIDQA_QUESTION)
        area.run_question()
        await settle(pilot)
        rows = await _focus(pilot, "#hqa-rows")
        rows.move_cursor(row=0, column=0, animate=False)
        await pilot.press("ctrl+c")
        assert app.clipboard and app.clipboard == str(rows.get_cell_at(rows.cursor_coordinate).plain)
        view = await _view(pilot)
        assert view.value == app.clipboard
        await _close(pilot)
        await _export(pilot, tmp_path / "rows.csv")
        assert len(_csv(tmp_path / "rows.csv")) == rows.row_count + 1

        app.query_one("#hqa-bottom").active = "hqa-calls-pane"
        await pilot.pause()
        calls = await _focus(pilot, "#hqa-calls")
        await _export(pilot, tmp_path / "calls.json")
        exported = json.loads((tmp_path / "calls.json").read_text(encoding="utf-8"))
        assert len(exported) == calls.row_count and {c["function"] for c in exported} >= {"answer"}
        assert all(c["output_tokens"] is not None for c in exported if c["error"] is None)


@drive
async def test_kg_trajectory_and_lab_table(tmp_path: Path) -> None:
    app = _app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "kg")
        area.show_view("stepper")
        area.run_question(KG_QUESTION)
        await settle(pilot)
        screen = await _open_prompt(pilot)
        titles = [s.title for s in screen.sources]
        assert "Trajectory · steps" in titles
        await _close(pilot)
        await _export(pilot, tmp_path / "trajectory.json", source=titles.index("Trajectory · steps"))
        steps = json.loads((tmp_path / "trajectory.json").read_text(encoding="utf-8"))
        assert [s["index"] for s in steps] == [s.index for s in area._stepper.steps]
        assert {"thought", "action", "argument", "observation", "rolled_back"} <= set(steps[0])

        lab = await open_tab(pilot, "lab")
        lab.run_experiment(LAB_EXPERIMENT, "small")
        await settle(pilot)
        table = await _focus(pilot, "#lab-table")
        columns, rows = table.export_table()
        await _export(pilot, tmp_path / "lab.parquet")
        names, back = _parquet(tmp_path / "lab.parquet")
        assert names == columns and len(back) == len(rows) > 0
        view = await _view(pilot)
        assert view.value == table.full_cell(*table.cursor_coordinate)
        await _close(pilot)


RAW = "a\x1b]0;PWNED\x07 \x1b[2J \x9b31m \u202eexe.txt \x7f"
"""A literal that would retitle the terminal, clear it, start a C1 CSI, reverse the text and delete."""
ESCAPED = "a\\x1b]0;PWNED\\x07 \\x1b[2J \\x9b31m \\u202eexe.txt \\x7f"


@drive
async def test_a_cell_cannot_retitle_or_clear_the_terminal_and_export_keeps_its_bytes(tmp_path: Path) -> None:
    """Issue 25: control characters, C1 and bidi controls of a value show escaped in the table and the cell view;
    the export file and the clipboard keep the value as it is."""
    from tui.kg.sparql import SparqlEditor

    ttl = tmp_path / "hostile.ttl"
    turtle = "".join(f"\\u{ord(c):04X}" if not c.isprintable() or c == "\u202e" else c for c in RAW)
    ttl.write_text(f'<http://example.org/a> <http://example.org/name> "{turtle}" .\n', encoding="utf-8")
    app = make_app(kg_rdf=(ttl,))
    app.export_dir = tmp_path / "exports"
    async with app.run_test(size=SIZE) as pilot:
        await open_tab(pilot, "kg")
        app.query_one("#kg-editor", SparqlEditor).text = "SELECT ?name WHERE { ?s <http://example.org/name> ?name }"
        await pilot.press("ctrl+j")
        await settle(pilot)
        results = await _focus(pilot, "#kg-results")
        assert results.row_count == 1
        drawn = "".join(seg.text for y in range(results.size.height) for seg in results.render_line(y))
        assert "a\\x1b]0;PWNED" in drawn and not any(ch in drawn for ch in "\x1b\x07\x9b\u202e\x7f"), repr(drawn)

        results.move_cursor(row=0, column=0, animate=False)
        view = await _view(pilot)
        shown = str(view.query_one("#cell-value", Static).render())
        assert shown == ESCAPED and view.value == RAW  # shown escaped, held (and copied) as it is
        await _close(pilot)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.clipboard == RAW

        await _export(pilot, tmp_path / "rows.jsonl")
        assert json.loads((tmp_path / "rows.jsonl").read_text(encoding="utf-8")) == {"name": RAW}
