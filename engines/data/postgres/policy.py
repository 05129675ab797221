"""What may reach PostgreSQL, and how a checked tree becomes the text sent.

The rules (:func:`pg_policy`) come on top of the sandbox's gate: only the schema's own relations (never
``pg_catalog`` or ``information_schema``), none whose reading runs a function PostgreSQL does not define
(:attr:`engines.data.postgres.catalog.PgTable.refused`), only PostgreSQL's own functions (those in
``pg_catalog`` with an OID initdb gave them, looked up by OID when the source opened: a function the database
defines, in any schema, is refused, however it is named), and of those none that run SQL hidden in a string
(``query_to_xml``, ``dblink``, ``ts_stat``), change settings (``set_config``) or reach the server's files and
processes (``pg_*`` admin functions, ``lo_*``); no operator or type of another schema, no expression over a
column whose type has a cast through a function PostgreSQL does not define, no row locks, no parameters of its
own, and calls that build one long value only with a size within the gate's bounds.

Which overload of a name runs is PostgreSQL's decision, made on a session whose ``search_path`` is
``pg_catalog`` (:mod:`engines.data.postgres.connection`): every candidate it can pick for an unqualified
function or operator is one of its own.  What is sent (:func:`_qualified`) is the tree with unquoted names
folded as PostgreSQL folds them, every identifier quoted, the schema's relations and types named with their
schema, and string values as ``$n`` parameters.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

from engines.data.postgres.catalog import PgCatalog, PgTable
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
_CATALOG_SCHEMA = "pg_catalog"
_LOWER_NAME = re.compile(r"[a-z_][a-z0-9_]*")
_NOT_OURS = (
    "only PostgreSQL's own functions (pg_catalog) may run here: one the database defines could write (through "
    "dblink) or run anything"
)


def _pg_name(node: Any) -> str:
    """A name as PostgreSQL reads it: quoted as written, unquoted folded to lower case."""
    if isinstance(node, exp.Identifier):
        return node.name if node.quoted else node.name.lower()
    if isinstance(node, exp.Expression):
        return node.name.lower()
    return str(node).lower()


def _cte_reference(table: exp.Table) -> bool:
    """Whether ``table`` names a CTE visible where it stands (PostgreSQL's scoping: a WITH's CTEs are visible in
    its query and in the CTEs after them, all of them in WITH RECURSIVE), rather than a relation."""
    if table.args.get("db") or table.args.get("catalog") or not isinstance(table.this, exp.Identifier):
        return False
    name = _pg_name(table.this)
    child: exp.Expr = table
    node = table.parent
    while node is not None:
        visible: list[exp.Expr] = []
        if isinstance(node, exp.With):
            ctes = list(node.expressions)
            index = next((i for i, c in enumerate(ctes) if c is child), len(ctes))
            visible = ctes if node.args.get("recursive") else ctes[:index]
        elif isinstance(with_ := node.args.get("with_"), exp.With) and child is not with_:
            visible = list(with_.expressions)
        for cte in visible:
            alias = cte.args.get("alias")
            if alias is not None and _pg_name(alias.this) == name:
                return True
        child, node = node, node.parent
    return False


def _qualifier(node: exp.Expr) -> exp.Expr | None:
    """The schema a function call is qualified with (``public.f(x)``: ``public``), or None."""
    parent = node.parent
    if isinstance(parent, exp.Dot) and parent.expression is node:
        schema = parent.this
        return schema if isinstance(schema, exp.Expr) else None
    return None


def _type_name(node: exp.DataType) -> tuple[str | None, str] | None:
    """(schema or None, name) of a user-defined type, as PostgreSQL reads them; None for a built-in type."""
    if node.this != exp.DataType.Type.USERDEFINED:
        return None
    kind = node.args.get("kind")
    if isinstance(kind, exp.Dot):
        parts = [p for p in kind.flatten()]
        return ".".join(_pg_name(p) for p in parts[:-1]), _pg_name(parts[-1])
    return None, _pg_name(kind) if kind is not None else ""  # an Identifier, or a name sqlglot keeps as text


def _refuse_function(name: str, qualifier: exp.Expr | None, catalog: PgCatalog) -> None:
    where = catalog.elsewhere.get(name)
    shown = f"{qualifier.sql(dialect='postgres')}.{name}" if qualifier is not None else name
    what = f"{where} is defined in the database" if where else "it is not one of PostgreSQL's own functions"
    raise SqlRefused(f"The function {shown}() is refused on a PostgreSQL source ({what}): {_NOT_OURS}.")


def _check_function(node: exp.Func, catalog: PgCatalog) -> None:
    for name in sorted(function_names(node)):
        reason = _PG_DENIED.get(name)
        if reason is None and name not in _PG_ALLOWED_PG_FUNCTIONS:
            reason = next((r for p, r in _PG_DENIED_PREFIXES.items() if name.startswith(p)), None)
        if reason is not None:
            raise SqlRefused(
                f"The function {name}() is refused on a PostgreSQL source: {reason}. "
                "Queries may only read the database's tables."
            )
    qualifier = _qualifier(node)
    if qualifier is not None and _pg_name(qualifier) != _CATALOG_SCHEMA:
        _refuse_function(_pg_name(node.this) if isinstance(node, exp.Anonymous) else node.sql_name().lower(),
                         qualifier, catalog)  # fmt: skip
    if isinstance(node, (exp.Anonymous, exp.AnonymousAggFunc)):
        name = _pg_name(node.this)
        if name not in catalog.functions:
            _refuse_function(name, qualifier, catalog)
    elif shadowed := sorted(function_names(node) & catalog.shadowed):
        # a function sqlglot knows by a name pg_catalog also holds a function of that PostgreSQL does not
        # define (an extension installed there): which one runs would be PostgreSQL's choice, so neither does
        _refuse_function(shadowed[0], qualifier, catalog)


def pg_policy(tree: exp.Expr, catalog: PgCatalog, *, own_parameters: bool = False) -> None:
    """PostgreSQL's rules on top of the gate's: raises :class:`SqlRefused`.

    ``catalog``: the database's relations a query may read, its schema, the functions and types it may use.
    ``own_parameters``: the tree holds ``$n`` parameters this module put there (the re-check of what is sent).
    """
    tables = catalog.tables
    listed = ", ".join(sorted(tables)) or "none"
    read: list[str] = []
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
            _check_function(node, catalog)
        if isinstance(node, exp.Operator):
            operator = str(node.args.get("operator") or "")
            if "." in operator and operator.rsplit(".", 1)[0].strip().strip('"').lower() != _CATALOG_SCHEMA:
                raise SqlRefused(
                    f"The operator OPERATOR({operator}) is refused: only PostgreSQL's own operators may be used."
                )
        if isinstance(node, exp.DataType) and (named := _type_name(node)) is not None:
            schema, name = named
            if schema not in (None, _CATALOG_SCHEMA) and (schema != catalog.schema or name not in catalog.types):
                raise SqlRefused(
                    f"The type {schema}.{name} is refused: name PostgreSQL's types, or the types of this "
                    "database's schema without the schema."
                )
            if schema != _CATALOG_SCHEMA and catalog.types.get(name):
                raise SqlRefused(f"The type {name} is refused ({catalog.types[name]}): {_NOT_OURS}.")
        if isinstance(node, exp.Table):
            if isinstance(node.this, _TABLE_FUNCTIONS):
                continue
            if not isinstance(node.this, exp.Identifier):
                raise SqlRefused(f"Reading from {node.this.sql(dialect='postgres')} is refused: name a table.")
            db = node.args.get("db")
            if node.args.get("catalog") or (db is not None and _pg_name(db) != catalog.schema):
                raise SqlRefused(
                    f"The table {node.sql(dialect='postgres')} is refused: name the database's tables without a "
                    f"schema ({listed})."
                )
            if _cte_reference(node):
                continue
            name = _pg_name(node.this)  # exactly as PostgreSQL would look it up
            if name not in tables:
                raise SqlRefused(f"There is no table {node.name!r} in this database; its tables are: {listed}.")
            table = tables[name]
            if table.refused:
                raise SqlRefused(f"The {table.what} {name} is refused ({table.refused}): {_NOT_OURS}.")
            read.append(name)
    _check_columns(tree, [tables[n] for n in read])


def _check_columns(tree: exp.Expr, read: list[PgTable]) -> None:
    """No expression reads a column whose type has a cast through a function PostgreSQL does not define (it
    picks a cast by the types alone); ``SELECT *`` still shows such a column through its type's output."""
    refused = {c.name.lower(): (t, c) for t in read for c in t.columns if c.refused}
    if not refused:
        return
    for column in tree.find_all(exp.Column):
        hit = refused.get(_pg_name(column.this).lower()) if isinstance(column.this, exp.Identifier) else None
        if hit is not None:
            table, c = hit
            raise SqlRefused(f"The column {c.name} of {table.name} is refused ({c.refused}): {_NOT_OURS}.")


