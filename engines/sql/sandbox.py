"""The SQL gate: the one way SQL written by users or models reaches DuckDB.

Every query goes through the same steps:

1. **Split** — the text is tokenized (sqlglot) and split on ``;``.  More than one
   statement is refused, and so is a statement that starts with a keyword that can
   only begin a non-query (``DROP``, ``ATTACH``, ``COPY``, ``SET``, ``PRAGMA`` ...).
2. **Parse** — with sqlglot, as PostgreSQL first (what users and models write:
   ``'x' = ANY(cuisines)``, ``cuisines @> ARRAY['x']``, ``'2024-01-01'::date``),
   then as DuckDB.  If neither dialect reads it, the query fails with a syntax error
   and a position; it never reaches DuckDB.
3. **Validate** (:func:`validate`, pure) — the tree must be one read-only
   ``SELECT`` (``WITH`` and ``UNION``/``INTERSECT``/``EXCEPT`` included).  Anywhere
   in the tree, it refuses nested statements (``WITH d AS (DELETE ...)``),
   ``SELECT ... INTO``, functions that read files, the network, the environment or
   the configuration or that have side effects (``read_csv``, ``glob``,
   ``getenv``, ``query`` ...), and table names that look like files
   (``FROM '/etc/passwd'``, ``FROM 'x.csv'``).
4. **Transpile** — to DuckDB SQL, without comments.  The result is parsed and
   validated once more, so the check applies to what actually runs, and DuckDB's own
   parser must see exactly one ``SELECT`` in it.
5. **Execute** — on a fresh cursor of a connection opened with
   ``enable_external_access=false`` and locked with ``lock_configuration=true`` once
   the world's data is loaded, so even SQL that slipped past the gate can neither
   reach the file system nor turn access back on.  At most ``row_cap`` rows are
   fetched, and a watchdog interrupts the query after ``timeout_s`` seconds.

Usage::

    sandbox = Sandbox.create(world.load, row_cap=settings.row_cap,
                             timeout_s=settings.query_timeout_s)
    result = sandbox.run("SELECT name FROM restaurants WHERE 'thai' = ANY(cuisines)")
    print(result.columns, result.records())

Errors are :class:`SqlRefused` (the policy said no; nothing ran) and
:class:`SqlFailed` (syntax error, DuckDB error, time-out); both carry ``message``,
``line`` and ``column`` (1-based, in the text held in ``sql``).  No raw DuckDB or
sqlglot exception leaves :meth:`Sandbox.run`.
"""
from __future__ import annotations

import math
import re
import threading
import time
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from datetime import time as time_of_day
from decimal import Decimal
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence
from uuid import UUID

import duckdb
import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError, SqlglotError, TokenError
from sqlglot.tokens import Token, TokenType

from engines.errors import ConfigurationError, EngineError

__all__ = [
    "DEFAULT_ROW_CAP",
    "DEFAULT_TIMEOUT_S",
    "DIALECTS",
    "MAX_SQL_CHARS",
    "Loader",
    "QueryResult",
    "Sandbox",
    "SqlError",
    "SqlFailed",
    "SqlRefused",
    "SqlTimedOut",
    "check",
    "connect",
    "lock",
    "parse",
    "to_jsonable",
    "transpile",
    "validate",
]

DEFAULT_ROW_CAP = 10_000
SCRATCH_SCHEMA = "scratch"  # compilers' temporary tables (engines.suql)
DEFAULT_TIMEOUT_S = 5.0
DIALECTS: tuple[str, ...] = ("postgres", "duckdb")
"""Dialects tried in order when reading a query: the first that parses it wins."""
MAX_SQL_CHARS = 100_000
"""Longer texts are refused before any parsing."""

Loader = Callable[[duckdb.DuckDBPyConnection], None]
"""Fills a fresh connection with a world's tables (e.g. ``RestaurantWorld.load``)."""


# --- errors ------------------------------------------------------------------------------


