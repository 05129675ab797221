"""What may reach PostgreSQL, and how a checked tree becomes the text sent.

The rules (:func:`pg_policy`) come on top of the sandbox's gate: only the database's own tables (never
``pg_catalog`` or ``information_schema``), no functions that run SQL hidden in a string
(``query_to_xml``, ``dblink``, ``ts_stat``), change settings (``set_config``) or reach the server's files
and processes (``pg_*`` admin functions, ``lo_*``), no row locks, no parameters of its own, and calls that
build one long value only with a size within the gate's bounds.  What is sent is the tree with unquoted
names folded as PostgreSQL folds them, every identifier quoted, and string values as ``$n`` parameters.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

from engines.sql.sandbox import MAX_LIST_ELEMENTS, MAX_STRING_CHARS, SqlFailed, SqlRefused
from engines.sql.sandbox.policy import function_names

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
            for name in sorted(function_names(node)):
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
