"""A large result in the results table: from the query's end to the first frame, and ten PgDn, against Textual's
own DataTable given the same rows, in the same run.

    python benchmarks/results_bench.py                  # 5 runs of each, 10,000 rows, 140x40
    python benchmarks/results_bench.py --runs 9 --rows 20000

Method: the rows are the restaurants world built with ``--rows`` restaurants (``worlds.restaurants``: ints, floats,
text, lists, NULLs; every column of its table), as a query of ``SELECT *`` returns them.  Each run starts a headless
app (``App.run_test``, the terminal size given) holding one table, then times

- *first frame*: from the call that hands the table the rows (``ResultsTable.show_rows``: what a tab does when the
  query's result arrives) to the end of the first paint that draws the table's rows: the clock stops when the
  table's ``render_lines`` has returned lines showing the first row;
- *first frame, sorted*: the same after a click on the ``rating`` header (every row sorted by its typed value);
- *10 × PgDn*: ten PgDn pressed on the focused table and the frame that shows where they led.

The baseline is Textual's ``DataTable`` given the same rows the way the table shows them (the first 1,000,
``str`` of each value): the cost of Textual itself.  Runs are interleaved (table, baseline, table, …) after one
warm-up of each; the report gives the median (and min) of each and the ratio of the medians.  Not a test: the
numbers depend on the machine and its load, printed with them.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.text import Text  # noqa: E402
from textual.app import App, ComposeResult  # noqa: E402
from textual.widgets import DataTable  # noqa: E402

from tui.widgets import DISPLAY_ROWS, ResultsTable  # noqa: E402


def result_rows(n: int) -> tuple[list[str], list[list[Any]]]:
    """``SELECT *`` over a restaurants world of ``n`` restaurants: its columns and typed rows."""
    from worlds.restaurants import build, records

    found = list(records(build(n=n).world))
    columns = list(found[0])
    return columns, [[r[c] for c in columns] for r in found]


class _Timed:
    """Wraps a table's ``render_lines``: the time its lines first show ``marker``."""

    def __init__(self, table: DataTable, marker: str) -> None:
        self.table = table
        self.marker = marker
        self.at: float | None = None
        inner = table.render_lines

        def render_lines(crop: Any) -> Any:
            lines = inner(crop)
            if self.at is None and any(self.marker in "".join(s.text for s in line) for line in lines):
                self.at = time.perf_counter()
            return lines

        table.render_lines = render_lines  # type: ignore[method-assign]

    async def wait(self, pilot: Any, timeout: float = 60.0) -> float:
        end = time.perf_counter() + timeout
        while self.at is None and time.perf_counter() < end:
            await pilot.pause(0.001)
        if self.at is None:
            raise TimeoutError(f"no frame showed {self.marker!r}")
        return self.at


class _Bench(App[None]):
    def __init__(self, table: DataTable) -> None:
        super().__init__()
        self.table = table

    def compose(self) -> ComposeResult:
        yield self.table


def _fill_baseline(table: DataTable, columns: list[str], rows: list[list[Any]]) -> None:
    table.clear(columns=True)
    table.add_columns(*columns)
    table.add_rows([[str(v) for v in row] for row in rows[:DISPLAY_ROWS]])


async def _one(kind: str, columns: list[str], rows: list[list[Any]], size: tuple[int, int]) -> dict[str, float]:
    table: DataTable = ResultsTable() if kind == "ResultsTable" else DataTable(zebra_stripes=True)
    app = _Bench(table)
    out: dict[str, float] = {}
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        first_name = str(rows[0][columns.index("name")])
        timed = _Timed(table, first_name[:12])
        start = time.perf_counter()
        if isinstance(table, ResultsTable):
            table.show_rows(columns, rows)
        else:
            _fill_baseline(table, columns, rows)
        out["first frame"] = await timed.wait(pilot) - start

        table.focus()
        await pilot.pause()
        start = time.perf_counter()
        await pilot.press(*["pagedown"] * 10)
        target = min(table.row_count - 1, table.cursor_coordinate.row)
        name_col = columns.index("name")
        marker = str(table.get_row_at(target)[name_col])[:12]
        timed = _Timed(table, marker)
        table.refresh()
        out["10 × PgDn"] = await timed.wait(pilot) - start

        if isinstance(table, ResultsTable):
            rating = columns.index("rating")
            best = max(range(len(rows)), key=lambda i: (rows[i][rating] or 0, -i))
            table.move_cursor(row=0, animate=False)
            await pilot.pause()
            timed = _Timed(table, str(rows[best][name_col])[:12])
            start = time.perf_counter()
            table.post_message(
                DataTable.HeaderSelected(table, table.ordered_columns[rating].key, rating, Text("rating"))
            )
            table.post_message(
                DataTable.HeaderSelected(table, table.ordered_columns[rating].key, rating, Text("rating"))
            )
            out["first frame, sorted ▼"] = await timed.wait(pilot) - start
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5, help="runs of each, interleaved (default 5)")
    p.add_argument("--rows", type=int, default=10_000, help="rows of the result (default 10,000)")
    p.add_argument("--size", default="140x40", help="terminal COLSxROWS (default 140x40)")
    args = p.parse_args(argv)
    cols, lines = (int(n) for n in args.size.lower().split("x"))
    columns, rows = result_rows(args.rows)
    kinds = ("ResultsTable", "DataTable")
    results: dict[str, dict[str, list[float]]] = {k: {} for k in kinds}
    load_before = os.getloadavg()[0]
    for kind in kinds:  # warm-up
        asyncio.run(_one(kind, columns, rows, (cols, lines)))
    for _ in range(args.runs):
        for kind in kinds:
            for what, seconds in asyncio.run(_one(kind, columns, rows, (cols, lines))).items():
                results[kind].setdefault(what, []).append(seconds)
    load = os.getloadavg()[0]
    print(
        f"{len(rows):,} rows × {len(columns)} columns (restaurants world), {args.runs} runs each, {cols}x{lines}, "
        f"{os.cpu_count()} CPUs, load average {load_before:.2f} before, {load:.2f} after"
    )
    print(f"  {'':<24}{'ResultsTable':>22}{'DataTable (baseline)':>26}{'ratio':>8}")
    for what in results["ResultsTable"]:
        ours = results["ResultsTable"][what]
        base = results["DataTable"].get(what)
        line = f"  {what:<24}{statistics.median(ours) * 1000:>10.0f} ms (min {min(ours) * 1000:>4.0f})"
        if base:
            ratio = statistics.median(ours) / statistics.median(base)
            line += f"{statistics.median(base) * 1000:>14.0f} ms (min {min(base) * 1000:>4.0f}){ratio:>7.2f}x"
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