class SqlError(EngineError):
    """Base of the gate's errors.

    ``line`` and ``column`` are 1-based and point into ``sql``, the text the
    position refers to (the query as written, or the DuckDB SQL it became when the
    error came from DuckDB); any of the three may be ``None``.  ``str(e)`` is
    ``message``.
    """

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        sql: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.sql = sql

    def __str__(self) -> str:
        return self.message


class SqlRefused(SqlError):
    """The gate's policy refused the query; nothing was executed."""


class SqlFailed(SqlError):
    """The query could not be parsed, or DuckDB reported an error running it."""


class SqlTimedOut(SqlFailed):
    """The query ran past the sandbox's time limit and was interrupted."""


# --- results -----------------------------------------------------------------------------


@dataclass(frozen=True)
class QueryResult:
    """What a query returned.

    ``rows`` hold the values as DuckDB gives them to Python (``Decimal``, ``date``,
    lists, dicts ...); :meth:`records` converts them for JSON.
    """

    sql: str
    """The DuckDB SQL that ran."""
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    truncated: bool
    """True when the query had more rows than the row cap; only the first are kept."""
    elapsed_s: float

    def records(self) -> list[dict[str, Any]]:
        """The rows as JSON-ready dicts.

        Repeated column names get a suffix (``a``, ``a_1`` ...) so no value is lost.
        """
        keys = _unique_keys(self.columns)
        return [{k: to_jsonable(v) for k, v in zip(keys, row)} for row in self.rows]


