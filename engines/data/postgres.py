"""A PostgreSQL database as a data source (``--db postgresql://user@host:port/db``).

The engine never writes to the database, and PostgreSQL never sees text it did not build itself:

* **Read-only.**  Every transaction is ``BEGIN READ ONLY`` (psycopg's ``read_only``) on a session whose
  ``default_transaction_read_only`` is on, and every statement runs under ``statement_timeout`` (the
  ``query_timeout_s`` setting), set with ``set_config()`` and a parameter.  A write that got past every
  other check still fails in PostgreSQL itself.  For data you care about, connect as a role that only
  has ``SELECT`` (the README shows how).
* **The gate first.**  What the user (or a model) writes passes the sandbox's gate
  (:func:`engines.sql.sandbox.check`: one SELECT, no statements, no file readers ...) and then this
  module's PostgreSQL rules (:func:`pg_policy`): only the database's own tables (never ``pg_catalog``
  or ``information_schema``), no functions that run SQL hidden in a string (``query_to_xml``,
  ``dblink``, ``ts_stat``), change settings (``set_config``) or reach the server's files and processes
  (``pg_*`` admin functions, ``lo_*``), no row locks, no parameters of its own.
* **Built, not pasted.**  Statements are sqlglot trees transpiled to PostgreSQL with every identifier
  quoted; string values become ``$n`` parameters (psycopg's raw cursors send them apart from the text).

Two ways a query runs:

* Plain ``sql``/``ask`` queries run **entirely on PostgreSQL** (:meth:`PostgresGate.run`): an aggregate
  over millions of rows returns one row, not millions.  The result streams through a server-side
  cursor and stops at the row cap.
* SUQL (:class:`PostgresSuqlEngine`): the structured part runs on PostgreSQL — for each base table the
  query reads, :mod:`engines.data.postgres_pushdown` computes the filter every row the query can use
  must pass and the columns it reads; that SELECT streams its candidate rows into a fresh local DuckDB
  sandbox, where the unchanged :class:`engines.suql.execute.SuqlEngine` runs the query: only answer()
  values and the final projection are computed locally, and answer() only ever sees filtered rows.

Whose semantics: a plain query is PostgreSQL's (an enum orders by its labels, text by the database's
collation).  A SUQL query is DuckDB's, exactly as over a DuckDB copy of the same tables: the pushed
filter is written so PostgreSQL never rejects a row DuckDB would keep (enums compared as text, text
order under ``COLLATE "C"``, nothing pushed whose reading differs), and a filter PostgreSQL cannot run
falls back to every row.  In the retrieval modes (E, F) BM25 scores the loaded candidates, so the
visit order can differ from a DuckDB copy's, which indexes the whole table.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import duckdb
import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

from engines.data.describe import SchemaDescription, TableInfo, describe
from engines.data.postgres_pushdown import TableFilter, candidate_filters
from engines.data.source import DataSource, DataSourceError
from engines.errors import Cancelled, EngineError
from engines.events import Emit, Event, ignore
from engines.settings import Settings
from engines.sql.sandbox import (
    MAX_LIST_ELEMENTS,
    MAX_STRING_CHARS,
    Limits,
    QueryResult,
    Sandbox,
    SqlFailed,
    SqlRefused,
    SqlTimedOut,
    check,
    columns_insert,
    validate,
)

try:  # psycopg is a core dependency; without it PostgreSQL sources say how to get it
    import psycopg
    from psycopg import errors as pg_errors
except ImportError as _e:  # pragma: no cover - exercised only on a broken install
    psycopg = None  # type: ignore[assignment]
    _IMPORT_ERROR: ImportError | None = _e
else:
    _IMPORT_ERROR = None

__all__ = [
    "CandidatesLoaded",
    "PostgresGate",
    "PostgresSource",
    "PostgresSuqlEngine",
    "open_postgres",
    "pg_policy",
    "redact",
]

FETCH_BATCH = 5_000
"""Rows fetched from PostgreSQL per round trip (server-side cursor)."""
DESCRIBE_SAMPLE = 100_000
"""Statistics of a column (its role) are read from at most this many rows of its table."""
LABEL_COLUMNS = ("name", "Name", "title", "Title", "course_id", "id")  # engines.suql RowNames.label_column


# --- errors, names ---------------------------------------------------------------------------------------


def redact(url: str) -> str:
    """The URL without its password (what the app and the CLI show)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "postgresql://…"
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = (parts.username or "") + ":***"
    return urlunsplit(parts._replace(netloc=f"{user}@{netloc[-1]}"))


def _message(e: Exception) -> str:
    diag = getattr(e, "diag", None)
    primary = getattr(diag, "message_primary", None) if diag is not None else None
    text = primary or str(e).strip() or type(e).__name__
    return text.splitlines()[0] if text else type(e).__name__


