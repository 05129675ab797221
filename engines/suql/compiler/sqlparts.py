"""Small helpers over SQL trees: a query over the same sources, row keys, literals, ORDER BY resolution.

Pure functions (``resolved_order`` asks the sandbox for column names, nothing else).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from sqlglot import exp

from engines.errors import EngineError
from engines.sql.sandbox import Sandbox
from engines.suql.language import SuqlError, has_llm_calls, is_llm_call

Q = TypeVar("Q", bound=exp.Expr)


def transformed(tree: Q, fun: Callable[[exp.Expr], exp.Expr]) -> Q:
    """``tree.transform(fun)`` (a copy) for a ``fun`` that rewrites nodes below the root and keeps the root's
    kind (a SELECT stays a SELECT), typed as ``tree`` is; a ``fun`` that changed the root's kind is a bug."""
    out = tree.transform(fun)
    if not isinstance(out, type(tree)):
        raise TypeError(f"a rewrite of a {type(tree).__name__} returned a {type(out).__name__}")
    return out


def without_calls(tree: exp.Expr) -> exp.Expr:
    """``tree`` (a copy) with every LLM call replaced by a VARCHAR NULL: what binds without asking."""
    return tree.transform(lambda n: exp.cast(exp.null(), "VARCHAR") if is_llm_call(n) else n)


def resolved_order(select: exp.Select, sandbox: Sandbox) -> tuple[exp.Order | None, bool]:
    """The ORDER BY as expressions over the sources: ``ORDER BY 2`` and ``ORDER BY alias`` name a
    SELECT-list expression (DuckDB's and PostgreSQL's rule: a bare name is the output column first;
    inside an expression an alias counts only where no source column has that name).  The executor
    visits candidates in this order, so ordinals and aliases must mean what they mean to DuckDB.
    False as second value when an ordinal points into a ``SELECT *`` (left unresolved)."""
    order = select.args.get("order")
    if order is None:
        return None, True
    order = order.copy()
    items = list(select.expressions)
    aliases = {e.alias: e.unalias() for e in items if isinstance(e, exp.Alias) and e.alias}
    source_columns: set[str] | None = None
    resolved = True

    def sources() -> set[str]:
        nonlocal source_columns
        if source_columns is None:
            try:
                probe = without_calls(over_sources(exp.select(exp.Star()), select))
                source_columns = {c for c, _ in sandbox.columns_of(probe)}
            except EngineError:
                source_columns = set()
        return source_columns

    for ordered in order.expressions:
        term = ordered.this
        if isinstance(term, exp.Literal) and not term.is_string and term.name.isdigit():
            n = int(term.name)
            if any(
                isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
                for e in items[:n]
            ):
                resolved = False
            elif 1 <= n <= len(items):
                ordered.set("this", items[n - 1].unalias().copy())
        elif isinstance(term, exp.Column) and not term.table and term.name in aliases:
            ordered.set("this", aliases[term.name].copy())
        else:

            def swap(node: exp.Expr) -> exp.Expr:
                if (
                    isinstance(node, exp.Column)
                    and not node.table
                    and node.name in aliases
                    and node.name not in sources()
                ):
                    return aliases[node.name].copy()
                return node

            if any(isinstance(c, exp.Column) and not c.table and c.name in aliases for c in term.find_all(exp.Column)):
                ordered.set("this", term.transform(swap))
    return order, resolved


def over_sources(q: exp.Select, select: exp.Select) -> exp.Select:
    """``q`` reading the same FROM, JOINs and CTEs as ``select``."""
    from_ = select.args.get("from_")
    q.set("from_", from_.copy() if from_ is not None else None)
    if select.args.get("joins"):
        q.set("joins", [j.copy() for j in select.args["joins"]])
    if select.args.get("with_"):
        q.set("with_", select.args["with_"].copy())
    return q


def bare_table(table: exp.Table) -> exp.Table:
    """The table with its catalog and schema (a scratch table lives in memory.scratch), without its alias."""
    bare = table.copy()
    bare.set("alias", None)
    return bare


def row_key(select: exp.Select) -> exp.Expr:
    sources = [select.args.get("from_")] + list(select.args.get("joins") or [])
    names = []
    for src in sources:
        if src is None:
            continue
        node = src.this
        if not isinstance(node, exp.Table):
            raise SuqlError(f"answer() over {type(node).__name__} sources is not supported.")
        names.append(node.alias_or_name)
    if not names:
        raise SuqlError("answer() and summary() need a FROM clause: they read a text column of each row.")
    keys = [exp.column("rowid", table=n) for n in names]
    if len(keys) == 1:
        return keys[0]
    return join_parts(keys, "")


def join_parts(parts: Sequence[exp.Expr], missing: str) -> exp.Expr:
    """``a|b`` for a joined row; the side an outer join left empty is ``missing`` (sqlglot's CONCAT_WS
    is NULL as soon as one part is, which gave every unmatched row of a LEFT JOIN the same NULL key)."""
    return exp.func(
        "concat_ws",
        exp.Literal.string("|"),
        *[exp.func("coalesce", exp.cast(p.copy(), "VARCHAR"), exp.Literal.string(missing)) for p in parts],
    )


def as_text_sql(node: exp.Expr, text_types: dict[str, str]) -> exp.Expr:
    """A text argument as VARCHAR: list columns joined with newlines."""
    if isinstance(node, exp.Column) and text_types.get(node.name, "").endswith("[]"):
        return exp.func("array_to_string", node.copy(), exp.func("chr", exp.Literal.number(10)))
    return exp.cast(node.copy(), "VARCHAR")


def has_nested_llm_select(s: exp.Select) -> bool:
    return any(inner is not s and has_llm_calls(inner) for inner in s.find_all(exp.Select))


def within(node: exp.Expr, ancestor: exp.Expr) -> bool:
    p = node.parent
    while p is not None:
        if p is ancestor:
            return True
        p = p.parent
    return False


def int_arg(node: exp.Expr | None) -> int | None:
    if node is None:
        return None
    value = node.args.get("expression") or node.this
    if isinstance(value, exp.Literal) and not value.is_string:
        try:
            return int(value.name)
        except ValueError:
            return None
    return None


def sources_sql(select: exp.Select) -> str:
    parts = [select.args["from_"].sql(dialect="duckdb")] + [
        j.sql(dialect="duckdb") for j in select.args.get("joins") or []
    ]
    return " ".join(parts)


def literal(value: Any) -> exp.Expr:
    if isinstance(value, (int, float)):
        return exp.Literal.number(value)
    return exp.Literal.string(str(value))