def to_jsonable(value: Any) -> Any:
    """Convert a value DuckDB returned into plain JSON-friendly Python.

    Lists and tuples become lists, dicts (STRUCT, MAP) dicts with string keys,
    ``Decimal`` becomes ``float``, dates and times ISO-8601 strings, intervals and
    UUIDs strings, BLOBs text (undecodable bytes escaped).  Non-finite numbers become
    the strings ``'nan'``, ``'inf'`` and ``'-inf'`` so the output is strict JSON.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Decimal):
        return float(value) if value.is_finite() else str(float(value))
    if isinstance(value, (datetime, date, time_of_day)):
        return value.isoformat()
    if isinstance(value, (timedelta, UUID)):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", errors="backslashreplace")
    if isinstance(value, Mapping):
        return {k if isinstance(k, str) else str(to_jsonable(k)): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in value]
    return str(value)


def _unique_keys(columns: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    keys = []
    for name in columns:
        key, n = name, 0
        while key in seen:
            n += 1
            key = f"{name}_{n}"
        seen.add(key)
        keys.append(key)
    return keys


# --- policy --------------------------------------------------------------------------------

_ONLY_SELECT = "Only read-only SELECT queries may run here"

# Keywords that can only start a statement that is not a query.
_STATEMENT_KEYWORDS = frozenset(
    """
    ABORT ALTER ANALYZE ATTACH BEGIN CALL CHECKPOINT CLOSE CLUSTER COMMENT COMMIT COPY
    CREATE DEALLOCATE DECLARE DELETE DESC DESCRIBE DETACH DISCARD DO DROP END EXECUTE
    EXPLAIN EXPORT FETCH FORCE GRANT IMPORT INSERT INSTALL LISTEN LOAD LOCK MERGE MOVE
    NOTIFY PIVOT PRAGMA PREPARE REFRESH REINDEX RELEASE RESET REVOKE ROLLBACK SAVEPOINT
    SET SHOW START SUMMARIZE TRUNCATE UNLISTEN UNPIVOT UPDATE UPSERT USE VACUUM
    """.split()
)
# Keywords named together with the word that follows them ("CREATE MACRO").
_TWO_WORD_KEYWORDS = frozenset({"ALTER", "CREATE", "DROP", "EXPORT", "FORCE", "IMPORT"})
_MODIFIERS = frozenset({"OR", "REPLACE", "TEMP", "TEMPORARY", "PERSISTENT", "UNIQUE", "IF", "NOT", "EXISTS"})

# Expression types that are statements: refused anywhere in a query.
_STATEMENT_NAMES: dict[type[exp.Expression], str] = {
    cls: name
    for cls_name, name in {
        "Insert": "INSERT", "Update": "UPDATE", "Delete": "DELETE", "Merge": "MERGE",
        "Create": "CREATE", "Drop": "DROP", "Alter": "ALTER", "TruncateTable": "TRUNCATE",
        "Copy": "COPY", "Command": "COMMAND", "Set": "SET", "Pragma": "PRAGMA",
        "Attach": "ATTACH", "Detach": "DETACH", "Use": "USE", "Install": "INSTALL",
        "Transaction": "BEGIN", "Commit": "COMMIT", "Rollback": "ROLLBACK",
        "Describe": "DESCRIBE", "Summarize": "SUMMARIZE", "Show": "SHOW",
        "Analyze": "ANALYZE", "LoadData": "LOAD DATA", "Grant": "GRANT", "Revoke": "REVOKE",
        "Cache": "CACHE", "Uncache": "UNCACHE", "Refresh": "REFRESH", "Export": "EXPORT",
        "Kill": "KILL", "Comment": "COMMENT", "Execute": "EXECUTE", "Declare": "DECLARE",
        "Values": "VALUES", "Pivot": "PIVOT",
    }.items()
    if isinstance(cls := getattr(exp, cls_name, None), type)
}
# A (sub)query may contain VALUES lists and PIVOT clauses; only the rest is refused inside one.
_NESTED_STATEMENT_TYPES: tuple[type[exp.Expression], ...] = tuple(
    cls for cls in _STATEMENT_NAMES if cls.__name__ not in {"Values", "Pivot"}
) + tuple(cls for name in ("DDL", "DML") if isinstance(cls := getattr(exp, name, None), type))

_READS_FILES = "it reads files or the network"
_RUNS_SQL = "it runs SQL hidden in a string"
_READS_CONFIG = "it reads the environment or the configuration"
_SIDE_EFFECTS = "it changes the state of the database"

_DENIED_FUNCTIONS: dict[str, str] = {
    **dict.fromkeys(
        ("glob", "sniff_csv", "pg_read_file", "pg_read_binary_file", "pg_ls_dir", "pg_stat_file",
         "copy_database", "import_database", "export_database", "load_aws_credentials",
         "install_extension", "load_extension", "parse_duckdb_log_message"),
        _READS_FILES,
    ),
    **dict.fromkeys(("query", "query_table", "json_execute_serialized_sql"), _RUNS_SQL),
    **dict.fromkeys(("getenv", "current_setting", "which_secret", "duckdb_secrets"), _READS_CONFIG),
    **dict.fromkeys(
        ("checkpoint", "force_checkpoint", "nextval", "setval", "setseed", "write_log",
         "enable_logging", "disable_logging", "truncate_duckdb_logs", "enable_profiling",
         "disable_profiling", "add_grammar_extension", "remove_grammar_extension",
         "register_external_resource", "register_external_resource_type",
         "create_external_resource", "destroy_external_resource", "deregister_external_resource",
         "python_map_function"),
        _SIDE_EFFECTS,
    ),
}
# File, network and foreign-database readers by family: read_csv, parquet_metadata,
# iceberg_snapshots, sqlite_scan, postgres_attach, st_read, pandas_scan ...
_DENIED_PREFIXES = (
    "read_", "parquet_", "iceberg_", "delta_", "sqlite_", "postgres_", "mysql_", "st_read",
    "pg_read", "pg_ls", "python_", "pandas_", "arrow_", "http", "s3_", "azure_", "gcs_",
)
_DENIED_SUFFIXES = ("_scan", "_attach", "_file", "_files")

# A table name containing one of these looks like a path, a glob or a URL.
_PATH_LIKE = re.compile(r"[/\\:.*?~]")


def _denied_function_reason(name: str) -> str | None:
    """Why the function ``name`` (lower case) is refused, or ``None`` if it is allowed."""
    if reason := _DENIED_FUNCTIONS.get(name):
        return reason
    if name.startswith(_DENIED_PREFIXES) or name.endswith(_DENIED_SUFFIXES):
        return _READS_FILES
    return None


def _function_names(node: exp.Func) -> set[str]:
    """Every name the function node may go by, lower case."""
    names = {n.lower() for n in type(node).sql_names()}
    if isinstance(node, (exp.Anonymous, exp.AnonymousAggFunc)):
        names.add(node.name.lower())
    return names


def _position(*nodes: Any) -> tuple[int | None, int | None]:
    """The 1-based start of the first node that carries a source position."""
    for node in nodes:
        if not isinstance(node, exp.Expression):
            continue
        meta = node.meta
        if {"line", "col", "start", "end"} <= meta.keys():
            # sqlglot's ``col`` is where the token ends; the token spans start..end.
            return meta["line"], max(1, meta["col"] - (meta["end"] - meta["start"]))
    return None, None


def _describe_statement(node: exp.Expression) -> str:
    """A statement's name as a person would say it: ``DROP TABLE``, ``LOAD``, ``INSERT``."""
    if isinstance(node, exp.Command):
        words = [str(node.this).upper()]
        rest = node.expression.name if isinstance(node.expression, exp.Expression) else ""
        if words[0] in _TWO_WORD_KEYWORDS and rest.split():
            words.append(rest.split()[0].upper())
        return " ".join(words)
    name = _STATEMENT_NAMES.get(type(node))
    if name is None:
        return "non-query"
    kind = node.args.get("kind")
    if name in {"CREATE", "DROP", "ALTER"} and isinstance(kind, str) and kind:
        return f"{name} {kind.upper()}"
    return name


