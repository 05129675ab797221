"""The results table's look and order: one number format per column, labels not cut while columns can narrow,
and a header click that sorts every row by its typed values (NULLs last, stable, ▲/▼), export in the query's order."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import DataTable

from tests.tui.support import drive
from tui.widgets import DISPLAY_ROWS, ResultsTable, column_decimals, fit_widths, format_number


def test_one_number_format_per_column() -> None:
    scores = [1, 0.818, 1.0, None]
    d = column_decimals(scores)
    assert d == 3
    assert [format_number(v, d) for v in scores if v is not None] == ["1.000", "0.818", "1.000"]
    assert column_decimals([4.5, 3.0, 4.0]) == 1
    assert column_decimals([1, 2, 3]) == 0 and format_number(12345678901234567890, 0) == "12345678901234567890"
    assert column_decimals([0.5, "x"]) is None  # not all numbers: shown as they are
    assert column_decimals([True, False]) is None  # booleans are not numbers
    assert column_decimals([Decimal("2.25"), 1]) == 2
    tiny = column_decimals([0.00012, 0.5])
    assert tiny is not None and format_number(0.00012, tiny) != "0.000"
    assert column_decimals([1 / 3]) == 3 and format_number(1 / 3, 3) == "0.333"


def test_widths_fit_the_room_cutting_the_widest_and_never_a_label() -> None:
    labels = [3, 4, 8, 5, 11]
    natural = [3, 20, 40, 9, 11]
    widths = fit_widths(labels, natural, 70)
    assert sum(widths) + 2 * len(widths) <= 70
    assert all(w >= min(n, lab) for w, n, lab in zip(widths, natural, labels))
    assert widths[0] == 3 and widths[3] == 9 and widths[4] == 11  # the narrow ones keep their width
    assert fit_widths(labels, natural, 500) == natural  # room enough: nothing cut
    # no room even at the floors: cut to the floors, never below a label
    assert fit_widths([12, 12], [40, 40], 10) == [16, 16]


class _One(App[None]):
    def compose(self) -> ComposeResult:
        yield ResultsTable(id="t")


def _texts(table: ResultsTable, column: int) -> list[str]:
    return [str(table.get_row_at(r)[column]) for r in range(table.row_count)]


@drive
async def test_header_click_sorts_typed_values_nulls_last_and_reverses() -> None:
    app = _One()
    async with app.run_test(size=(100, 20)) as pilot:
        table = app.query_one(ResultsTable)
        rows: list[list[Any]] = [["b", 10, 2.5], ["a", 9, None], ["c", 100, 0.5], ["d", None, 2.5], ["e", 9, 1.25]]
        table.show_rows(["name", "n", "score"], rows)
        await pilot.pause()
        assert _texts(table, 2) == ["2.50", "NULL", "0.50", "2.50", "1.25"]  # one format: two decimals
        await pilot.click(ResultsTable, offset=(7, 0))  # the header of n (name is 4 wide, padded by 1 each side)
        await pilot.pause()
        assert _texts(table, 0) == [
            "a",
            "e",
            "b",
            "c",
            "d",
        ]  # 9 < 10 < 100 as numbers (not "100" < "9"); stable; NULL last
        assert str(table.ordered_columns[1].label).endswith("▲")
        table.post_message(
            DataTable.HeaderSelected(table, table.ordered_columns[1].key, 1, table.ordered_columns[1].label)
        )
        await pilot.pause()
        assert _texts(table, 0) == ["c", "b", "a", "e", "d"]  # reversed, ties stable, NULL still last
        assert str(table.ordered_columns[1].label).endswith("▼") and "sorted by n ▼" in str(table.border_subtitle)
        # the cell view and copying read the row shown
        assert table.full_row(0) == [("name", "c"), ("n", "100"), ("score", "0.50")]
        # export keeps the query's order and the typed values
        assert table.export_table() == (["name", "n", "score"], rows)


@drive
async def test_sorting_a_large_result_sorts_every_row_not_only_the_ones_shown() -> None:
    app = _One()
    async with app.run_test(size=(100, 20)) as pilot:
        table = app.query_one(ResultsTable)
        rows = [[i, (i * 7919) % 10007] for i in range(DISPLAY_ROWS * 3)]
        table.show_rows(["id", "v"], rows)
        await pilot.pause()
        for _ in range(200):
            if not table.filling:
                break
            await pilot.pause(0.01)
        assert table.row_count == DISPLAY_ROWS and len(table._full) == DISPLAY_ROWS
        table.post_message(
            DataTable.HeaderSelected(table, table.ordered_columns[1].key, 1, table.ordered_columns[1].label)
        )
        table.post_message(
            DataTable.HeaderSelected(table, table.ordered_columns[1].key, 1, table.ordered_columns[1].label)
        )
        await pilot.pause()
        assert _texts(table, 1)[0] == str(max(r[1] for r in rows))  # the largest of all 3,000, not of the first 1,000


class _Claims(App[None]):
    def compose(self) -> ComposeResult:
        from tui.kg.browser import ClaimsTable

        yield ClaimsTable()


@drive
async def test_a_property_label_is_not_cut_while_the_claims_table_has_room() -> None:
    from engines.kg.pages import EntityPage, PageClaim, PageValue
    from tui.kg.browser import ClaimsTable

    label = "located in the administrative territorial entity"  # 48 characters: the old cut was at 32
    page = EntityPage("Q1", "Orrin", "a town", claims=(PageClaim("P131", label, PageValue("Orundi", "Q2")),))
    app = _Claims()
    async with app.run_test(size=(120, 10)) as pilot:
        table = app.query_one(ClaimsTable)
        table.show_claims(page)
        await pilot.pause()
        assert str(table.get_row_at(0)[0]) == f"P131 {label}"
    async with _Claims().run_test(size=(60, 10)) as pilot:  # no room: cut, with an ellipsis
        table = pilot.app.query_one(ClaimsTable)
        table.show_claims(page)
        await pilot.pause()
        first = str(table.get_row_at(0)[0])
        assert first.endswith("…") and len(first) + len("Orundi (Q2)") + 4 <= 60
