"""Bounds on the values a single function call may build.

DuckDB checks memory_limit and interrupts between vectors of rows, but a scalar function that builds
one huge list or string (``range(1000000000)``, ``repeat('x', 1e9)``) allocates outside the buffer
manager and cannot be interrupted: it took 20 GB and 90 s.  Such calls get a guard on the parsed tree
that raises a DuckDB error before the value is built.  The guard also keeps the call from being folded
at plan time, where no interrupt reaches either.
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from engines.sql.sandbox.errors import SqlFailed, SqlRefused

MAX_LIST_ELEMENTS = 10_000
"""The longest list ``range()``, ``generate_series()``, ``list_resize()`` or ``repeat()`` may build per value."""
MAX_STRING_CHARS = 100_000
"""The longest string ``repeat()``, ``lpad()``, ``rpad()`` or ``bitstring()`` may build per value."""
_MAX_FORMAT_WIDTH = 10_000

_TOO_LONG_LIST = (
    f"{{name}}() would build a list longer than {MAX_LIST_ELEMENTS:,} elements, so it was stopped; "
    "for a long series use the table function in FROM (SELECT * FROM range(...)), which streams."
)
_TOO_LONG_STRING = f"{{name}}() would build a string longer than {MAX_STRING_CHARS:,} characters, so it was stopped."


def _double(node: exp.Expr) -> exp.Expr:
    return exp.cast(exp.paren(node.copy()), "DOUBLE")


def _guarded(value: exp.Expr, size: exp.Expr, limit: int, message: str) -> exp.Expr:
    """``CASE WHEN size > limit THEN error(message) ELSE value END``."""
    return exp.Case(
        ifs=[
            exp.If(
                this=exp.GT(this=size, expression=exp.Literal.number(limit)),
                true=exp.Anonymous(this="error", expressions=[exp.Literal.string(message)]),
            )
        ],
        default=value.copy(),
    )


def _format_refusal(node: exp.Expr, name: str) -> None:
    fmt = node.this if isinstance(node, exp.Format) else (node.expressions[0] if node.expressions else None)
    if not (isinstance(fmt, exp.Literal) and fmt.is_string):
        raise SqlRefused(f"{name}() needs its format as a string literal here (a format can ask for any width).")
    text = fmt.name
    widths = [int(w) for w in re.findall(r"\d+", text)]
    if "*" in text or re.search(r"\{[^}]*\{", text) or any(w > _MAX_FORMAT_WIDTH for w in widths):
        raise SqlRefused(
            f"{name}() with a width or precision above {_MAX_FORMAT_WIDTH:,}, or taken from an argument, is refused."
        )


def _bound_node(node: exp.Expr) -> exp.Expr:
    if isinstance(node, exp.GenerateSeries):
        if isinstance(node.parent, exp.Table):  # the table function streams its rows: no bound needed
            return node
        name = "generate_series" if "generate" in node.sql(dialect="duckdb")[:16].lower() else "range"
        start = node.args.get("start") or exp.Literal.number(0)
        end, step = node.args.get("end"), node.args.get("step")
        if end is None:
            return node
        count = exp.Abs(
            this=exp.Div(
                this=exp.paren(exp.Sub(this=_double(end), expression=_double(start))),
                expression=_double(step) if step is not None else exp.Literal.number(1),
            )
        )
        node.set("end", _guarded(end, count, MAX_LIST_ELEMENTS, _TOO_LONG_LIST.format(name=name)))
        return node
    if isinstance(node, exp.Repeat):
        times = node.args.get("times")
        if times is None:
            return node
        size = exp.Mul(this=_double(exp.Length(this=node.this.copy())), expression=_double(times))
        node.set("times", _guarded(times, size, MAX_STRING_CHARS, _TOO_LONG_STRING.format(name="repeat")))
        return node
    if isinstance(node, exp.Pad):
        length = node.args.get("expression")
        if length is not None:
            name = "lpad" if node.args.get("is_left") else "rpad"
            node.set(
                "expression", _guarded(length, _double(length), MAX_STRING_CHARS, _TOO_LONG_STRING.format(name=name))
            )
        return node
    if isinstance(node, exp.Format):
        _format_refusal(node, "format")
        return node
    if isinstance(node, exp.Anonymous):
        name = node.name.lower()
        args = list(node.expressions)
        if name in {"printf", "format"}:
            _format_refusal(node, name)
        elif name in {"list_resize", "array_resize", "bitstring"} and len(args) >= 2:
            limit, message = (
                (MAX_STRING_CHARS, _TOO_LONG_STRING) if name == "bitstring" else (MAX_LIST_ELEMENTS, _TOO_LONG_LIST)
            )
            args[1] = _guarded(args[1], _double(args[1]), limit, message.format(name=name))
            node.set("expressions", args)
        elif name in {"range", "generate_series", "repeat", "lpad", "rpad", "list_repeat"}:
            raise SqlRefused(f"{name}() is refused in this form: write it so the gate can bound its size.")
    return node


def bound(duckdb_sql: str) -> str:
    """``duckdb_sql`` with a size guard on every call that could build a huge list or string.

    Works on DuckDB's reading of the SQL (sqlglot, ``read="duckdb"``), the text that runs; SQL
    sqlglot cannot read back is returned unchanged (DuckDB's parser still has to see one SELECT).
    """
    return bound_read(duckdb_sql)[0]


def bound_read(duckdb_sql: str) -> tuple[str, exp.Expr | None]:
    """:func:`bound`, and sqlglot's reading of the SQL it returns when that is ``duckdb_sql`` unchanged
    (``None`` when sqlglot cannot read it, or when a guard changed it: the new text must be read again)."""
    try:
        tree = sqlglot.parse_one(duckdb_sql, read="duckdb")
    except (SqlglotError, RecursionError):
        return duckdb_sql, None
    if not any(
        isinstance(n, (exp.GenerateSeries, exp.Repeat, exp.Pad, exp.Format, exp.Anonymous)) for n in tree.walk()
    ):
        return duckdb_sql, tree
    try:
        bounded = tree.transform(_bound_node, copy=True).sql(dialect="duckdb", comments=False)
    except (SqlglotError, RecursionError):
        raise SqlFailed("The query is nested too deeply to be bounded.") from None
    return bounded, (tree if bounded == duckdb_sql else None)  # no guard added: the text read is the text that runs
