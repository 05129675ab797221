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
import os
import re
import shutil
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from datetime import time as time_of_day
from decimal import Decimal
from typing import Any
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
        "Insert": "INSERT",
        "Update": "UPDATE",
        "Delete": "DELETE",
        "Merge": "MERGE",
        "Create": "CREATE",
        "Drop": "DROP",
        "Alter": "ALTER",
        "TruncateTable": "TRUNCATE",
        "Copy": "COPY",
        "Command": "COMMAND",
        "Set": "SET",
        "Pragma": "PRAGMA",
        "Attach": "ATTACH",
        "Detach": "DETACH",
        "Use": "USE",
        "Install": "INSTALL",
        "Transaction": "BEGIN",
        "Commit": "COMMIT",
        "Rollback": "ROLLBACK",
        "Describe": "DESCRIBE",
        "Summarize": "SUMMARIZE",
        "Show": "SHOW",
        "Analyze": "ANALYZE",
        "LoadData": "LOAD DATA",
        "Grant": "GRANT",
        "Revoke": "REVOKE",
        "Cache": "CACHE",
        "Uncache": "UNCACHE",
        "Refresh": "REFRESH",
        "Export": "EXPORT",
        "Kill": "KILL",
        "Comment": "COMMENT",
        "Execute": "EXECUTE",
        "Declare": "DECLARE",
        "Values": "VALUES",
        "Pivot": "PIVOT",
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
        (
            "glob",
            "sniff_csv",
            "pg_read_file",
            "pg_read_binary_file",
            "pg_ls_dir",
            "pg_stat_file",
            "copy_database",
            "import_database",
            "export_database",
            "load_aws_credentials",
            "install_extension",
            "load_extension",
            "parse_duckdb_log_message",
        ),
        _READS_FILES,
    ),
    **dict.fromkeys(("query", "query_table", "json_execute_serialized_sql"), _RUNS_SQL),
    **dict.fromkeys(("getenv", "current_setting", "which_secret", "duckdb_secrets"), _READS_CONFIG),
    **dict.fromkeys(
        (
            "checkpoint",
            "force_checkpoint",
            "nextval",
            "setval",
            "setseed",
            "write_log",
            "enable_logging",
            "disable_logging",
            "truncate_duckdb_logs",
            "enable_profiling",
            "disable_profiling",
            "add_grammar_extension",
            "remove_grammar_extension",
            "register_external_resource",
            "register_external_resource_type",
            "create_external_resource",
            "destroy_external_resource",
            "deregister_external_resource",
            "python_map_function",
        ),
        _SIDE_EFFECTS,
    ),
}
# File, network and foreign-database readers by family: read_csv, parquet_metadata,
# iceberg_snapshots, sqlite_scan, postgres_attach, st_read, pandas_scan ...
_DENIED_PREFIXES = (
    "read_",
    "parquet_",
    "iceberg_",
    "delta_",
    "sqlite_",
    "postgres_",
    "mysql_",
    "st_read",
    "pg_read",
    "pg_ls",
    "python_",
    "pandas_",
    "arrow_",
    "http",
    "s3_",
    "azure_",
    "gcs_",
)
_DENIED_SUFFIXES = ("_scan", "_attach", "_file", "_files")