def _qualified(tree: exp.Expr, catalog: PgCatalog) -> exp.Expr:
    """The tree (names already folded, :func:`_pg_names`) with the schema's relations and types named with
    their schema: the session's search_path holds pg_catalog alone."""
    schema = exp.to_identifier(catalog.schema, quoted=True)

    def qualify(node: exp.Expr) -> exp.Expr:
        if (
            isinstance(node, exp.Table)
            and isinstance(node.this, exp.Identifier)
            and not node.args.get("db")
            and node.name in catalog.tables
            and not _cte_reference(node)
        ):
            node = node.copy()
            node.set("db", schema.copy())
            return node
        if isinstance(node, exp.DataType) and (named := _type_name(node)) is not None:
            name = named[1]
            if named[0] is None and name in catalog.types and all(map(_LOWER_NAME.fullmatch, (catalog.schema, name))):
                # written as plain names, as the gate's type rule asks (PostgreSQL reads them back the same); a
                # type whose name needs quotes stays unqualified, and PostgreSQL says it does not know it
                return exp.DataType(this=exp.DataType.Type.USERDEFINED, kind=f"{catalog.schema}.{name}")
        return node

    return tree.transform(qualify, copy=True)


def _literal_number(node: exp.Expr | None) -> float | None:
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            return float(node.name)
        except ValueError:
            return None
    return None


def _bounded_size(node: exp.Expr) -> None:
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
        numbers = [d for d in dims if d is not None]
        size: float | None = math.prod(numbers) if dims and len(numbers) == len(dims) else None
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


def _parametrise(tree: exp.Expr) -> tuple[exp.Expr, list[Any]]:
    """The tree with every string value replaced by a ``$n`` parameter, and the values in order.

    Strings that are part of the syntax stay (an INTERVAL's text, a type's parameters); numbers stay
    literals (they came out of the tokenizer as numbers and are checked to be numbers)."""
    values: list[Any] = []

    def swap(node: exp.Expr) -> exp.Expr:
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


def _pg_names(tree: exp.Expr) -> exp.Expr:
    """Unquoted names folded to lower case, as PostgreSQL reads them (every name is quoted when sent)."""
    return normalize_identifiers(tree.copy(), dialect="postgres")


def _to_postgres(tree: exp.Expr) -> str:
    try:
        return tree.sql(dialect="postgres", identify=True, comments=False)
    except SqlglotError as e:
        raise SqlFailed(f"The query could not be translated to PostgreSQL: {e}") from e
    except RecursionError:
        raise SqlFailed("The query is nested too deeply to be translated.") from None
