"""Headless subcommands, one module per area.  Shared helpers for printing live here."""
from __future__ import annotations

import os
from typing import Any, Sequence

EXIT_OK, EXIT_ERROR, EXIT_REFUSED = 0, 1, 2

_KEY_COLUMNS = ("name", "cuisines", "price", "rating", "num_reviews", "location")


def print_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], limit: int = 20) -> None:
    """A plain-text table that fits the terminal; wide restaurant rows show their key columns."""
    from engines.sql.sandbox import to_jsonable

    hidden = 0
    if len(columns) > 7 and all(c in columns for c in _KEY_COLUMNS):  # SELECT *: the columns that matter
        keep = [list(columns).index(c) for c in _KEY_COLUMNS]
        hidden = len(columns) - len(keep)
        columns = [columns[i] for i in keep]
        rows = [[row[i] for i in keep] for row in rows]
    width = max(20, min(160, terminal_width()))
    per = max(6, (width - 3 * len(columns)) // max(1, len(columns)))

    def cell(v: Any) -> str:
        v = to_jsonable(v)
        text = ", ".join(map(str, v)) if isinstance(v, list) else ("" if v is None else str(v))
        return text if len(text) <= per else text[: per - 1] + "…"

    print("  " + " | ".join(cell(c) for c in columns))
    for row in rows[:limit]:
        print("  " + " | ".join(cell(v) for v in row))
    if len(rows) > limit:
        print(f"  … {len(rows) - limit} more rows")
    more = f"; {hidden} more columns with --json" if hidden else ""
    print(f"  ({len(rows)} row{'s' if len(rows) != 1 else ''}{more})")


def terminal_width() -> int:
    try:
        return os.get_terminal_size().columns
    except OSError:
        return 120