# A table name containing one of these looks like a path, a glob or a URL.
_PATH_LIKE = re.compile(r"[/\\:.*?~]")
# A user-defined type may only be named like this (``mood``, ``main.mood``): the name of a type
# is written back without quotes, so anything else could end the statement.
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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
                    f"The function {name}() is refused: {reason}. Queries may only read the tables already loaded.",
                    line=line,
                    column=column,
                )
    if isinstance(node, exp.DataType) and node.this == exp.DataType.Type.USERDEFINED:
        kind = node.args.get("kind")
        name = kind.name if isinstance(kind, exp.Identifier) else str(kind or "")
        if not all(_PLAIN_NAME.fullmatch(part) for part in name.split(".")):
            line, column = _position(node, kind)
            raise SqlRefused(
                f"The type name {name!r} is refused: a type must be a built-in type or a plain name "
                "(letters, digits and underscores).",
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


# --- bounds on values a single function call may build ------------------------------------------
#
# DuckDB checks memory_limit and interrupts between vectors of rows, but a scalar function that
# builds one huge list or string (``range(1000000000)``, ``repeat('x', 1e9)``) allocates outside the
# buffer manager and cannot be interrupted: it took 20 GB and 90 s.  Such calls get a guard on the
# parsed tree that raises a DuckDB error before the value is built.  The guard also keeps the call
# from being folded at plan time, where no interrupt reaches either.

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


def _double(node: exp.Expression) -> exp.Expression:
    return exp.cast(exp.paren(node.copy()), "DOUBLE")


def _guarded(value: exp.Expression, size: exp.Expression, limit: int, message: str) -> exp.Expression:
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


def _format_refusal(node: exp.Expression, name: str) -> None:
    fmt = node.this if isinstance(node, exp.Format) else (node.expressions[0] if node.expressions else None)
    if not (isinstance(fmt, exp.Literal) and fmt.is_string):
        raise SqlRefused(f"{name}() needs its format as a string literal here (a format can ask for any width).")
    text = fmt.name
    widths = [int(w) for w in re.findall(r"\d+", text)]
    if "*" in text or re.search(r"\{[^}]*\{", text) or any(w > _MAX_FORMAT_WIDTH for w in widths):
        raise SqlRefused(
            f"{name}() with a width or precision above {_MAX_FORMAT_WIDTH:,}, or taken from an argument, is refused."
        )


def _bound_node(node: exp.Expression) -> exp.Expression:
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
    try:
        tree = sqlglot.parse_one(duckdb_sql, read="duckdb")
    except (SqlglotError, RecursionError):
        return duckdb_sql
    if not any(
        isinstance(n, (exp.GenerateSeries, exp.Repeat, exp.Pad, exp.Format, exp.Anonymous)) for n in tree.walk()
    ):
        return duckdb_sql
    try:
        return tree.transform(_bound_node, copy=True).sql(dialect="duckdb", comments=False)
    except (SqlglotError, RecursionError):
        raise SqlFailed("The query is nested too deeply to be bounded.") from None


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

DEFAULT_MEMORY_LIMIT = "1GB"
DEFAULT_THREADS = 2
DEFAULT_TEMP_LIMIT = "1GB"
WORLD_DATABASE = "world"
"""The name the read-only database of a sandbox is attached under."""
SCRATCH_CATALOG = "memory"
"""The sandbox's own in-memory database: scratch tables live in its ``scratch`` schema."""


@dataclass(frozen=True)
class Limits:
    """What a DuckDB connection may use: ``memory_limit`` and ``temp_limit`` are DuckDB sizes
    (``512MB``, ``2GB``), ``threads`` its worker threads.  The defaults are the settings' defaults."""

    memory_limit: str = DEFAULT_MEMORY_LIMIT
    threads: int = DEFAULT_THREADS
    temp_limit: str = DEFAULT_TEMP_LIMIT

    @classmethod
    def from_settings(cls, settings: Any) -> Limits:
        """The limits an ``engines.settings.Settings`` asks for."""
        return cls(settings.duckdb_memory_limit, settings.duckdb_threads, settings.duckdb_temp_limit)

    def config(self, temp_directory: str | None = None) -> dict[str, Any]:
        config: dict[str, Any] = {
            "memory_limit": self.memory_limit,
            "threads": self.threads,
            "max_temp_directory_size": self.temp_limit,
        }
        if temp_directory is not None:
            config["temp_directory"] = temp_directory
        return config


def duckdb_limits(settings: Any) -> dict[str, Any]:
    """Keyword arguments for :meth:`Sandbox.create` from the settings: ``Sandbox.create(loader,
    row_cap=..., timeout_s=..., **duckdb_limits(settings))``."""
    return {"limits": Limits.from_settings(settings)}


def _open(database: str, config: Mapping[str, Any]) -> duckdb.DuckDBPyConnection:
    try:
        return duckdb.connect(database, config=dict(config))
    except (duckdb.InvalidInputException, duckdb.ParserException, duckdb.NotImplementedException) as e:
        # a limit DuckDB cannot read ("lots", "-1GB")
        raise ConfigurationError(f"DuckDB refused a setting: {_strip_ansi(str(e))}") from e


def connect(
    *, memory_limit: str | None = None, limits: Limits | None = None, temp_directory: str | None = None
) -> duckdb.DuckDBPyConnection:
    """A new in-memory DuckDB connection with external access disabled.

    Load the world's tables through it, then call :func:`lock`.  ``limits`` caps memory,
    threads and spill space (the defaults of :class:`Limits` when not given); ``memory_limit``
    overrides its memory limit.  Loaders cannot read files through this connection: they insert
    from Python.  :meth:`Sandbox.create` is the stronger path: there the world is read-only.
    """
    limits = limits or Limits()
    if memory_limit is not None:
        limits = replace(limits, memory_limit=memory_limit)
    return _open(":memory:", {**_HARDENED_CONFIG, **limits.config(temp_directory)})


def lock(con: duckdb.DuckDBPyConnection) -> None:
    """Freeze the configuration: no ``SET`` can change a setting afterwards."""
    con.execute("SET lock_configuration = true").fetchall()  # no pending result left on the connection


def _run_internal(
    cursor: duckdb.DuckDBPyConnection,
    tree: exp.Expression,
    expected: duckdb.StatementType,
    parameters: Sequence[Any] | None = None,
) -> duckdb.DuckDBPyConnection:
    """Run a statement the engine built itself, as a sqlglot tree (identifiers quoted, values as
    ``?`` parameters).  DuckDB's own parser must read it as exactly one statement of the
    ``expected`` type, the same check every user query passes."""
    sql = tree.sql(dialect="duckdb", identify=True, comments=False)
    statements = cursor.extract_statements(sql)
    if len(statements) != 1 or statements[0].type != expected:
        raise SqlRefused(
            f"An internal statement did not read as one {expected.name} statement; it was not run.", sql=sql
        )
    return cursor.execute(statements[0], list(parameters) if parameters is not None else None)


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
        self._scratch_lock = threading.Lock()
        self._scratch_count = 0
        cursor = con.cursor()
        try:  # the schema of scratch tables, in the sandbox's own in-memory database
            schema = exp.Create(
                this=exp.Table(this=exp.to_identifier(SCRATCH_SCHEMA), db=exp.to_identifier(SCRATCH_CATALOG)),
                kind="SCHEMA",
                exists=True,
            )
            _run_internal(cursor, schema, duckdb.StatementType.CREATE)
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
        workdir = tempfile.mkdtemp(prefix="cs224v-sandbox-")
        try:
            path = os.path.join(workdir, "world.duckdb")
            allowed = [os.fspath(p) for p in read_paths]
            config = {**_HARDENED_CONFIG, **limits.config(os.path.join(workdir, "spill"))}
            if allowed:  # DuckDB takes allowed_paths only once the database runs, and only while access is on
                config["enable_external_access"] = True
            con = _open(path, config)
            try:
                if allowed:
                    con.execute("SET allowed_paths = ?", [allowed]).fetchall()
                    con.execute("SET enable_external_access = false").fetchall()
                    lock(con)
                loader(con)
                con.execute("CHECKPOINT").fetchall()
            finally:
                con.close()
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
        workdir = tempfile.mkdtemp(prefix="cs224v-sandbox-")
        try:
            return cls._attach(
                os.fspath(path), row_cap=row_cap, timeout_s=timeout_s, limits=limits or Limits(), workdir=workdir
            )
        except BaseException:
            _remove_workdir(workdir)
            raise

    @classmethod
    def _attach(cls, path: str, *, row_cap: int, timeout_s: float, limits: Limits, workdir: str) -> Sandbox:
        # External access is on only until the world is attached: nothing else runs meanwhile.
        config = {**_HARDENED_CONFIG, "enable_external_access": True, **limits.config(os.path.join(workdir, "spill"))}
        con = _open(":memory:", config)
        try:
            cursor = con.cursor()
            try:
                attach = exp.Attach(
                    this=exp.alias_(exp.Literal.string(path), WORLD_DATABASE, quoted=True),
                    expressions=[exp.AttachOption(this=exp.var("READ_ONLY"))],
                )
                _run_internal(cursor, attach, duckdb.StatementType.ATTACH)
            except duckdb.Error as e:
                raise SqlFailed(f"The database {path!r} could not be opened read-only: {_strip_ansi(str(e))}") from e
            finally:
                cursor.close()
            con.execute("SET enable_external_access = false").fetchall()
            lock(con)
            return cls(con, row_cap=row_cap, timeout_s=timeout_s, database=WORLD_DATABASE, workdir=workdir)
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
        duckdb_sql = bound(transpile(self.check(sql)))
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
            cursor = self._con.cursor()
        except duckdb.Error as e:
            raise SqlFailed(f"The database is not available: {e}") from e
        if self._database is not None:
            try:
                _run_internal(cursor, exp.Use(this=exp.to_identifier(self._database)), duckdb.StatementType.SET)
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

    def run_tree(self, expression: exp.Expression) -> QueryResult:
        """Validate, transpile and execute an already parsed query."""
        validate(expression)
        duckdb_sql = bound(transpile(expression))
        _recheck(duckdb_sql)
        return self._execute(duckdb_sql)

    def columns_of(self, expression: exp.Expression) -> list[tuple[str, str]]:
        """Names and DuckDB types of a query's result columns, without running it.

        The query passes the same checks as :meth:`run_tree` (validated, one SELECT to DuckDB's
        own parser); DuckDB then only binds it.
        """
        validate(expression)
        sql = bound(transpile(expression))
        _recheck(sql)
        cursor = self._cursor()
        try:
            statement = self._single_select(cursor, sql)
            relation = cursor.sql(statement.query)
            return [(str(name), str(typ)) for name, typ in zip(relation.columns, relation.types)]
        except duckdb.Error as e:
            raise _from_duckdb(e, sql) from e
        finally:
            cursor.close()

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

    def scratch(self, name: str) -> exp.Table:
        """The (quoted) reference of scratch table ``name``."""
        return exp.table_(
            exp.to_identifier(name, quoted=True),
            db=exp.to_identifier(SCRATCH_SCHEMA, quoted=True),
            catalog=exp.to_identifier(SCRATCH_CATALOG, quoted=True),
        )

    @contextmanager
    def scratch_table(self, columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[Any]]) -> Iterator[exp.Table]:
        """A table of ``rows`` in the ``memory.scratch`` schema for the duration of the block.

        ``columns`` are (name, DuckDB type) pairs: names may hold any text (they are quoted),
        types must be plain built-in types (:func:`plain_type`), and the rows go in as parameters.
        Visible to every cursor; dropped on exit.
        """
        if not columns:
            raise SqlFailed("A scratch table needs at least one column.")
        types = [plain_type(t) for _, t in columns]
        with self._scratch_lock:
            self._scratch_count += 1
            name = f"t{self._scratch_count}"
        table = self.scratch(name)
        cursor = self._cursor()
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
                _run_internal(
                    cursor, exp.Drop(tables=[table.copy()], kind="TABLE", exists=True), duckdb.StatementType.DROP
                )
            except duckdb.Error:
                pass
            finally:
                cursor.close()

    @contextmanager
    def function(
        self, prefix: str, fn: Callable[..., Any], parameters: Sequence[str], return_type: str
    ) -> Iterator[str]:
        """Register a Python scalar function under a fresh name for the duration of the block."""
        with self._scratch_lock:
            self._scratch_count += 1
            name = f"{prefix}_{self._scratch_count}"
        try:
            self._con.create_function(
                name, fn, list(parameters), return_type, side_effects=True, null_handling="special"
            )
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
        """Close the connection and remove its temporary files; later queries fail with :class:`SqlFailed`."""
        self._con.close()
        if self._cleanup is not None:
            self._cleanup()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _remove_workdir(workdir: str | None) -> None:
    if workdir:
        shutil.rmtree(workdir, ignore_errors=True)
