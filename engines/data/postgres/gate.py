"""The gate over PostgreSQL: plain ``sql``/``ask`` queries run entirely on the server.

:class:`PostgresGate` is what :class:`engines.sql.sandbox.Sandbox` is for DuckDB: a query passes the
sandbox's gate (:func:`engines.sql.sandbox.check`) and then :func:`engines.data.postgres.policy.pg_policy`;
what is sent is built from the tree (names quoted, string values as parameters) and checked once more as
PostgreSQL reads it back.  The result streams through a server-side cursor and stops at the row cap, so an
aggregate over millions of rows returns one row, not millions.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from engines.data.postgres.catalog import PgCatalog, _display_to_duck, _duck_type
from engines.data.postgres.connection import _cancel_on, _Connection, _pg_error, psycopg
from engines.data.postgres.policy import _parametrise, _pg_names, _qualified, _to_postgres, pg_policy
from engines.errors import Cancelled
from engines.sql.sandbox import QueryResult, SqlFailed, SqlRefused, check, validate

FETCH_BATCH = 5_000
"""Rows fetched from PostgreSQL per round trip (server-side cursor)."""


class PostgresGate:
    """The SQL gate over a PostgreSQL database: what :class:`engines.sql.sandbox.Sandbox` is for DuckDB.

    :meth:`run` and :meth:`run_tree` run a checked query on PostgreSQL itself (read-only transaction,
    statement timeout, string values as parameters, a server-side cursor read up to ``row_cap`` rows).
    There are no scratch tables or functions: SUQL runs through :class:`PostgresSuqlEngine`.
    """

    def __init__(self, conn: _Connection, catalog: PgCatalog, *, row_cap: int, timeout_s: float) -> None:
        self._conn = conn
        self.catalog = catalog
        self.tables_by_name = catalog.tables
        self.row_cap = row_cap
        self.timeout_s = timeout_s
        self.dialects = ("postgres", "duckdb")
        self.statements: list[tuple[str, tuple[Any, ...]]] = []  # what was sent (the last few), for tests and the UI

    # -- the gate's interface --

    def check(self, sql: str) -> exp.Expr:
        tree = check(sql, self.dialects)
        try:
            pg_policy(tree, self.catalog)
        except SqlRefused as e:
            e.sql = sql
            raise
        return tree

    def run(self, sql: str) -> QueryResult:
        return self._run_checked(self.check(sql))

    def run_tree(self, expression: exp.Expr) -> QueryResult:
        validate(expression)
        pg_policy(expression, self.catalog)
        return self._run_checked(expression)

    def sent(self, tree: exp.Expr) -> tuple[str, list[Any]]:
        """The text sent for a checked tree, and its parameters' values: names folded as PostgreSQL folds them
        and quoted, string values as parameters, read back as PostgreSQL reads that text and checked again,
        then the schema's relations and types qualified with their schema in that reading (the session's
        search_path holds pg_catalog alone), and the result checked once more."""
        sent, values = _parametrise(_pg_names(tree))
        again = self._recheck(_to_postgres(sent))
        sql = _to_postgres(_qualified(again, self.catalog))
        self._recheck(sql)
        return sql, values

    def _run_checked(self, tree: exp.Expr) -> QueryResult:
        sql, values = self.sent(tree)
        started = time.perf_counter()
        columns, rows = self.fetch(sql, values, self.row_cap + 1)
        return QueryResult(
            sql=sql,
            columns=columns,
            rows=tuple(rows[: self.row_cap]),
            truncated=len(rows) > self.row_cap,
            elapsed_s=time.perf_counter() - started,
        )

    def _recheck(self, sql: str) -> exp.Expression:
        """The policy again, on PostgreSQL's reading of what is sent; returns that reading."""
        try:
            again = sqlglot.parse_one(sql, read="postgres")
        except (SqlglotError, RecursionError) as e:
            raise SqlFailed(f"The query translated to PostgreSQL does not read back: {e}", sql=sql) from None
        if not isinstance(again, exp.Expression):  # a function call or a condition alone: never a SELECT's text
            raise SqlFailed("The query translated to PostgreSQL does not read back as a statement.", sql=sql)
        validate(again)
        pg_policy(again, self.catalog, own_parameters=True)
        return again

    def fetch(
        self,
        sql: str,
        values: Sequence[Any],
        limit: int,
        *,
        each: Callable[[list[tuple[Any, ...]]], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> tuple[tuple[str, ...], list[tuple[Any, ...]]]:
        """Run one SELECT through a server-side cursor and read at most ``limit`` rows (all of them handed
        to ``each`` in batches instead of kept, when given).  Setting ``cancel`` cancels the statement
        running on the server (Esc in the app) and raises :class:`Cancelled`."""
        self.statements = [*self.statements[-19:], (sql, tuple(values))]
        kept: list[tuple[Any, ...]] = []
        try:
            with self._conn.transaction() as con, _cancel_on(con, cancel):
                with psycopg.RawServerCursor(con, "cs224v_query") as cur:
                    cur.execute(sql, list(values))
                    columns = tuple(d.name for d in cur.description or ())
                    got = 0
                    while got < limit:
                        batch = cur.fetchmany(min(FETCH_BATCH, limit - got))
                        if not batch:
                            break
                        got += len(batch)
                        if each is not None:
                            each(batch)
                        else:
                            kept.extend(batch)
        except psycopg.Error as e:
            if cancel is not None and cancel.is_set():
                raise Cancelled() from e
            raise _pg_error(e, sql, self.timeout_s) from e
        except (ValueError, OverflowError) as e:  # a value Python cannot hold (a date past year 9999)
            raise SqlFailed(f"PostgreSQL returned a value Python cannot read: {e}", sql=sql) from e
        return columns, kept

    def column_types(self, expression: exp.Expr) -> dict[str, str]:
        """Column name -> DuckDB type over the described tables the query reads (for the read-back)."""
        types: dict[str, str] = {}
        for t in expression.find_all(exp.Table):
            table = self.tables_by_name.get(t.name)
            if table is None:
                continue
            for c in table.columns:
                types.setdefault(c.name, c.duck_type)
        return types

    def columns_of(self, expression: exp.Expression) -> list[tuple[str, str]]:
        """Names and (DuckDB-style) types of a query's result columns: the query runs with LIMIT 0."""
        probe = (
            exp.select("*").from_(exp.paren(expression.copy()).as_("q"))
            if not isinstance(expression, exp.Select)
            else expression.copy()
        )
        probe = probe.limit(0)
        validate(probe)
        pg_policy(probe, self.catalog)
        sql, values = self.sent(probe)
        try:
            with self._conn.transaction() as con, psycopg.RawCursor(con) as cur:
                cur.execute(sql, values)
                return [(d.name, _display_to_duck(d.type_display)) for d in cur.description or ()]
        except psycopg.Error as e:
            raise _pg_error(e, sql, self.timeout_s) from e

    def tables(self) -> list[tuple[None, str, list[tuple[str, str]]]]:
        return [(None, t.name, [(c.name, c.duck_type) for c in t.columns]) for t in self.tables_by_name.values()]

    def scratch_table(self, *args: Any, **kwargs: Any) -> Any:
        raise SqlFailed("A PostgreSQL source has no scratch tables: SUQL runs through PostgresSuqlEngine.")

    def function(self, *args: Any, **kwargs: Any) -> Any:
        raise SqlFailed("A PostgreSQL source runs no local functions: SUQL runs through PostgresSuqlEngine.")

    def schema(self) -> str:
        return "\n\n".join(
            exp.Create(
                this=exp.Schema(
                    this=exp.to_identifier(t.name, quoted=True),
                    expressions=[
                        exp.ColumnDef(this=exp.to_identifier(c.name, quoted=True), kind=_duck_type(c.duck_type))
                        for c in t.columns
                    ],
                ),
                kind="TABLE",
            ).sql(dialect="duckdb")
            for t in self.tables_by_name.values()
        )

    def close(self) -> None:
        self._conn.close()
