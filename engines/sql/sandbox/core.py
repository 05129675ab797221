"""The :class:`Sandbox`: a locked DuckDB connection that runs only validated, read-only queries."""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import Any

import duckdb
from sqlglot import exp

from engines.errors import ConfigurationError, EngineError
from engines.sql.sandbox.connection import Limits
from engines.sql.sandbox.errors import SqlFailed, _from_duckdb
from engines.sql.sandbox.gate import DIALECTS, check, runnable
from engines.sql.sandbox.opening import (
    WORLD_DATABASE,
    Loader,
    _remove_workdir,
    attach_read_only,
    database_path,
    fill_database,
    loader_config,
    new_workdir,
)
from engines.sql.sandbox.policy import validate
from engines.sql.sandbox.results import QueryResult
from engines.sql.sandbox.running import execute, single_select
from engines.sql.sandbox.scratch import (
    SCRATCH_CATALOG,
    SCRATCH_SCHEMA,
    ScratchNames,
    create_schema,
    registered_function,
    scratch_ref,
    scratch_table,
)
from engines.sql.sandbox.statements import checked_sql

DEFAULT_ROW_CAP = 10_000
DEFAULT_TIMEOUT_S = 5.0


def _use(database: str) -> exp.Use:
    return exp.Use(this=exp.to_identifier(database))


