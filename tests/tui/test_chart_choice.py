"""The chart chooser (tui/chart_choice.py) on typed tables: dates, ints, floats, NULLs, numbers as text, mixed
types, one row, no number; the bounds (bars, points) and the caption that says them."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any

from tui.chart_choice import (
    COUNT,
    ChartData,
    ChartSpec,
    NothingToChart,
    build,
    choose,
    column_types,
    cycle,
    kinds_of,
    nice_ticks,
)


def _data(columns, rows, spec=None) -> ChartData:
    chosen = choose(columns, rows) if spec is None else spec
    assert isinstance(chosen, ChartSpec), chosen
    data = build(columns, rows, chosen)
    assert isinstance(data, ChartData), data
    return data


def test_column_types_read_typed_values_and_numbers_in_text() -> None:
    rows: list[list[Any]] = [
        [1, 0.5, Decimal("2.5"), date(2024, 1, 2), "7", "2024-03-01", "cafe", True, None, [1, 2], 3],
        [2, None, Decimal("1"), date(2024, 1, 3), " 8.5 ", "2024-03-02T10:00:00", "bar", False, None, [3], "x"],
    ]
    names = ["i", "f", "d", "day", "txt", "iso", "s", "b", "empty", "lst", "mixed"]
    kinds = [(c.type, c.from_text) for c in column_types(names, rows)]
    assert kinds == [
        ("number", False),
        ("number", False),
        ("number", False),
        ("date", False),
        ("number", True),
        ("date", True),
        ("category", False),
        ("category", False),  # a bool is not a number
        ("none", False),
        ("none", False),
        ("category", False),  # an int beside a text: shown as text
    ]


def test_nan_and_infinity_are_not_numbers_to_draw() -> None:
    rows = [["a", float("nan")], ["b", 2.0], ["c", float("inf")]]
    cols = column_types(["k", "v"], rows)
    assert cols[1].type == "category"  # NaN is no finite number: the column is not drawn as one
    assert isinstance(choose(["k", "v"], rows), NothingToChart)


def test_category_and_number_is_a_bar_chart_top_n_with_the_rest_as_other() -> None:
    rows = [[f"c{i:02d}", i] for i in range(40)] + [["c39", 100]]
    data = _data(["cuisine", "n"], rows)
    assert data.spec.kind == "bar" and data.spec.x == 0 and data.spec.y == 1
    assert len(data.labels) == 12 and data.labels[-1] == "other" and data.labels[0] == "c39"
    assert data.values[0] == 139  # c39 twice: summed
    assert data.values[-1] == sum(range(0, 29))  # c00 … c28, the rest
    assert data.caption == "bar · x = cuisine · y = sum(n) · 11 of 40 categories, rest as other (sum)"


def test_bar_mean_and_count() -> None:
    rows = [["a", 1], ["a", 3], ["b", 5]]
    spec = choose(["k", "v"], rows)
    assert isinstance(spec, ChartSpec) and spec.aggregate == "sum"  # whole numbers: added up
    mean = build(["k", "v"], rows, cycle(column_types(["k", "v"], rows), spec, "aggregate"))
    assert isinstance(mean, ChartData) and dict(zip(mean.labels, mean.values)) == {"a": 2.0, "b": 5.0}
    assert "y = avg(v)" in mean.caption
    count = build(["k", "v"], rows, ChartSpec("bar", 0, COUNT))
    assert isinstance(count, ChartData) and dict(zip(count.labels, count.values)) == {"a": 2, "b": 1}
    assert "y = count(*)" in count.caption


def test_date_against_number_is_lines_in_date_order() -> None:
    rows = [[datetime(2024, 1, 3), 3], [datetime(2024, 1, 1), 1], [None, 9], [datetime(2024, 1, 2), None]]
    data = _data(["when", "n"], rows)
    assert data.spec.kind == "line" and data.spec.x == 0
    assert data.values == (1.0, 3.0)
    assert data.ticks[0][1] == "2024-01-01" and data.ticks[-1][1] == "2024-01-03"
    assert "2 rows without both when and n left out" in data.caption


def test_ordered_number_against_number_is_lines_and_many_points_are_averaged() -> None:
    rows = [[k, k * 2.0] for k in range(1000, 0, -1)]
    data = build(["k", "score"], rows, choose(["k", "score"], rows), max_points=100)  # type: ignore[arg-type]
    assert isinstance(data, ChartData) and data.spec.kind == "line"
    assert len(data.xs) == 100 and list(data.xs) == sorted(data.xs)
    assert data.xs[0] == 5.5 and data.values[0] == 11.0  # the mean of k = 1 … 10 and of their scores
    assert "1,000 points averaged into 100" in data.caption


def test_one_number_is_a_histogram_and_nulls_are_said() -> None:
    rows = [[v] for v in [1, 2, 2, 3, 3, 3, None]]
    data = _data(["rating"], rows)
    assert data.spec.kind == "histogram" and sum(data.values) == 6
    assert len(data.labels) == 3
    assert "1 row without rating left out" in data.caption


def test_numbers_in_text_are_charted_and_said() -> None:
    rows = [["a", "1,5"], ["b", "2"]]  # "1,5" is not a number Python reads: the column is text
    assert isinstance(choose(["k", "v"], rows), NothingToChart)
    rows = [["a", "1.5"], ["b", "2"], ["a", "3"]]
    data = _data(["k", "v"], rows)
    assert data.spec.kind == "bar" and "numbers read from text" in data.caption


def test_a_single_row() -> None:
    data = _data(["name", "rating"], [["Cafe", 4.5]])
    assert data.spec.kind == "bar" and data.labels == ("Cafe",) and data.values == (4.5,)
    data = _data(["rating"], [[4.5]])
    assert data.spec.kind == "histogram" and data.values == (1.0,)


def test_nothing_to_chart_says_why() -> None:
    got = choose(["name", "address"], [["a", "x"], ["b", "y"]])
    assert isinstance(got, NothingToChart)
    assert got.message.startswith("nothing to chart: no column holds numbers")
    assert "name (category)" in got.message
    assert choose(["a"], []) == NothingToChart("the table has no rows")
    assert choose([], []) == NothingToChart("the table has no columns")
    all_null = choose(["k", "v"], [["a", None], ["b", None]])
    assert isinstance(all_null, NothingToChart)


def test_ids_are_not_the_quantity_chosen() -> None:
    rows = [[1, "thai", 4.5], [2, "thai", 3.0], [3, "cafe", 5.0]]
    spec = choose(["_id", "cuisine", "rating"], rows)
    assert spec == ChartSpec("bar", 1, 2, "mean")


def test_cycling_kind_x_and_y() -> None:
    columns = ["cuisine", "rating", "num_reviews"]
    rows = [["thai", 4.0, 10], ["cafe", 3.5, 20], ["thai", 5.0, 5]]
    cols = column_types(columns, rows)
    spec = choose(columns, rows)
    assert spec == ChartSpec("bar", 0, 1, "mean")  # ratings are averaged per category; counts would be summed
    assert cycle(cols, spec, "y").aggregate == "sum"  # num_reviews: whole numbers
    assert kinds_of(cols) == ["bar", "line", "histogram"]
    ys = [spec.y]
    for _ in range(3):
        spec = cycle(cols, spec, "y")
        ys.append(spec.y)
    assert ys == [1, 2, COUNT, 1]
    line = cycle(cols, spec, "kind")
    assert line.kind == "line" and line.x in (1, 2) and line.y != line.x
    hist = cycle(cols, line, "kind")
    assert hist.kind == "histogram" and hist.x is None
    other = cycle(cols, hist, "x")
    assert other.kind == "histogram" and other.y != hist.y
    assert cycle(cols, hist, "kind").kind == "bar"


def test_nice_ticks() -> None:
    assert nice_ticks(0, 1) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert nice_ticks(0, 7) == [0, 2, 4, 6]
    assert nice_ticks(0, 1.33)[-1] <= 1.33


def test_lines_average_the_rows_that_share_an_x() -> None:
    rows = [[1, 2.0], [1, 4.0], [2, 5.0], [3, 1.0]]
    data = build(["k", "v"], rows, ChartSpec("line", 0, 1))
    assert isinstance(data, ChartData)
    assert data.xs == (1.0, 2.0, 3.0) and data.values == (3.0, 5.0, 1.0)
    assert "4 rows, the mean v of each k: 3 points" in data.caption