def validate(expression: exp.Expression) -> None:
    """Refuse a parsed query unless it is one read-only ``SELECT``.

    Pure: looks at the tree only.  Raises :class:`SqlRefused` naming what was refused.
    """
    _validate_top_level(expression)
    for node in expression.walk():
        _validate_node(node)


def _validate_top_level(expression: exp.Expression) -> None:
    query = expression
    while isinstance(query, exp.Subquery):  # "(SELECT ...)"
        query = query.this
    if isinstance(query, (exp.Select, exp.SetOperation)):
        return
    what = _describe_statement(query)
    if what == "non-query":
        raise SqlRefused(f"{_ONLY_SELECT}; this statement is not a SELECT query.")
    raise SqlRefused(f"{_ONLY_SELECT}; {what} statements are refused.")


def _validate_node(node: exp.Expression) -> None:
    if isinstance(node, _NESTED_STATEMENT_TYPES):
        raise SqlRefused(
            f"{_ONLY_SELECT}; the query contains a {_describe_statement(node)} statement, which is refused."
        )
    if isinstance(node, exp.Into):
        line, column = _position(node.this, getattr(node.this, "this", None))
        raise SqlRefused(
            "SELECT ... INTO creates a table, so it is refused; remove the INTO clause.",
            line=line,
            column=column,
        )
    if isinstance(node, exp.Func):
        for name in sorted(_function_names(node)):
            if reason := _denied_function_reason(name):
                line, column = _position(node, node.this)
                raise SqlRefused(
                    f"The function {name}() is refused: {reason}. "
                    "Queries may only read the tables already loaded.",
                    line=line,
                    column=column,
                )
    if isinstance(node, exp.Table):
        for part in (node.this, node.args.get("db"), node.args.get("catalog")):
            if isinstance(part, (exp.Identifier, exp.Literal)) and _PATH_LIKE.search(part.name):
                line, column = _position(part)
                raise SqlRefused(
                    f"Reading from '{part.name}' is refused: it looks like a file, a path or a URL, "
                    "and queries may only read the tables already loaded.",
                    line=line,
                    column=column,
                )


# --- parsing ---------------------------------------------------------------------------------