def _pg_error(e: Exception, sql: str, timeout_s: float) -> SqlFailed:
    if psycopg is not None and isinstance(e, pg_errors.QueryCanceled):
        return SqlTimedOut(
            f"The query ran longer than {timeout_s:g} s on PostgreSQL and was stopped (statement_timeout).", sql=sql
        )
    if psycopg is not None and isinstance(e, pg_errors.ReadOnlySqlTransaction):
        return SqlFailed(f"PostgreSQL refused to write: this connection is read-only ({_message(e)}).", sql=sql)
    return SqlFailed(f"PostgreSQL: {_message(e)}", sql=sql)


# --- types: PostgreSQL -> DuckDB ------------------------------------------------------------------------

_SCALARS: dict[str, str] = {
    "int2": "SMALLINT",
    "int4": "INTEGER",
    "int8": "BIGINT",
    "float4": "REAL",
    "float8": "DOUBLE",
    "bool": "BOOLEAN",
    "text": "VARCHAR",
    "varchar": "VARCHAR",
    "bpchar": "VARCHAR",
    "name": "VARCHAR",
    "citext": "VARCHAR",
    "date": "DATE",
    "timestamp": "TIMESTAMP",
    "timestamptz": "TIMESTAMP WITH TIME ZONE",
    "time": "TIME",
    "interval": "INTERVAL",
    "uuid": "UUID",
    "bytea": "BLOB",
}


# Types whose comparisons read the same in PostgreSQL and DuckDB (see engines.data.postgres_pushdown.KINDS);
# char(n) (blank-padded comparison), citext (case-blind), timestamptz (the session's time zone) ... are not.
_PLAIN = frozenset({"int2", "int4", "int8", "float4", "float8", "numeric", "bool", "date", "timestamp"})
_TEXT = frozenset({"text", "varchar", "name"})


@dataclass(frozen=True)
class PgColumn:
    name: str
    duck_type: str  # the DuckDB type it becomes (VARCHAR, DECIMAL(2,1), VARCHAR[], ENUM('a', 'b') ...)
    as_text: bool = False  # fetched as text (a type DuckDB has no twin for: json, inet, ranges ...)
    is_list: bool = False
    kind: str = "other"  # how a condition on it may be pushed down (engines.data.postgres_pushdown.KINDS)


@dataclass(frozen=True)
class PgTable:
    name: str
    columns: tuple[PgColumn, ...]
    primary_key: str | None = None

    def column(self, name: str) -> PgColumn | None:
        return next((c for c in self.columns if c.name == name), None)


def _numeric(typmod: int) -> str:
    if typmod is None or typmod < 4:
        return "DOUBLE"  # numeric without a precision: any size
    precision, scale = ((typmod - 4) >> 16) & 0xFFFF, (typmod - 4) & 0xFFFF
    return f"DECIMAL({precision},{scale})" if 0 < precision <= 38 and scale <= precision else "DOUBLE"


def _enum_type(labels: Sequence[str]) -> str:
    return exp.DataType(this=exp.DataType.Type.ENUM, expressions=[exp.Literal.string(v) for v in labels]).sql(
        dialect="duckdb"
    )


def _column(name: str, typname: str, typtype: str, elem: str | None, elem_typtype: str | None, typmod: int,
            labels: tuple[str, ...]) -> PgColumn:  # fmt: skip
    """``labels``: an enum type's labels in their order (empty for other types)."""
    if elem is not None:  # an array
        if elem in _SCALARS or elem == "numeric":
            base = _numeric(typmod) if elem == "numeric" else _SCALARS[elem]
            exact = elem != "numeric" or base != "DOUBLE"  # numeric[] without a precision: DOUBLE[] here
            kind = "list" if (elem in _PLAIN or elem in _TEXT) and exact else "other"
            return PgColumn(name, f"{base}[]", is_list=True, kind=kind)
        kind = "enum_list" if elem_typtype == "e" else "other"
        return PgColumn(name, "VARCHAR[]", as_text=True, is_list=True, kind=kind)  # enum[] and others: as text[]
    if typname == "numeric":  # without a precision it becomes DOUBLE here: compared as DOUBLE there too
        duck = _numeric(typmod)
        return PgColumn(name, duck, kind="double" if duck == "DOUBLE" else "plain")
    if typname in _SCALARS:
        kind = "plain" if typname in _PLAIN else "text" if typname in _TEXT else "other"
        return PgColumn(name, _SCALARS[typname], kind=kind)
    if typtype == "e" and labels:
        return PgColumn(name, _enum_type(labels), kind="enum")
    return PgColumn(name, "VARCHAR", as_text=True)


