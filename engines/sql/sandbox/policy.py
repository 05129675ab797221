"""The policy on the parsed tree (:func:`validate`, pure): one read-only ``SELECT``, nothing else.

Anywhere in the tree it refuses nested statements (``WITH d AS (DELETE ...)``), ``SELECT ... INTO``,
functions that read files, the network, the environment or the configuration or that have side effects
(``read_csv``, ``glob``, ``getenv``, ``query`` ...), type names that are not plain names, and table names
that look like files (``FROM '/etc/passwd'``, ``FROM 'x.csv'``).  The keyword lists the tokenizer's first
check reads (:mod:`engines.sql.sandbox.gate`) live here too.
"""

from __future__ import annotations

import re
from typing import Any

from sqlglot import exp

from engines.sql.sandbox.errors import SqlRefused

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
_STATEMENT_NAMES: dict[type[exp.Expr], str] = {
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
_NESTED_STATEMENT_TYPES: tuple[type[exp.Expr], ...] = tuple(
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


def function_names(node: exp.Func) -> set[str]:
    """Every name the function node may go by, lower case."""
    names = {n.lower() for n in type(node).sql_names()}
    if isinstance(node, (exp.Anonymous, exp.AnonymousAggFunc)):
        names.add(node.name.lower())
    return names


def _position(*nodes: Any) -> tuple[int | None, int | None]:
    """The 1-based start of the first node that carries a source position."""
    for node in nodes:
        if not isinstance(node, exp.Expr):
            continue
        meta = node.meta
        if {"line", "col", "start", "end"} <= meta.keys():
            # sqlglot's ``col`` is where the token ends; the token spans start..end.
            return meta["line"], max(1, meta["col"] - (meta["end"] - meta["start"]))
    return None, None


def _describe_statement(node: exp.Expr) -> str:
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


def validate(expression: exp.Expr) -> None:
    """Refuse a parsed query unless it is one read-only ``SELECT``.

    Pure: looks at the tree only.  Raises :class:`SqlRefused` naming what was refused.
    """
    _validate_top_level(expression)
    for node in expression.walk():
        _validate_node(node)


def _validate_top_level(expression: exp.Expr) -> None:
    query = expression
    while isinstance(query, exp.Subquery):  # "(SELECT ...)"
        query = query.this
    if isinstance(query, (exp.Select, exp.SetOperation)):
        return
    what = _describe_statement(query)
    if what == "non-query":
        raise SqlRefused(f"{_ONLY_SELECT}; this statement is not a SELECT query.")
    raise SqlRefused(f"{_ONLY_SELECT}; {what} statements are refused.")


def _validate_node(node: exp.Expr) -> None:
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
        for name in sorted(function_names(node)):
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
