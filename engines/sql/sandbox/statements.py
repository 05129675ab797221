"""Statements the engine builds itself (sqlglot trees, identifiers quoted, values as parameters), and the
checked column types they may name."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb
import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from engines.sql.sandbox.errors import SqlRefused


def _run_internal(
    cursor: duckdb.DuckDBPyConnection,
    tree: exp.Expr,
    expected: duckdb.StatementType,
    parameters: Sequence[Any] | None = None,
) -> duckdb.DuckDBPyConnection:
    """Run a statement the engine built itself, as a sqlglot tree (identifiers quoted, values as
    ``?`` parameters).  DuckDB's own parser must read it as exactly one statement of the
    ``expected`` type, the same check every user query passes."""
    _, statement = _checked(cursor, tree, expected)
    return cursor.execute(statement, list(parameters) if parameters is not None else None)


def checked_sql(cursor: duckdb.DuckDBPyConnection, tree: exp.Expr, expected: duckdb.StatementType) -> str:
    """The SQL of a statement the engine built itself, checked as :func:`_run_internal` checks it but not
    run: for a statement run again and again (each of a sandbox's cursors starts with the same ``USE``), the
    same text passes the same check every time."""
    sql, _ = _checked(cursor, tree, expected)
    return sql


def _checked(cursor: duckdb.DuckDBPyConnection, tree: exp.Expr, expected: duckdb.StatementType) -> tuple[str, Any]:
    sql = tree.sql(dialect="duckdb", identify=True, comments=False)
    statements = cursor.extract_statements(sql)
    if len(statements) != 1 or statements[0].type != expected:
        raise SqlRefused(
            f"An internal statement did not read as one {expected.name} statement; it was not run.", sql=sql
        )
    return sql, statements[0]


def plain_type(type_text: str) -> exp.DataType:
    """A DuckDB column type, parsed and checked: built-in types only (nested ones included).

    Raises :class:`SqlRefused` for anything else, so a type can never carry SQL into a statement.
    """
    try:  # the whole text must read as one type (DataType.build would drop what follows it)
        data_type = sqlglot.parse_one(type_text, read="duckdb", into=exp.DataType)
    except (SqlglotError, ValueError, RecursionError):
        raise SqlRefused(f"The column type {type_text!r} is not a type the sandbox can use.") from None
    for node in data_type.walk():
        if isinstance(node, exp.DataType) and (
            not isinstance(node.this, exp.DataType.Type) or node.this == exp.DataType.Type.USERDEFINED
        ):
            raise SqlRefused(f"The column type {type_text!r} is not a plain built-in type.")
    return data_type


def columns_insert(table: exp.Table, types: Sequence[exp.DataType]) -> exp.Insert:
    """``INSERT INTO table SELECT unnest(?::T1[]), unnest(?::T2[]), …``: a whole table in one statement, one
    list parameter per column, unnested side by side and each cast to its column's type."""
    return exp.insert(
        exp.select(
            *[
                exp.Unnest(
                    expressions=[
                        exp.cast(
                            exp.Placeholder(),
                            exp.DataType(this=exp.DataType.Type.ARRAY, expressions=[t.copy()], nested=True),
                        )
                    ]
                )
                for t in types
            ]
        ),
        table.copy(),
    )
