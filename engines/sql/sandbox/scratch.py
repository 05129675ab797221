"""Scratch tables and functions: what a compiler built on the gate (SUQL) adds for the length of a block.

A compiler rewrites a *validated* tree (adding references to its scratch tables and functions) and runs
the result through the sandbox, which validates it again; only the compiler itself may create scratch
tables or register functions, never the SQL it is given.  Scratch tables live in the sandbox's own
in-memory database (``memory.scratch``), apart from the read-only world.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import duckdb
from duckdb.func import FunctionNullHandling
from sqlglot import exp

from engines.sql.sandbox.errors import SqlFailed, _from_duckdb
from engines.sql.sandbox.statements import _run_internal, columns_insert, plain_type

SCRATCH_SCHEMA = "scratch"  # compilers' temporary tables (engines.suql)
SCRATCH_CATALOG = "memory"
"""The sandbox's own in-memory database: scratch tables live in its ``scratch`` schema."""


class ScratchNames:
    """Fresh names for one sandbox's scratch tables and functions (one counter, safe across threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0

    def fresh(self, prefix: str) -> str:
        with self._lock:
            self._count += 1
            return f"{prefix}{self._count}"


def create_schema(cursor: duckdb.DuckDBPyConnection) -> None:
    """The schema of scratch tables, in the sandbox's own in-memory database."""
    schema = exp.Create(
        this=exp.Table(this=exp.to_identifier(SCRATCH_SCHEMA), db=exp.to_identifier(SCRATCH_CATALOG)),
        kind="SCHEMA",
        exists=True,
    )
    _run_internal(cursor, schema, duckdb.StatementType.CREATE)


def scratch_ref(name: str) -> exp.Table:
    """The (quoted) reference of scratch table ``name``."""
    return exp.table_(
        exp.to_identifier(name, quoted=True),
        db=exp.to_identifier(SCRATCH_SCHEMA, quoted=True),
        catalog=exp.to_identifier(SCRATCH_CATALOG, quoted=True),
    )


@contextmanager
def scratch_table(
    open_cursor: Callable[[], duckdb.DuckDBPyConnection],
    names: ScratchNames,
    columns: Sequence[tuple[str, str]],
    rows: Sequence[Sequence[Any]],
) -> Iterator[exp.Table]:
    """A table of ``rows`` in the ``memory.scratch`` schema for the duration of the block (see
    :meth:`engines.sql.sandbox.Sandbox.scratch_table`); ``open_cursor`` gives a fresh cursor."""
    if not columns:
        raise SqlFailed("A scratch table needs at least one column.")
    types = [plain_type(t) for _, t in columns]
    name = names.fresh("t")
    table = scratch_ref(name)
    cursor = open_cursor()
    try:
        ddl = exp.Create(
            this=exp.Schema(
                this=table.copy(),
                expressions=[
                    exp.ColumnDef(this=exp.to_identifier(c, quoted=True), kind=t.copy())
                    for (c, _), t in zip(columns, types)
                ],
            ),
            kind="TABLE",
        )
        _run_internal(cursor, ddl, duckdb.StatementType.CREATE)
        if rows:
            # one list parameter per column, unnested side by side (each cast to its column's type)
            values = [[row[i] for row in rows] for i in range(len(columns))]
            insert = columns_insert(table, types)
            _run_internal(cursor, insert, duckdb.StatementType.INSERT, values)
        yield table.copy()  # callers may alias it; the DROP below uses the plain name
    except duckdb.Error as e:
        raise _from_duckdb(e, f"-- scratch table {name}") from e
    finally:
        try:
            _run_internal(cursor, exp.Drop(tables=[table.copy()], kind="TABLE", exists=True), duckdb.StatementType.DROP)
        except duckdb.Error:
            pass
        finally:
            cursor.close()


@contextmanager
def registered_function(
    con: duckdb.DuckDBPyConnection,
    names: ScratchNames,
    prefix: str,
    fn: Callable[..., Any],
    parameters: Sequence[str],
    return_type: str,
) -> Iterator[str]:
    """A Python scalar function registered on ``con`` under a fresh name for the duration of the block."""
    name = names.fresh(f"{prefix}_")
    try:
        con.create_function(
            name, fn, list(parameters), return_type, side_effects=True, null_handling=FunctionNullHandling.SPECIAL
        )
    except duckdb.Error as e:
        raise SqlFailed(f"Could not register {prefix}: {e}") from e
    try:
        yield name
    finally:
        try:
            con.remove_function(name)
        except duckdb.Error:
            pass
