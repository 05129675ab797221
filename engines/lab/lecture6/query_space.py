"""§2.3: how many queries one can ask with at most one condition per column."""

from __future__ import annotations

import math

from engines.lab.core import RunContext, Table
from engines.lab.lecture6.common import rows_of


def query_space(ctx: RunContext) -> Table:
    world, sandbox = ctx.restaurants()
    enums = world.enum_fields
    # One optional condition per structured column: equality on a value (membership for the list
    # column), or a lower bound at a value for numbers.  Address and phone number identify a row as the
    # name does, and are left out; reviews and dishes are free text.
    columns = [
        ("name", "name = v", "SELECT COUNT(DISTINCT name) FROM restaurants"),
        ("location", "location = v", None),
        ("cuisines", "v = ANY(cuisines)", None),
        ("price", "price = v", None),
        ("rating", "rating >= v", "SELECT COUNT(DISTINCT rating) FROM restaurants"),
        ("num_reviews", "num_reviews >= v", "SELECT COUNT(DISTINCT num_reviews) FROM restaurants"),
        ("opening_hours", "opening_hours = v", "SELECT COUNT(DISTINCT opening_hours) FROM restaurants"),
    ]
    rows, product = [], 1
    for i, (col, form, sql) in enumerate(columns):
        ctx.progress(i, len(columns), col)
        if sql is None:
            values = len(enums[col].values)
            used = rows_of(
                sandbox,
                "SELECT COUNT(DISTINCT v) FROM (SELECT UNNEST(cuisines) AS v FROM restaurants)"
                if col == "cuisines"
                else f"SELECT COUNT(DISTINCT {col}) FROM restaurants",
            )[0][0]
            source = f"enum values ({used} used by some row)"
        else:
            values = rows_of(sandbox, sql)[0][0]
            source = "distinct values in the table"
        product *= values + 1
        rows.append([col, form, values, source, values + 1, product])
    ctx.progress(len(columns), len(columns), "done")
    exponent = math.log10(product)
    rows.append(["all", "at most one condition per column", None, "", None, product])
    ctx.claim(
        "the simplest class of queries already numbers about 10^10",
        9 <= exponent <= 12,
        f"{product:,} ≈ 10^{exponent:.1f} (notes: 5,024,105,625 ≈ 10^9.7)",
    )
    ctx.note(
        "Not counted: OR, NOT, aggregates, joins, nesting, sorting, projections — each multiplies the count again. "
        "A parser cannot memorise this space; it must compose clauses."
    )
    return ctx.table(
        ("column", "condition", "values", "counted from", "choices (values + none)", "running product"), rows
    )