class Sandbox:
    """A locked DuckDB connection that runs only validated, read-only queries.

    Safe to use from several threads at once: every query runs on its own cursor.
    Build one with :meth:`create` (a loader fills a database that is then attached
    read-only) or :meth:`open_database` (an existing DuckDB file, read-only), or pass a
    connection made by :func:`connect`, loaded, and :func:`lock`-ed.  The sandbox owns the
    connection: :meth:`close` closes it and removes its temporary files.

    With :meth:`create` and :meth:`open_database` the tables a query sees live in a database
    attached ``READ_ONLY`` under the name ``world`` (every cursor starts with ``USE world``):
    even a statement that slipped past the gate cannot change, drop or add to them.  Scratch
    tables live apart, in the in-memory ``memory.scratch`` schema.
    """

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        *,
        row_cap: int = DEFAULT_ROW_CAP,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        dialects: Sequence[str] = DIALECTS,
        database: str | None = None,
        workdir: str | None = None,
    ) -> None:
        if row_cap < 1:
            raise ConfigurationError(f"row_cap must be at least 1, not {row_cap}.")
        if not timeout_s > 0:
            raise ConfigurationError(f"timeout_s must be positive, not {timeout_s}.")
        external, locked = con.execute(
            "SELECT current_setting('enable_external_access'), current_setting('lock_configuration')"
        ).fetchall()[0]  # fetchall: no unfinished result may stay on the connection
        if external or not locked:
            raise ConfigurationError(
                "The sandbox needs a connection with external access disabled and the configuration "
                "locked: open it with engines.sql.sandbox.connect() and call lock() once loaded."
            )
        self._con = con
        self._database = database  # the read-only database queries see, or None (tables in memory)
        self._cleanup = weakref.finalize(self, _remove_workdir, workdir) if workdir else None
        self._scratch_names = ScratchNames()
        cursor = con.cursor()
        try:
            create_schema(cursor)
            # every cursor starts with ``USE <database>``: built and checked (one SET statement) once here
            self._use_sql = None if database is None else checked_sql(cursor, _use(database), duckdb.StatementType.SET)
        finally:
            cursor.close()
        self._table_types: dict[tuple[str, str], list[tuple[str, str]]] = {}  # base tables never change
        self.row_cap = row_cap
        self.timeout_s = timeout_s
        self.dialects = tuple(dialects)

    @classmethod
    def create(
        cls,
        loader: Loader,
        *,
        row_cap: int = DEFAULT_ROW_CAP,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        memory_limit: str | None = None,
        limits: Limits | None = None,
        read_paths: Sequence[str | os.PathLike[str]] = (),
    ) -> Sandbox:
        """Let ``loader`` fill a fresh database, then serve it read-only.

        The loader runs with full SQL power but no file or network access, on a database in a
        private temporary folder; errors it raises propagate unchanged (and the folder is
        removed).  The filled database is then attached read-only (:meth:`open_database`).

        ``read_paths``: files the loader may read (DuckDB's ``allowed_paths``; a user's CSV or
        Parquet file read with ``read_csv(?)``); every other path stays closed to it.  Only the
        loader runs on that connection; the queries the sandbox serves later never see it.
        """
        limits = limits or Limits()
        if memory_limit is not None:
            limits = replace(limits, memory_limit=memory_limit)
        workdir = new_workdir()
        try:
            path = fill_database(loader, workdir, limits, read_paths)
            return cls._attach(path, row_cap=row_cap, timeout_s=timeout_s, limits=limits, workdir=workdir)
        except BaseException:
            _remove_workdir(workdir)
            raise

    @classmethod
    def create_external(
        cls,
        fill: Callable[[str, dict[str, Any]], None],
        *,
        row_cap: int = DEFAULT_ROW_CAP,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        limits: Limits | None = None,
    ) -> Sandbox:
        """:meth:`create` for a loader that runs elsewhere (another process, which can be killed at a deadline).

        ``fill(path, config)`` must fill a fresh DuckDB database file at ``path`` (in a private temporary
        folder) through a connection opened with ``config``, and close it before returning; it must turn
        external access off and lock the configuration once it has set the ``allowed_paths`` it reads.
        The database is then attached read-only (:meth:`open_database`).  Errors ``fill`` raises propagate
        unchanged, and the folder is removed."""
        limits = limits or Limits()
        workdir = new_workdir()
        try:
            path = database_path(workdir)
            fill(path, loader_config(workdir, limits))
            return cls._attach(path, row_cap=row_cap, timeout_s=timeout_s, limits=limits, workdir=workdir)
        except BaseException:
            _remove_workdir(workdir)
            raise

    @classmethod
    def open_database(
        cls,
        path: str | os.PathLike[str],
        *,
        row_cap: int = DEFAULT_ROW_CAP,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        limits: Limits | None = None,
    ) -> Sandbox:
        """A sandbox over an existing DuckDB database file, attached read-only: nothing any
        query does can change the file.  Raises :class:`SqlFailed` if DuckDB cannot open it."""
        workdir = new_workdir()
        try:
            return cls._attach(
                os.fspath(path), row_cap=row_cap, timeout_s=timeout_s, limits=limits or Limits(), workdir=workdir
            )
        except BaseException:
            _remove_workdir(workdir)
            raise

    @classmethod
    def _attach(cls, path: str, *, row_cap: int, timeout_s: float, limits: Limits, workdir: str) -> Sandbox:
        con = attach_read_only(path, limits, workdir)
        try:
            return cls(con, row_cap=row_cap, timeout_s=timeout_s, database=WORLD_DATABASE, workdir=workdir)
        except BaseException:
            con.close()
            raise

    # -- the gate --------------------------------------------------------------------------

    def check(self, sql: str) -> exp.Expr:
        """Validate ``sql`` without running it; returns the parsed tree.

        Raises :class:`SqlRefused` or :class:`SqlFailed`.  Never touches DuckDB.
        """
        return check(sql, self.dialects)

    def run(self, sql: str) -> QueryResult:
        """Validate, transpile to DuckDB SQL and execute ``sql``.

        Returns at most ``row_cap`` rows.  Raises :class:`SqlRefused`,
        :class:`SqlFailed` or :class:`SqlTimedOut`, never a DuckDB or sqlglot error.
        """
        duckdb_sql = runnable(self.check(sql))
        return self._execute(duckdb_sql)

    def _execute(self, sql: str) -> QueryResult:
        return execute(self._cursor(), sql, row_cap=self.row_cap, timeout_s=self.timeout_s)

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        try:
            cursor = self._con.cursor()
        except duckdb.Error as e:
            raise SqlFailed(f"The database is not available: {e}") from e
        if self._use_sql is not None:
            try:
                cursor.execute(self._use_sql)
            except duckdb.Error as e:
                cursor.close()
                raise SqlFailed(f"The database is not available: {e}") from e
        return cursor

    # -- introspection and lifetime ---------------------------------------------------------

    def tables(self) -> list[tuple[str, str, list[tuple[str, str]]]]:
        """The loaded tables and views (scratch tables left out): (schema, name, [(column, DuckDB type)]),
        in the order DuckDB lists them (by schema, then name), columns in their table's order."""
        cursor = self._cursor()
        query = (
            "SELECT schema_name, table_name, column_name, data_type FROM duckdb_columns() "
            "WHERE NOT internal AND database_name = ? AND schema_name <> ? "
            "ORDER BY schema_name, table_name, column_index"
        )
        try:
            rows = cursor.execute(query, [self._database or SCRATCH_CATALOG, SCRATCH_SCHEMA]).fetchall()
        except duckdb.Error as e:
            raise _from_duckdb(e, "") from e
        finally:
            cursor.close()
        out: list[tuple[str, str, list[tuple[str, str]]]] = []
        for schema, table, column, typ in rows:
            if not out or out[-1][:2] != (schema, table):
                out.append((str(schema), str(table), []))
            out[-1][2].append((str(column), str(typ)))
        return out

    def schema(self) -> str:
        """The ``CREATE`` statements of the loaded tables and views (scratch tables left out)."""
        cursor = self._cursor()
        query = (
            "SELECT sql FROM duckdb_tables() WHERE NOT internal AND database_name = ? AND schema_name <> ? "
            "UNION ALL SELECT sql FROM duckdb_views() WHERE NOT internal AND database_name = ? AND schema_name <> ?"
        )
        database = self._database or SCRATCH_CATALOG
        try:
            rows = cursor.execute(query, [database, SCRATCH_SCHEMA, database, SCRATCH_SCHEMA]).fetchall()
        except duckdb.Error as e:
            raise _from_duckdb(e, "") from e
        finally:
            cursor.close()
        return "\n\n".join(str(sql).strip() for (sql,) in rows if sql)

    # -- for compilers built on the gate (SUQL) --------------------------------------------------
    #
    # A compiler rewrites a *validated* tree (adding references to its scratch tables and
    # functions) and runs the result here.  The tree is validated again before it runs, so
    # the policy still applies; only the compiler itself may create scratch tables or
    # register functions, never the SQL it is given.

    def run_tree(self, expression: exp.Expr) -> QueryResult:
        """Validate, transpile and execute an already parsed query."""
        validate(expression)
        duckdb_sql = runnable(expression)
        return self._execute(duckdb_sql)

    def columns_of(self, expression: exp.Expr) -> list[tuple[str, str]]:
        """Names and DuckDB types of a query's result columns, without running it.

        The query passes the same checks as :meth:`run_tree` (validated, one SELECT to DuckDB's
        own parser); DuckDB then only binds it.
        """
        validate(expression)
        sql = runnable(expression)
        cursor = self._cursor()
        try:
            statement = single_select(cursor, sql)
            relation = cursor.sql(statement.query)
            return [(str(name), str(typ)) for name, typ in zip(relation.columns, relation.types)]
        except duckdb.Error as e:
            raise _from_duckdb(e, sql) from e
        finally:
            cursor.close()

    def column_types(self, expression: exp.Expr) -> dict[str, str]:
        """Column name -> DuckDB type over every base table the query reads (the first table wins a
        name they share); tables it cannot describe (CTE names, scratch tables gone) are skipped."""
        types: dict[str, str] = {}
        for table in expression.find_all(exp.Table):
            if not table.name:
                continue
            key = (table.db, table.name)
            columns = self._table_types.get(key)
            if columns is None:
                try:
                    columns = self.columns_of(exp.select("*").from_(exp.table_(table.name, db=table.db or None)))
                except EngineError:
                    continue
                if table.db != SCRATCH_SCHEMA:  # the read-only world's tables: described once
                    self._table_types[key] = columns
            for name, typ in columns:
                types.setdefault(name, typ)
        return types

    def scratch(self, name: str) -> exp.Table:
        """The (quoted) reference of scratch table ``name``."""
        return scratch_ref(name)

    def scratch_table(
        self, columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[Any]]
    ) -> AbstractContextManager[exp.Table]:
        """A table of ``rows`` in the ``memory.scratch`` schema for the duration of the block.

        ``columns`` are (name, DuckDB type) pairs: names may hold any text (they are quoted),
        types must be plain built-in types (:func:`plain_type`), and the rows go in as parameters.
        Visible to every cursor; dropped on exit.
        """
        return scratch_table(self._cursor, self._scratch_names, columns, rows)

    def function(
        self, prefix: str, fn: Callable[..., Any], parameters: Sequence[str], return_type: str
    ) -> AbstractContextManager[str]:
        """Register a Python scalar function under a fresh name for the duration of the block."""
        return registered_function(self._con, self._scratch_names, prefix, fn, parameters, return_type)

    def close(self) -> None:
        """Close the connection and remove its temporary files; later queries fail with :class:`SqlFailed`."""
        self._con.close()
        if self._cleanup is not None:
            self._cleanup()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