_CATALOG_SQL = """
SELECT c.relname, a.attname, t.typname, t.typtype, et.typname, et.typtype, a.atttypmod, t.oid
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
LEFT JOIN pg_catalog.pg_type et ON et.oid = t.typelem AND t.typcategory = 'A'
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND has_table_privilege(c.oid, 'SELECT')
ORDER BY c.relname, a.attnum
"""
_ENUM_SQL = """
SELECT e.enumtypid, e.enumlabel FROM pg_catalog.pg_enum e ORDER BY e.enumtypid, e.enumsortorder
"""
_PK_SQL = """
SELECT c.relname, a.attname
FROM pg_catalog.pg_index i
JOIN pg_catalog.pg_class c ON c.oid = i.indrelid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum = i.indkey[0]
WHERE i.indisprimary AND i.indnatts = 1 AND n.nspname = current_schema()
"""
# Fixed catalog queries (no input in them): run as they are.


# --- the policy for SQL that reaches PostgreSQL -----------------------------------------------------------

_PG_ALLOWED_PG_FUNCTIONS = frozenset({"pg_sleep", "pg_typeof"})  # harmless (pg_sleep: the timeout cuts it)
_PG_DENIED = {
    "set_config": "it changes the server's settings",
    "ts_stat": "it runs SQL hidden in a string",
    "current_setting": "it reads the configuration",
}
_PG_DENIED_PREFIXES = {
    "query_to_xml": "it runs SQL hidden in a string",
    "table_to_xml": "it reads tables named in a string",
    "cursor_to_xml": "it reads a cursor",
    "schema_to_xml": "it reads whole schemas",
    "database_to_xml": "it reads the whole database",
    "crosstab": "it runs SQL hidden in a string",
    "dblink": "it connects to other databases",
    "lo_": "it reads or writes the server's large objects and files",
    "pg_": "it is a server administration or file function",
    "txid_": "it reads transaction state",
}
_TABLE_FUNCTIONS = (exp.GenerateSeries, getattr(exp, "ExplodingGenerateSeries", exp.GenerateSeries), exp.Unnest)


def _function_names(node: exp.Func) -> set[str]:
    names = {n.lower() for n in type(node).sql_names()}
    if isinstance(node, (exp.Anonymous, exp.AnonymousAggFunc)):
        names.add(node.name.lower())
    return names


def pg_policy(tree: exp.Expression, tables: Sequence[str], *, own_parameters: bool = False) -> None:
    """PostgreSQL's rules on top of the gate's: raises :class:`SqlRefused`.

    ``tables``: the database's tables a query may read.  ``own_parameters``: the tree holds ``$n``
    parameters this module put there (the re-check of what is sent).
    """
    known = {t.lower(): t for t in tables}
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    for node in tree.walk():
        if isinstance(node, (exp.Parameter, exp.Placeholder)) and not own_parameters:
            raise SqlRefused("Parameters ($1, ?, %s) cannot be used in a query here: write the values themselves.")
        if isinstance(node, exp.Lock):
            raise SqlRefused("Row locks (FOR UPDATE / FOR SHARE) are refused: queries here only read.")
        if isinstance(node, (exp.Repeat, exp.Pad)) or (
            isinstance(node, exp.Anonymous) and node.name.lower() in ("repeat", "lpad", "rpad", "array_fill")
        ):
            _bounded_size(node)
        if isinstance(node, exp.Func):
            for name in sorted(_function_names(node)):
                reason = _PG_DENIED.get(name)
                if reason is None and name not in _PG_ALLOWED_PG_FUNCTIONS:
                    reason = next((r for p, r in _PG_DENIED_PREFIXES.items() if name.startswith(p)), None)
                if reason is not None:
                    raise SqlRefused(
                        f"The function {name}() is refused on a PostgreSQL source: {reason}. "
                        "Queries may only read the database's tables."
                    )
        if isinstance(node, exp.Table):
            if isinstance(node.this, _TABLE_FUNCTIONS):
                continue
            if not isinstance(node.this, exp.Identifier):
                raise SqlRefused(f"Reading from {node.this.sql(dialect='postgres')} is refused: name a table.")
            if node.args.get("catalog") or node.args.get("db"):
                raise SqlRefused(
                    f"The table {node.sql(dialect='postgres')} is refused: name the database's tables without a "
                    f"schema ({', '.join(sorted(tables)) or 'none'})."
                )
            name = node.name.lower()
            if name in ctes:
                continue
            if name not in known:
                raise SqlRefused(
                    f"There is no table {node.name!r} in this database; its tables are: "
                    f"{', '.join(sorted(tables)) or 'none'}."
                )


def _literal_number(node: exp.Expression | None) -> float | None:
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            return float(node.name)
        except ValueError:
            return None
    return None