def parse(sql: str, dialects: Sequence[str] = DIALECTS) -> exp.Expression:
    """Read one statement with the first dialect of ``dialects`` that parses it.

    Raises :class:`SqlRefused` for several statements or a statement that cannot be
    a query, and :class:`SqlFailed` (with a position when sqlglot has one) for text
    that no dialect reads.  Does not validate the tree; see :func:`check`.
    """
    if len(sql) > MAX_SQL_CHARS:
        raise SqlRefused(f"The query is longer than {MAX_SQL_CHARS:,} characters and was refused.", sql=sql)
    statements = _split_statements(sql, dialects)
    if not statements:
        raise SqlFailed("There is no query to run: the text is empty or only comments.", sql=sql)
    if len(statements) > 1:
        line, column = _token_position(statements[1][0])
        raise SqlRefused(
            f"Only one statement at a time: found {len(statements)}. Run them one by one.",
            line=line,
            column=column,
            sql=sql,
        )
    tokens = statements[0]
    keyword = tokens[0].text.upper()
    if tokens[0].token_type != TokenType.STRING and keyword in _STATEMENT_KEYWORDS:
        line, column = _token_position(tokens[0])
        raise SqlRefused(
            f"{_ONLY_SELECT}; {_statement_phrase(tokens)} statements are refused.",
            line=line,
            column=column,
            sql=sql,
        )
    return _parse_one(sql, dialects)


def _tokenize(sql: str, dialects: Sequence[str]) -> list[Token]:
    error: TokenError | None = None
    for dialect in dialects:
        try:
            return Dialect.get_or_raise(dialect).tokenize(sql)
        except TokenError as e:
            error = error or e
    raise SqlFailed(
        "Syntax error: the query could not be read; look for an unterminated string, "
        f"quoted name or comment. ({_strip_ansi(str(error))})",
        sql=sql,
    )


def _split_statements(sql: str, dialects: Sequence[str]) -> list[list[Token]]:
    """The statements' tokens, split on ``;``; empty statements are dropped."""
    statements: list[list[Token]] = [[]]
    for token in _tokenize(sql, dialects):
        if token.token_type == TokenType.SEMICOLON:
            statements.append([])
        else:
            statements[-1].append(token)
    return [s for s in statements if s]


def _statement_phrase(tokens: Sequence[Token]) -> str:
    """``CREATE OR REPLACE TEMP MACRO m ...`` -> ``CREATE MACRO``."""
    first = tokens[0].text.upper()
    if first in _TWO_WORD_KEYWORDS:
        for token in tokens[1:]:
            word = token.text.upper()
            if word not in _MODIFIERS:
                return f"{first} {word}" if word.isidentifier() else first
    return first


def _token_position(token: Token) -> tuple[int, int]:
    return token.line, max(1, token.col - (token.end - token.start))


def _parse_one(sql: str, dialects: Sequence[str]) -> exp.Expression:
    errors: list[SqlFailed] = []
    for dialect in dialects:
        try:
            expressions = [e for e in sqlglot.parse(sql, read=dialect) if e is not None]
        except (ParseError, TokenError) as e:
            errors.append(_from_sqlglot(e, sql))
            continue
        except RecursionError:
            raise SqlFailed("The query is nested too deeply to be read.", sql=sql) from None
        if len(expressions) == 1:
            return expressions[0]
        if len(expressions) > 1:
            raise SqlRefused(f"Only one statement at a time: found {len(expressions)}.", sql=sql)
        raise SqlFailed("There is no query to run: the text is empty or only comments.", sql=sql)
    if not errors:
        raise ConfigurationError("No SQL dialect is configured to read queries.")
    # Report the dialect that read furthest: its error is most likely the real one.
    raise max(errors, key=lambda e: (e.line or 0, e.column or 0))


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_SQLGLOT_CLASS = re.compile(r"<class '(?:[\w]+\.)*(\w+)'>")


