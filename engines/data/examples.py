"""Example SUQL queries over a user's own tables, made from the engine's description of them.

The SUQL tab lists them as it lists the lecture's examples for the built-in worlds: the first rows
of each table, a count per value of an enumeration, ``summary()`` of a free-text column, and
``answer()`` asking whether each text mentions a word taken from the first text of that column (so
the question has at least one Yes).  Every name is quoted through sqlglot.
"""

from __future__ import annotations

import re
from typing import Any

from sqlglot import exp

from engines.data.describe import SchemaDescription, TableInfo
from engines.errors import EngineError
from engines.suql.examples import Example

__all__ = ["examples_for"]

SOURCE = "your data"


def _col(name: str) -> exp.Column:
    return exp.column(exp.to_identifier(name, quoted=True))


def _sql(tree: exp.Expr) -> str:
    return tree.sql(dialect="postgres", normalize_functions=False)


def _label(table: TableInfo) -> str | None:
    """The column that names a row best: the first plain text column, else the first enumeration, else the
    first column."""
    for role in ("text", "enum"):
        for c in table.columns:
            if c.role == role:
                return c.name
    return table.columns[0].name if table.columns else None


def _word(gate: Any, table: TableInfo, column: str) -> str | None:
    """A longer word of the column's first text (the answer() example asks whether each text mentions it)."""
    col = _col(column)
    first = (
        exp.select(col.copy())
        .from_(table.ref())
        .where(exp.Not(this=exp.Is(this=col.copy(), expression=exp.Null())))
        .limit(1)
    )
    try:
        rows = gate.run_tree(first).rows
    except EngineError:
        return None
    if not rows:
        return None
    value = rows[0][0]
    text = " ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
    words = [w for w in re.findall(r"[^\W\d_]{5,}", text)]
    return max(words, key=len).lower() if words else None


def examples_for(description: SchemaDescription, gate: Any = None) -> tuple[Example, ...]:
    """Queries to start from, for every table of ``description`` (``gate`` reads a word for answer())."""
    out: list[Example] = []
    for table in description.tables:
        name = table.qualified
        out.append(Example(f"{name}: the first rows", _sql(exp.select("*").from_(table.ref()).limit(10)), SOURCE))
        enum = next((c for c in table.columns if c.role == "enum"), None)
        if enum is not None:
            n = exp.to_identifier("n", quoted=True)
            per = (
                exp.select(_col(enum.name), exp.alias_(exp.Count(this=exp.Star()), n))
                .from_(table.ref())
                .group_by(_col(enum.name))
                .order_by(exp.Ordered(this=exp.column(n), desc=True))
            )
            out.append(Example(f"{name}: rows per {enum.name}", _sql(per), SOURCE))
        text = next((c for c in table.columns if c.role in ("free_text", "list_text")), None)
        label = _label(table)
        if text is None or label is None:
            continue
        summary = exp.select(_col(label), exp.Anonymous(this="summary", expressions=[_col(text.name)])).from_(
            table.ref()
        )
        out.append(Example(f"{name}: summary() of {text.name}", _sql(summary.limit(3)), SOURCE))
        word = _word(gate, table, text.name) if gate is not None else None
        if word:
            ask = exp.Anonymous(
                this="answer", expressions=[_col(text.name), exp.Literal.string(f"does the text mention {word}?")]
            )
            query = (
                exp.select(_col(label))
                .from_(table.ref())
                .where(exp.EQ(this=ask, expression=exp.Literal.string("Yes")))
                .limit(5)
            )
            out.append(Example(f"{name}: answer() — which {text.name} mention {word}?", _sql(query), SOURCE))
    return tuple(out)