def _bounded_size(node: exp.Expression) -> None:
    """A call that builds one long string or array must say how long, as a number within the gate's bounds
    (the sandbox guards the same calls in DuckDB; PostgreSQL would build up to 1 GB per value)."""
    if isinstance(node, exp.Anonymous):
        name, args = node.name.lower(), list(node.expressions)
        size_arg = args[1] if len(args) > 1 else None
    else:
        name = "repeat" if isinstance(node, exp.Repeat) else ("lpad" if node.args.get("is_left") else "rpad")
        size_arg = node.args.get("times") if isinstance(node, exp.Repeat) else node.args.get("expression")
    if name == "array_fill":
        dims = [_literal_number(d) for d in (size_arg.expressions if isinstance(size_arg, exp.Array) else [])]
        size = math.prod(dims) if dims and all(d is not None for d in dims) else None
        limit = MAX_LIST_ELEMENTS
    else:
        size = _literal_number(size_arg)
        text = node.this if not isinstance(node, exp.Anonymous) else (node.expressions or [None])[0]
        width = len(text.name) if isinstance(text, exp.Literal) and text.is_string else 1_000
        if size is not None and name == "repeat":
            size *= max(1, width)
        limit = MAX_STRING_CHARS
    if size is None or size > limit:
        raise SqlRefused(
            f"{name}() must be given its size as a number, and build at most {limit:,} "
            f"{'elements' if name == 'array_fill' else 'characters'} here."
        )


def _parametrise(tree: exp.Expression) -> tuple[exp.Expression, list[Any]]:
    """The tree with every string value replaced by a ``$n`` parameter, and the values in order.

    Strings that are part of the syntax stay (an INTERVAL's text, a type's parameters); numbers stay
    literals (they came out of the tokenizer as numbers and are checked to be numbers)."""
    values: list[Any] = []

    def swap(node: exp.Expression) -> exp.Expression:
        if not isinstance(node, exp.Literal):
            return node
        if not node.is_string:
            try:
                Decimal(node.name)
            except ArithmeticError:
                raise SqlRefused(f"The value {node.name!r} is not a number.") from None
            return node
        if isinstance(node.parent, (exp.Interval, exp.DataType, exp.DataTypeParam)) or node.find_ancestor(exp.DataType):
            return node
        values.append(node.name)
        return exp.Parameter(this=exp.Literal.number(len(values)))

    return tree.transform(swap, copy=True), values


def _pg_names(tree: exp.Expression) -> exp.Expression:
    """Unquoted names folded to lower case, as PostgreSQL reads them (every name is quoted when sent)."""
    return normalize_identifiers(tree.copy(), dialect="postgres")


def _to_postgres(tree: exp.Expression) -> str:
    try:
        return tree.sql(dialect="postgres", identify=True, comments=False)
    except SqlglotError as e:
        raise SqlFailed(f"The query could not be translated to PostgreSQL: {e}") from e
    except RecursionError:
        raise SqlFailed("The query is nested too deeply to be translated.") from None


# --- the connection ------------------------------------------------------------------------------------


class _Connection:
    """One psycopg connection, read-only, used by one thread at a time; reopened when it broke."""

    def __init__(self, url: str, timeout_s: float) -> None:
        self.url = url
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._con: Any = None
        self._open()

    def _open(self) -> None:
        try:
            con = psycopg.connect(self.url, autocommit=False, connect_timeout=10, application_name="cs224v-tui")
        except psycopg.Error as e:
            raise DataSourceError(f"Could not connect to PostgreSQL at {redact(self.url)}: {_message(e)}") from e
        con.read_only = True  # every transaction: BEGIN READ ONLY
        try:
            with con.cursor() as cur:
                cur.execute(
                    "SELECT set_config('default_transaction_read_only', 'on', false), "
                    "set_config('statement_timeout', %s, false), "
                    "set_config('idle_in_transaction_session_timeout', %s, false)",
                    [str(int(self.timeout_s * 1000)), str(int(max(self.timeout_s, 10) * 6000))],
                )
            con.commit()
        except psycopg.Error as e:
            con.close()
            raise DataSourceError(
                f"PostgreSQL at {redact(self.url)} refused the session settings: {_message(e)}"
            ) from e
        self._con = con

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """A read-only transaction with the statement timeout; rolled back at the end (nothing to keep)."""
        with self._lock:
            if self._con is None or self._con.closed or self._con.broken:
                self._open()
            con = self._con
            try:
                with con.cursor() as cur:
                    cur.execute("SELECT set_config('statement_timeout', %s, true)", [str(int(self.timeout_s * 1000))])
                yield con
            finally:
                try:
                    con.rollback()
                except psycopg.Error:
                    pass

    def close(self) -> None:
        with self._lock:
            if self._con is not None:
                self._con.close()