def _strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def _from_sqlglot(error: SqlglotError, sql: str) -> SqlFailed:
    """A sqlglot parse or tokenize error as a :class:`SqlFailed` with a position."""
    details = getattr(error, "errors", None) or [{}]
    first = details[0]
    description = _SQLGLOT_CLASS.sub(r"\1", str(first.get("description") or _strip_ansi(str(error)).split("\n")[0]))
    line, end_col, highlight = first.get("line"), first.get("col"), first.get("highlight") or ""
    column = max(1, end_col - len(highlight) + 1) if isinstance(end_col, int) else None
    if line is None:
        return SqlFailed(f"Syntax error: {description}", sql=sql)
    near = f" near {highlight!r}" if highlight else ""
    return SqlFailed(
        f"Syntax error at line {line}, column {column}{near}: {description}",
        line=line,
        column=column,
        sql=sql,
    )


def transpile(expression: exp.Expression) -> str:
    """DuckDB SQL for a parsed query, without comments.

    PostgreSQL semantics are kept: ``ORDER BY x DESC`` becomes ``DESC NULLS FIRST``.
    """
    try:
        return expression.sql(dialect="duckdb", comments=False)
    except SqlglotError as e:
        raise SqlFailed(f"The query could not be translated to DuckDB SQL: {_strip_ansi(str(e))}") from e
    except RecursionError:
        raise SqlFailed("The query is nested too deeply to be translated.") from None


def check(sql: str, dialects: Sequence[str] = DIALECTS) -> exp.Expression:
    """Parse and validate ``sql`` without running it; returns the parsed tree."""
    expression = parse(sql, dialects)
    try:
        validate(expression)
    except SqlRefused as e:
        e.sql = sql
        raise
    return expression


def _recheck(duckdb_sql: str) -> None:
    """Validate the transpiled SQL too, so the policy applies to what really runs.

    If sqlglot cannot read its own output back, the check of the original tree stands.
    """
    try:
        expression = sqlglot.parse_one(duckdb_sql, read="duckdb")
    except (SqlglotError, RecursionError):
        return
    try:
        validate(expression)
    except SqlRefused as e:
        e.sql = duckdb_sql
        raise


# --- DuckDB ------------------------------------------------------------------------------------

_HARDENED_CONFIG: dict[str, Any] = {
    "enable_external_access": False,  # no files, no network, no ATTACH, no extensions
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "python_enable_replacements": False,  # FROM <python variable> must not see the caller's frame
}

_LINE_MARK = re.compile(r"^(LINE (\d+): )(.*)\n( *)\^", re.MULTILINE)


def connect(*, memory_limit: str | None = None) -> duckdb.DuckDBPyConnection:
    """A new in-memory DuckDB connection with external access disabled.

    Load the world's tables through it, then call :func:`lock`.  ``memory_limit``
    (e.g. ``"2GB"``) caps what queries may use; ``None`` keeps DuckDB's default.
    Loaders cannot read files through this connection: they insert from Python.
    """
    config = dict(_HARDENED_CONFIG)
    if memory_limit is not None:
        config["memory_limit"] = memory_limit
    return duckdb.connect(":memory:", config=config)


def lock(con: duckdb.DuckDBPyConnection) -> None:
    """Freeze the configuration: no ``SET`` can change a setting afterwards."""
    con.execute("SET lock_configuration = true").fetchall()  # no pending result left on the connection


def _from_duckdb(error: duckdb.Error, sql: str) -> SqlFailed:
    """A DuckDB error as :class:`SqlFailed`, with the position its ``LINE n:`` mark shows."""
    message = str(error).strip() or type(error).__name__
    line, column = _duckdb_position(message, sql)
    return SqlFailed(message, line=line, column=column, sql=sql)


def _duckdb_position(message: str, sql: str) -> tuple[int | None, int | None]:
    """Read ``LINE 3:   nme = 1`` and the caret line under it.

    DuckDB shortens long lines to ``...snippet...``; the snippet is then looked up
    in ``sql`` to turn the caret into a column of the full line.
    """
    mark = _LINE_MARK.search(message)
    if mark is None:
        return None, None
    prefix, line, snippet, pad = mark.group(1), int(mark.group(2)), mark.group(3), mark.group(4)
    offset = len(pad) - len(prefix)  # caret's 0-based offset within the snippet
    if offset < 0:
        return line, None
    if not snippet.startswith("..."):
        return line, offset + 1
    lines = sql.splitlines()
    core = snippet[3:].removesuffix("...")
    found = lines[line - 1].find(core) if 0 < line <= len(lines) and core else -1
    return line, (found + offset - 3 + 1) if found >= 0 else None


