"""The schema pane of the built-in worlds (issue 15 part 5): Ctrl+T shows the tables, columns, types and roles of
the tab's world as the engine describes them (engines.data.describe.describe_world), in the Restaurants, SUQL and
HybridQA tabs; nothing is described before the pane shows; it follows the world or table; Ctrl+T is never typed."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from engines.data.describe import describe_world
from tests.engines.data.conftest import hotel_rows, write_csv
from tests.tui.support import SIZE, drive, make_app, open_tab, settle
from tui.area import WorkArea
from tui.editor import QueryEditor
from tui.schema_pane import SchemaPane


def labels(pane: SchemaPane) -> list[str]:
    out: list[str] = []

    def walk(node, depth: int) -> None:
        out.append("  " * depth + node.label.plain)
        for child in node.children:
            walk(child, depth + 1)

    walk(pane.root, 0)
    return out


def column_lines(description) -> list[str]:
    """What the pane shows of each column, from the engine's description (ENUM types shortened: their values are
    listed under them)."""
    lines = []
    for table in description.tables:
        for c in table.columns:
            shown = "ENUM" if c.values and c.type.upper().startswith("ENUM(") else c.type
            lines.append(f"{c.name}  {shown}  {c.role_words}")
    return lines


def shown_columns(pane: SchemaPane) -> list[str]:
    return [line.strip() for line in labels(pane) if line.startswith("    ") and not line.startswith("      ")]


def session_of(area):
    """The SUQL or Restaurants tab's open session (the SUQL tab keeps it in its runner)."""
    runner = getattr(area, "_runner", None)
    return runner.session if runner is not None else area._session


def expected(area, tab: str):
    if tab == "restaurants":
        session = session_of(area)
        return describe_world(session.sandbox, source="", enum_fields=session.agent.enum_fields)
    if tab == "suql":
        session = session_of(area)
        return describe_world(session.sandbox, source="", enum_fields=getattr(session.world, "enum_fields", {}))
    session, table = area.session, area.table
    return describe_world(session.sandbox, source="", enum_fields={}, tables=(table.name,))


BOXES = {"restaurants": ("#question", Input), "suql": ("#suql-editor", QueryEditor), "hybridqa": None}


@pytest.mark.parametrize("tab", ["restaurants", "suql", "hybridqa"])
@drive
async def test_ctrl_t_shows_the_engines_description_of_the_tabs_world(tab: str) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, tab)
        pane = area.query_one(SchemaPane)
        assert area in app.query(WorkArea)  # the mixin keeps the tab a WorkArea for Textual's type selectors
        # hidden, and nothing described, until asked for
        assert not pane.display and pane.subject is None and pane.description is None
        area.focus_default()
        await pilot.pause()
        box = getattr(app.focused, "editor", app.focused)  # a query editor's text area has the focus
        if BOXES[tab] is not None:
            selector, kind = BOXES[tab]
            assert isinstance(box, kind) and box.id == selector[1:]
            await pilot.press("end", *"ab")
            before = box.value if isinstance(box, Input) else box.text
        await pilot.press("ctrl+t")
        await settle(pilot)
        await pilot.pause()
        assert pane.display
        assert getattr(app.focused, "editor", app.focused) is box  # the cursor stays where the user types
        if BOXES[tab] is not None:
            assert (box.value if isinstance(box, Input) else box.text) == before  # ^T is never typed
        want = expected(area, tab)
        assert pane.description is not None
        assert [t.qualified for t in pane.description.tables] == [t.qualified for t in want.tables]
        assert shown_columns(pane) == column_lines(want)
        for table in want.tables:
            assert any(line.strip().startswith(f"{table.qualified} — {table.rows:,} row") for line in labels(pane))
        if tab == "restaurants":
            await _follows_the_world(pilot, area, pane)
        if tab == "hybridqa":
            first = area.table.name
            other = next(t.name for t in area.session.world.tables if t.name != first)
            assert area.set_table(other)
            await settle(pilot)
            await pilot.pause()
            assert [t.name for t in pane.description.tables] == [other]
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert not pane.display


async def _follows_the_world(pilot, area, pane: SchemaPane) -> None:
    area.set_world("courses")  # while shown: it follows
    await settle(pilot)
    await pilot.pause()
    tables = [t.name for t in pane.description.tables]
    assert tables == [t[1] for t in session_of(area).sandbox.tables()] and "offerings" in tables
    # the course agent classifies nothing: no enumeration, though the statistics find some
    assert all(c.role not in ("enum", "list_enum") for t in pane.description.tables for c in t.columns)
    kept = pane.description
    await pilot.press("ctrl+t")  # hidden: a world change describes nothing
    area.set_world("restaurants")
    await settle(pilot)
    assert pane.description is kept
    await pilot.press("ctrl+t")
    await settle(pilot)
    await pilot.pause()
    assert [t.name for t in pane.description.tables] == ["restaurants"]
    area.set_world("courses")
    await settle(pilot)
    await pilot.pause()
    assert pane.description is kept  # described once, shown again


@drive
async def test_a_world_of_many_tables_is_described_table_by_table() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "suql")
        area.set_world("hybridqa")
        await settle(pilot)
        await pilot.press("ctrl+t")
        await settle(pilot)
        await pilot.pause()
        pane = area.query_one(SchemaPane)
        tables = pane.description.tables
        assert len(tables) == len(session_of(area).sandbox.tables()) > 12
        assert not any(t.described for t in tables)  # types only, at once
        node = pane.root.children[1]
        name = node.data
        node.expand()
        await pilot.pause()
        await settle(pilot)
        await pilot.pause()
        table = pane.description.table(name)
        assert table.described and table.rows is not None
        want = describe_world(session_of(area).sandbox, source="", enum_fields={}, tables=(name,)).tables[0]
        assert table == want
        assert node.label.plain.startswith(f"{name} — {want.rows:,} rows")
        assert sum(t.described for t in pane.description.tables) == 1


@drive
async def test_your_datas_pane_shows_at_first_and_ctrl_t_hides_it(tmp_path) -> None:
    path = write_csv(tmp_path / "hotels.csv", hotel_rows())
    app = make_app(db=str(path))
    async with app.run_test(size=SIZE) as pilot:
        area = await open_tab(pilot, "suql")
        pane = area.query_one(SchemaPane)
        assert pane.display and pane.description is session_of(area).source.schema
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert not pane.display
        area.set_world("courses")  # hidden by the user: it stays hidden, describing nothing
        await settle(pilot)
        assert not pane.display and pane.description is not None and pane.description.source == "hotels.csv"
        await pilot.press("ctrl+t")
        await settle(pilot)
        await pilot.pause()
        assert pane.display and "offerings" in [t.name for t in pane.description.tables]


def _snapshot(tab: str, world: str | None = None):
    async def run_before(pilot) -> None:
        area = await open_tab(pilot, tab)
        if world is not None:
            area.set_world(world)
            await settle(pilot)
        await pilot.press("ctrl+t")
        await settle(pilot)
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()

    return run_before


@pytest.mark.parametrize("size", ["140x40", "80x24"])
@pytest.mark.parametrize("tab", ["restaurants", "suql", "hybridqa"])
def test_schema_pane_snapshot(snap_compare, tab, size):
    sizes = {"140x40": SIZE, "80x24": (80, 24)}
    assert snap_compare(make_app(), terminal_size=sizes[size], run_before=_snapshot(tab))