@contextmanager
def _cancel_on(con: Any, cancel: threading.Event | None) -> Iterator[None]:
    """While the block runs, a set ``cancel`` cancels the connection's running statement on the server."""
    if cancel is None:
        yield
        return
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.05):
            if cancel.is_set():
                try:
                    con.cancel_safe(timeout=5)
                except Exception:  # the statement ended meanwhile, or the server is gone: nothing to stop
                    pass
                return

    watcher = threading.Thread(target=watch, name="pg-cancel", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join(6)


def _catalog(conn: _Connection) -> dict[str, PgTable]:
    with conn.transaction() as con, con.cursor() as cur:
        enums: dict[int, list[str]] = {}
        for oid, label in cur.execute(_ENUM_SQL).fetchall():
            enums.setdefault(oid, []).append(label)
        pks = dict(cur.execute(_PK_SQL).fetchall())
        columns: dict[str, list[PgColumn]] = {}
        for rel, att, typname, typtype, elem, elem_typtype, typmod, oid in cur.execute(_CATALOG_SQL).fetchall():
            labels = tuple(enums.get(oid, ()))
            columns.setdefault(rel, []).append(_column(att, typname, typtype, elem, elem_typtype, typmod, labels))
    return {name: PgTable(name, tuple(cols), pks.get(name)) for name, cols in columns.items()}


# --- the gate: plain queries on PostgreSQL ------------------------------------------------------------------


class PostgresGate:
    """The SQL gate over a PostgreSQL database: what :class:`engines.sql.sandbox.Sandbox` is for DuckDB.

    :meth:`run` and :meth:`run_tree` run a checked query on PostgreSQL itself (read-only transaction,
    statement timeout, string values as parameters, a server-side cursor read up to ``row_cap`` rows).
    There are no scratch tables or functions: SUQL runs through :class:`PostgresSuqlEngine`.
    """

    def __init__(self, conn: _Connection, tables: dict[str, PgTable], *, row_cap: int, timeout_s: float) -> None:
        self._conn = conn
        self.tables_by_name = tables
        self.row_cap = row_cap
        self.timeout_s = timeout_s
        self.dialects = ("postgres", "duckdb")
        self.statements: list[tuple[str, tuple[Any, ...]]] = []  # what was sent (the last few), for tests and the UI

    # -- the gate's interface --

    def check(self, sql: str) -> exp.Expression:
        tree = check(sql, self.dialects)
        try:
            pg_policy(tree, list(self.tables_by_name))
        except SqlRefused as e:
            e.sql = sql
            raise
        return tree

    def run(self, sql: str) -> QueryResult:
        return self._run_checked(self.check(sql))

    def run_tree(self, expression: exp.Expression) -> QueryResult:
        validate(expression)
        pg_policy(expression, list(self.tables_by_name))
        return self._run_checked(expression)

    def _run_checked(self, tree: exp.Expression) -> QueryResult:
        sent, values = _parametrise(_pg_names(tree))
        sql = _to_postgres(sent)
        self._recheck(sql)
        started = time.perf_counter()
        columns, rows = self._fetch(sql, values, self.row_cap + 1)
        return QueryResult(
            sql=sql,
            columns=columns,
            rows=tuple(rows[: self.row_cap]),
            truncated=len(rows) > self.row_cap,
            elapsed_s=time.perf_counter() - started,
        )

    def _recheck(self, sql: str) -> None:
        """The policy again, on PostgreSQL's reading of what is sent."""
        try:
            again = sqlglot.parse_one(sql, read="postgres")
        except (SqlglotError, RecursionError) as e:
            raise SqlFailed(f"The query translated to PostgreSQL does not read back: {e}", sql=sql) from None
        validate(again)
        pg_policy(again, list(self.tables_by_name), own_parameters=True)

    def _fetch(
        self,
        sql: str,
        values: Sequence[Any],
        limit: int,
        *,
        each: Callable[[list[tuple]], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> tuple[tuple[str, ...], list[tuple]]:
        """Run one SELECT through a server-side cursor and read at most ``limit`` rows (all of them handed
        to ``each`` in batches instead of kept, when given).  Setting ``cancel`` cancels the statement
        running on the server (Esc in the app) and raises :class:`Cancelled`."""
        self.statements = [*self.statements[-19:], (sql, tuple(values))]
        kept: list[tuple] = []
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

    def column_types(self, expression: exp.Expression) -> dict[str, str]:
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
        pg_policy(probe, list(self.tables_by_name))
        sent, values = _parametrise(_pg_names(probe))
        sql = _to_postgres(sent)
        self._recheck(sql)
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
                    this=exp.to_table(exp.to_identifier(t.name, quoted=True)),
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

    # -- candidates for SUQL --

    def load(self, filters: dict[str, TableFilter], *, cap: int, cancel: threading.Event | None,
             limits: Limits, row_cap: int) -> tuple[Sandbox, list[CandidatesLoaded]]:  # fmt: skip
        """A fresh local sandbox holding, per table, only the rows and columns ``filters`` ask for."""
        loads: list[CandidatesLoaded] = []

        def loader(con: duckdb.DuckDBPyConnection) -> None:
            for name, f in filters.items():
                loads.append(self._load_table(con, self.tables_by_name[name], f, cap=cap, cancel=cancel))

        sandbox = Sandbox.create(loader, row_cap=row_cap, timeout_s=self.timeout_s, limits=limits)
        return sandbox, loads

    def _candidate_sql(
        self, table: PgTable, wanted: Sequence[PgColumn], predicate: exp.Expression | None, pk: str | None, cap: int
    ) -> tuple[str, list[Any]]:
        select = exp.select(
            *[
                exp.alias_(
                    exp.cast(exp.column(exp.to_identifier(c.name, quoted=True)), "TEXT[]" if c.is_list else "TEXT"),
                    exp.to_identifier(c.name, quoted=True),
                )
                if c.as_text
                else exp.column(exp.to_identifier(c.name, quoted=True))
                for c in wanted
            ]
        ).from_(exp.to_table(exp.to_identifier(table.name, quoted=True)))
        if predicate is not None:
            select = select.where(predicate.copy())
        if pk is not None:  # a fixed order: the rows arrive (and are numbered) as the table's own ids
            select = select.order_by(exp.column(exp.to_identifier(pk, quoted=True)))
        select = select.limit(cap + 1)
        validate(select)
        sent, values = _parametrise(select)
        sql = _to_postgres(sent)
        self._recheck(sql)
        return sql, values

    def _load_table(self, con: duckdb.DuckDBPyConnection, table: PgTable, f: TableFilter, *, cap: int,
                    cancel: threading.Event | None) -> CandidatesLoaded:  # fmt: skip
        wanted = [c for c in table.columns if f.columns is None or c.name in f.columns]
        pk = table.primary_key if table.primary_key in {c.name for c in wanted} else None
        target = exp.to_table(exp.to_identifier(table.name, quoted=True))
        ddl = exp.Create(
            this=exp.Schema(
                this=target.copy(),
                expressions=[
                    exp.ColumnDef(
                        this=exp.to_identifier(c.name, quoted=True),
                        kind=_duck_type(c.duck_type),
                        constraints=[exp.ColumnConstraint(kind=exp.PrimaryKeyColumnConstraint())]
                        if c.name == pk
                        else [],
                    )
                    for c in wanted
                ],
            ),
            kind="TABLE",
        )
        con.execute(ddl.sql(dialect="duckdb", identify=True))
        insert = columns_insert(target, [_duck_type(c.duck_type) for c in wanted]).sql(dialect="duckdb", identify=True)
        count = 0
        sql = ""

        def each(batch: list[tuple]) -> None:
            nonlocal count
            if cancel is not None and cancel.is_set():
                raise Cancelled()
            count += len(batch)
            if count > cap:
                raise TooManyCandidates(
                    f"More than {cap:,} rows of {table.name!r} pass the query's structured conditions: narrow them "
                    "(or raise CS224V_POSTGRES_CANDIDATE_ROWS).",
                    sql=sql,
                )
            try:
                con.execute(insert, [[row[i] for row in batch] for i in range(len(wanted))])
            except duckdb.Error as e:
                raise SqlFailed(f"A value of {table.name!r} could not be copied into DuckDB: {e}", sql=sql) from e

        started = time.perf_counter()
        sql, values = self._candidate_sql(table, wanted, f.predicate, pk, cap)
        note = ""
        try:
            self._fetch(sql, values, cap + 1, each=each, cancel=cancel)
        except (SqlTimedOut, TooManyCandidates):
            raise
        except SqlFailed as e:
            if f.predicate is None:
                raise
            # PostgreSQL could not evaluate the pushed condition (it reads a type differently): every
            # row instead; the local engine still applies the whole WHERE
            note = f"the structured filter did not run on PostgreSQL ({e}); every row was loaded"
            con.execute(exp.delete(target.copy()).sql(dialect="duckdb", identify=True))
            count = 0
            sql, values = self._candidate_sql(table, wanted, None, pk, cap)
            self._fetch(sql, values, cap + 1, each=each, cancel=cancel)
        return CandidatesLoaded(table.name, sql, tuple(values), count, time.perf_counter() - started, note)


class TooManyCandidates(SqlFailed):
    """More rows pass the pushed filter than a SUQL query may load (``postgres_candidate_rows``)."""


def _duck_type(text: str) -> exp.DataType:
    return exp.DataType.build(text, dialect="duckdb")


_DISPLAY: dict[str, str] = {
    "smallint": "SMALLINT",
    "integer": "INTEGER",
    "bigint": "BIGINT",
    "real": "REAL",
    "double precision": "DOUBLE",
    "boolean": "BOOLEAN",
    "text": "VARCHAR",
    "date": "DATE",
    "interval": "INTERVAL",
    "uuid": "UUID",
    "bytea": "BLOB",
}


def _display_to_duck(display: str) -> str:
    d = display.lower()
    suffix = "[]" if d.endswith("[]") else ""
    d = d.removesuffix("[]")
    if d.startswith("numeric"):
        return ("DECIMAL" + d[len("numeric") :].upper() if "(" in d else "DOUBLE") + suffix
    if d.startswith(("character varying", "character", "varchar")):
        return "VARCHAR" + suffix
    if d.startswith("timestamp"):
        return ("TIMESTAMP WITH TIME ZONE" if "with time zone" in d else "TIMESTAMP") + suffix
    if d.startswith("time"):
        return "TIME" + suffix
    return _DISPLAY.get(d, "VARCHAR") + suffix


# --- SUQL over PostgreSQL ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CandidatesLoaded(Event):
    """The candidate rows of one table came back from PostgreSQL: the SELECT sent, its parameters, how many."""

    table: str
    sql: str
    parameters: tuple[Any, ...]
    rows: int
    elapsed_s: float
    note: str = ""  # why the filter was not pushed, when it was not


class PostgresSuqlEngine:
    """SUQL over a PostgreSQL source, with the interface of :class:`engines.suql.execute.SuqlEngine`.

    Per query: the structured filter and the columns each table needs (:func:`candidate_filters`) run
    on PostgreSQL, the candidate rows stream into a fresh DuckDB sandbox, and the unchanged SuqlEngine
    runs the query there.  Modes that do not run structured predicates first (A, B, B-duckdb: the
    lecture's baselines) get every row of the tables they read, so their cost stays what they show.
    """

    def __init__(self, source: PostgresSource, llm: Any, *, pool: int = 1, cap: int = 20, call_budget: int = 2000):
        from engines.retrieval.bm25 import IndexCache

        self.source = source
        self.sandbox = source.sandbox
        self.llm = llm
        self.pool = pool
        self.cap = cap
        self.call_budget = call_budget
        self.indexes = IndexCache()
        self.last_loads: tuple[CandidatesLoaded, ...] = ()

    def compile(self, sql: str) -> tuple[exp.Expression, str]:
        from engines.suql.execute import SuqlEngine

        return SuqlEngine.compile(self, sql)  # type: ignore[arg-type] - parses and normalises only

    def _local(self, sql: str, mode: Any, emit: Emit, cancel: threading.Event | None) -> tuple[Any, Sandbox]:
        from engines.suql import language
        from engines.suql.execute import SuqlEngine
        from engines.suql.plan import Mode, mode_named

        m = mode if isinstance(mode, Mode) else mode_named(mode, cap=self.cap)
        tree = language.parse(sql)
        filters = self.filters(tree, structured_first=m.structured_first)
        settings = self.source.settings
        local, loads = self.sandbox.load(
            filters,
            cap=settings.postgres_candidate_rows,
            cancel=cancel,
            limits=Limits.from_settings(settings),
            row_cap=settings.row_cap,
        )
        self.last_loads = tuple(loads)
        for load in loads:
            emit(load)
        engine = SuqlEngine(local, self.llm, pool=self.pool, cap=self.cap, call_budget=self.call_budget)
        return engine, local

    def filters(self, tree: exp.Expression, *, structured_first: bool = True) -> dict[str, TableFilter]:
        tables = self.sandbox.tables_by_name
        always = [c for t in tables.values() for c in ([t.primary_key] if t.primary_key else [])] + [
            "_id",
            *LABEL_COLUMNS,
        ]
        filters = candidate_filters(
            tree,
            {n: [c.name for c in t.columns] for n, t in tables.items()},
            kinds={n: {c.name: c.kind for c in t.columns} for n, t in tables.items()},
            always=always,
        )
        if not structured_first:
            filters = {k: TableFilter(k, f.columns, None) for k, f in filters.items()}
        return filters

    def run(self, sql: str, *, mode: Any = "E", emit: Emit = ignore, cancel: threading.Event | None = None,
            order_predicates: bool | None = None) -> Any:  # fmt: skip
        engine, local = self._local(sql, mode, emit, cancel)
        try:
            return engine.run(sql, mode=mode, emit=emit, cancel=cancel, order_predicates=order_predicates)
        finally:
            local.close()

    def estimate_calls(self, sql: str, mode: Any = "E") -> int:
        engine, local = self._local(sql, mode, ignore, None)
        try:
            return engine.estimate_calls(sql, mode)
        finally:
            local.close()


# --- the source -----------------------------------------------------------------------------------------


@dataclass
class PostgresSource(DataSource):
    settings: Settings = field(default_factory=Settings)

    def __post_init__(self) -> None:
        if self.make_engine is None:  # engines.compose builds the SUQL engine through this

            def make_engine(llm: Any, settings: Settings | None = None, *, pool: int = 1) -> PostgresSuqlEngine:
                s = settings or self.settings
                return PostgresSuqlEngine(self, llm, pool=pool, cap=s.suql_cap, call_budget=s.suql_call_budget)

            self.make_engine = make_engine

    def suql_engine(self, llm: Any, *, pool: int = 1, cap: int = 20, call_budget: int = 2000) -> PostgresSuqlEngine:
        return PostgresSuqlEngine(self, llm, pool=pool, cap=cap, call_budget=call_budget)


class _SampledGate:
    """The gate for describing columns: each table read as (at most) its first DESCRIBE_SAMPLE rows, so
    describing a huge table costs a bounded scan."""

    def __init__(self, gate: PostgresGate) -> None:
        self.gate = gate

    def run_tree(self, expression: exp.Expression) -> QueryResult:
        def sample(node: exp.Expression) -> exp.Expression:
            if isinstance(node, exp.Table) and node.name in self.gate.tables_by_name and not node.args.get("db"):
                inner = (
                    exp.select("*")
                    .from_(exp.to_table(exp.to_identifier(node.name, quoted=True)))
                    .limit(DESCRIBE_SAMPLE)
                )
                return inner.subquery(exp.to_identifier(node.alias_or_name, quoted=True))
            return node

        return self.gate.run_tree(expression.transform(sample, copy=True))


_ESTIMATE_SQL = "SELECT c.reltuples::bigint FROM pg_catalog.pg_class c WHERE c.oid = to_regclass(%s)"


def _estimated_rows(gate: PostgresGate, table: str) -> int | None:
    """PostgreSQL's own estimate of a table's rows (from its statistics), or None when it has none."""
    try:
        with gate._conn.transaction() as con, con.cursor() as cur:
            row = cur.execute(_ESTIMATE_SQL, [exp.to_identifier(table, quoted=True).sql(dialect="postgres")]).fetchone()
    except psycopg.Error:
        return None
    return int(row[0]) if row and row[0] is not None and row[0] >= 0 else None


def _describe(gate: PostgresGate, name: str) -> SchemaDescription:
    """H1's description, its statistics from a bounded sample; the row counts exact (or PostgreSQL's
    estimate when counting takes too long) and an enumeration's values from the whole table."""
    sampled = describe(_SampledGate(gate), gate.tables(), source=name, kind="PostgreSQL database")
    tables: list[TableInfo] = []
    notes = list(sampled.notes)
    from dataclasses import replace

    for t in sampled.tables:
        ref = exp.to_table(exp.to_identifier(t.name, quoted=True))
        try:
            rows = int(gate.run_tree(exp.select(exp.Count(this=exp.Star())).from_(ref)).rows[0][0])
        except EngineError as e:
            rows = _estimated_rows(gate, t.name)
            notes.append(
                f"counting {t.name}: {e}" + (f"; PostgreSQL estimates {rows:,} rows" if rows is not None else "")
            )
        columns = []
        for c in t.columns:
            if c.role in ("enum", "list_enum") and rows is not None and rows > DESCRIBE_SAMPLE:
                col = exp.column(exp.to_identifier(c.name, quoted=True))
                source: exp.Expression = ref.copy()
                value: exp.Expression = col
                if c.role == "list_enum":
                    element = exp.to_identifier("element", quoted=True)
                    source = exp.select(exp.Unnest(expressions=[col]).as_(element)).from_(ref.copy()).subquery("e")
                    value = exp.column(element)
                q = (
                    exp.select(value.copy()).distinct().from_(source)
                    .where(exp.Not(this=exp.Is(this=value.copy(), expression=exp.Null())))
                    .order_by(exp.Ordered(this=value.copy())).limit(60)
                )  # fmt: skip
                try:
                    values = tuple(str(r[0]) for r in gate.run_tree(q).rows)
                    c = (
                        replace(c, values=values)
                        if len(values) <= 50
                        else replace(c, role="text" if c.role == "enum" else "list")
                    )
                except EngineError as e:
                    notes.append(f"{t.name}.{c.name}: {e}")
            columns.append(c)
        tables.append(replace(t, rows=rows, columns=tuple(columns)))
    return SchemaDescription(sampled.source, tuple(tables), sampled.kind, tuple(notes))


def open_postgres(url: str, settings: Settings | None = None) -> PostgresSource:
    """Connect (read-only), read the catalog of the current schema and describe it."""
    settings = settings or Settings()
    if psycopg is None:
        raise DataSourceError(f"PostgreSQL sources need psycopg: pip install 'psycopg[binary]' ({_IMPORT_ERROR}).")
    name = redact(url)
    conn = _Connection(url, settings.query_timeout_s)
    try:
        try:
            tables = _catalog(conn)
        except psycopg.Error as e:
            raise DataSourceError(f"Could not read the tables of {name}: {_message(e)}") from e
        if not tables:
            raise DataSourceError(
                f"{name} has no table this user may read in its current schema (set search_path, e.g. "
                "?options=-csearch_path%3Dmyschema, or GRANT SELECT)."
            )
        gate = PostgresGate(conn, tables, row_cap=settings.row_cap, timeout_s=settings.query_timeout_s)
        schema = _describe(gate, name)
    except BaseException:
        conn.close()
        raise
    return PostgresSource(name, "postgresql", gate, schema, settings=settings)