class _Watchdog:
    """Interrupts a cursor's query when ``timeout_s`` passes before the block ends."""

    def __init__(self, cursor: duckdb.DuckDBPyConnection, timeout_s: float) -> None:
        self._cursor = cursor
        self._lock = threading.Lock()
        self._done = False
        self.fired = False
        self._timer = threading.Timer(timeout_s, self._fire)
        self._timer.daemon = True

    def _fire(self) -> None:
        with self._lock:
            if self._done:
                return
            self.fired = True
            try:
                self._cursor.interrupt()
            except duckdb.Error:  # the cursor closed meanwhile: nothing left to stop
                pass

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._timer.cancel()
        with self._lock:  # after this, _fire can no longer touch the cursor
            self._done = True


class Sandbox:
    """A locked DuckDB connection that runs only validated, read-only queries.

    Safe to use from several threads at once: every query runs on its own cursor.
    Build one with :meth:`create`, or pass a connection made by :func:`connect`,
    loaded, and :func:`lock`-ed.  The sandbox owns the connection: :meth:`close`
    closes it.
    """

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        *,
        row_cap: int = DEFAULT_ROW_CAP,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        dialects: Sequence[str] = DIALECTS,
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
        self._scratch_lock = threading.Lock()
        self._scratch_count = 0
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
    ) -> Sandbox:
        """Open a hardened connection, let ``loader`` fill it, lock it, wrap it.

        The loader runs with full SQL power but no file or network access; errors it
        raises propagate unchanged (and the connection is closed).
        """
        con = connect(memory_limit=memory_limit)
        try:
            loader(con)
            lock(con)
            return cls(con, row_cap=row_cap, timeout_s=timeout_s)
        except BaseException:
            con.close()
            raise

    # -- the gate --------------------------------------------------------------------------

    def check(self, sql: str) -> exp.Expression:
        """Validate ``sql`` without running it; returns the parsed tree.

        Raises :class:`SqlRefused` or :class:`SqlFailed`.  Never touches DuckDB.
        """
        return check(sql, self.dialects)

    def run(self, sql: str) -> QueryResult:
        """Validate, transpile to DuckDB SQL and execute ``sql``.

        Returns at most ``row_cap`` rows.  Raises :class:`SqlRefused`,
        :class:`SqlFailed` or :class:`SqlTimedOut`, never a DuckDB or sqlglot error.
        """
        duckdb_sql = transpile(self.check(sql))
        _recheck(duckdb_sql)
        return self._execute(duckdb_sql)

    def _execute(self, sql: str) -> QueryResult:
        cursor = self._cursor()
        started = time.perf_counter()
        try:
            with _Watchdog(cursor, self.timeout_s) as watchdog:
                try:
                    statement = self._single_select(cursor, sql)
                    cursor.execute(statement)
                    columns = tuple(str(d[0]) for d in cursor.description or ())
                    rows = cursor.fetchmany(self.row_cap + 1)
                except duckdb.InterruptException as e:
                    if watchdog.fired:
                        raise SqlTimedOut(
                            f"The query ran longer than {self.timeout_s:g} s and was stopped.", sql=sql
                        ) from e
                    raise _from_duckdb(e, sql) from e
                except duckdb.Error as e:
                    raise _from_duckdb(e, sql) from e
                except (ValueError, OverflowError, TypeError) as e:  # a value Python cannot hold
                    raise SqlFailed(f"DuckDB returned a value Python cannot read: {e}", sql=sql) from e
        finally:
            cursor.close()
        return QueryResult(
            sql=sql,
            columns=columns,
            rows=tuple(tuple(row) for row in rows[: self.row_cap]),
            truncated=len(rows) > self.row_cap,
            elapsed_s=time.perf_counter() - started,
        )

    @staticmethod
    def _single_select(cursor: duckdb.DuckDBPyConnection, sql: str) -> duckdb.Statement:
        """DuckDB's own parse of ``sql``: it must be exactly one SELECT."""
        statements = cursor.extract_statements(sql)
        if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
            raise SqlRefused(f"{_ONLY_SELECT}; DuckDB does not read this as a single SELECT query.", sql=sql)
        return statements[0]

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        try:
            return self._con.cursor()
        except duckdb.Error as e:
            raise SqlFailed(f"The database is not available: {e}") from e

    # -- introspection and lifetime ---------------------------------------------------------

    def schema(self) -> str:
        """The ``CREATE`` statements of the loaded tables and views."""
        cursor = self._cursor()
        try:
            rows = cursor.execute(
                "SELECT sql FROM duckdb_tables() WHERE NOT internal "
                "UNION ALL SELECT sql FROM duckdb_views() WHERE NOT internal"
            ).fetchall()
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

    def run_tree(self, expression: exp.Expression) -> QueryResult:
        """Validate, transpile and execute an already parsed query."""
        validate(expression)
        duckdb_sql = transpile(expression)
        _recheck(duckdb_sql)
        return self._execute(duckdb_sql)

    def columns_of(self, expression: exp.Expression) -> list[tuple[str, str]]:
        """Names and DuckDB types of a query's result columns, without running it."""
        validate(expression)
        sql = transpile(expression)
        cursor = self._cursor()
        try:
            rows = cursor.execute(f"DESCRIBE {sql}").fetchall()
        except duckdb.Error as e:
            raise _from_duckdb(e, sql) from e
        finally:
            cursor.close()
        return [(str(r[0]), str(r[1])) for r in rows]

    def column_types(self, expression: exp.Expression) -> dict[str, str]:
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

    @contextmanager
    def scratch_table(self, columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[Any]]) -> Iterator[exp.Table]:
        """A table of ``rows`` in the ``scratch`` schema for the duration of the block.

        ``columns`` are (name, DuckDB type) pairs.  Visible to every cursor; dropped on exit.
        """
        with self._scratch_lock:
            self._scratch_count += 1
            name = f"t{self._scratch_count}"
            self._con.execute(f"CREATE SCHEMA IF NOT EXISTS {SCRATCH_SCHEMA}").fetchall()
        table = exp.table_(name, db=SCRATCH_SCHEMA)
        ddl = ", ".join(f'"{c}" {t}' for c, t in columns)
        cursor = self._cursor()
        try:
            cursor.execute(f"CREATE TABLE {SCRATCH_SCHEMA}.{name} ({ddl})")
            if rows:
                records = [dict(zip((c for c, _ in columns), row)) for row in rows]
                cursor.execute(f"INSERT INTO {SCRATCH_SCHEMA}.{name} SELECT UNNEST($rows, recursive := true)", {"rows": records})
            yield table
        except duckdb.Error as e:
            raise _from_duckdb(e, f"-- scratch table {name}") from e
        finally:
            try:
                cursor.execute(f"DROP TABLE IF EXISTS {SCRATCH_SCHEMA}.{name}")
            finally:
                cursor.close()

    @contextmanager
    def function(self, prefix: str, fn: Callable[..., Any], parameters: Sequence[str], return_type: str) -> Iterator[str]:
        """Register a Python scalar function under a fresh name for the duration of the block."""
        with self._scratch_lock:
            self._scratch_count += 1
            name = f"{prefix}_{self._scratch_count}"
        try:
            self._con.create_function(name, fn, list(parameters), return_type, side_effects=True, null_handling="special")
        except duckdb.Error as e:
            raise SqlFailed(f"Could not register {prefix}: {e}") from e
        try:
            yield name
        finally:
            try:
                self._con.remove_function(name)
            except duckdb.Error:
                pass

    def close(self) -> None:
        """Close the connection; later queries fail with :class:`SqlFailed`."""
        self._con.close()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
