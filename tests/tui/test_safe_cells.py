"""A value is shown as the text it is: DataTable reads a str cell or column label as markup, so a value such as
"[b]x[/b]", "[citation needed]" or "[link=…]" would lose its brackets, restyle the table or become a hyperlink."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from tests.tui.support import drive
from tui.kg.browser import ClaimsTable
from tui.widgets import CallsTable, SafeCells

MARKUP = "[b]bold[/b] [link=http://evil.example]click[/link] [citation needed] [red]"


class _Plain(SafeCells, DataTable):
    pass


@pytest.mark.parametrize(
    "table_class", [_Plain, ClaimsTable, CallsTable], ids=["SafeCells", "ClaimsTable", "CallsTable"]
)
@drive
async def test_markup_in_a_value_or_a_label_is_shown_as_text_and_kept_as_it_is(table_class: type) -> None:
    class Host(App):
        def compose(self) -> ComposeResult:
            yield table_class()

    app = Host()
    async with app.run_test(size=(160, 8)) as pilot:
        table = app.query_one(DataTable)
        table.clear(columns=True)
        table.add_column("price [usd]", key="a")
        table.add_row(MARKUP, key="r")
        await pilot.pause()
        drawn = "".join(seg.text for y in range(3) for seg in table.render_line(y))
        assert "price [usd]" in drawn and MARKUP in drawn, repr(drawn)
        styles = [seg.style for y in range(3) for seg in table.render_line(y) if "bold" in seg.text]
        assert styles and not any(s and s.link for s in styles), styles
        assert table.raw_cell(0, 0) == MARKUP  # what export and copy read
