"""Materialise: CTEs, subqueries and derived tables with LLM calls become scratch tables, innermost first.

Rows to verify below the output (CTEs, subqueries, UNION branches): inside a CTE, a subquery or a
derived table an Unknown is SQL NULL, so the inner row whose condition is unknown is not one of its
rows, exactly as DuckDB's WHERE drops it.  Beside each such scratch table a "wide" twin holds the rows
it would have if every unknown condition were true.  The statement is run over both; an output row
that is in one result and not in the other depends on an unknown and is listed to verify (rows the
outer query includes or excludes either way never are).  A SELECT with answer() of its own over such
tables is compiled a second time over the twins (its answer() asked of the rows they add, see
``pipeline.widen_own``); its own unknown rows are listed as usual.

Each step returns a new tree (the SELECT it was given, copied once it changes) and never changes its input;
a compiled statement carries its wide twin (:class:`~engines.suql.compiler.records.Compiled`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from sqlglot import exp

from engines.sql.sandbox import QueryResult, SqlFailed
from engines.suql.compiler.context import RunContext, RunState
from engines.suql.compiler.records import Compiled, Wide
from engines.suql.compiler.sqlparts import Q, has_nested_llm_select, transformed
from engines.suql.language import SuqlError, has_llm_calls

Compile = Callable[[exp.Expr], Compiled]  # a statement with no LLM calls left, and its wide twin


def materialise(ctx: RunContext, body: exp.Expr, compile_: Compile) -> exp.Table:
    """``body`` compiled and run into a scratch table (and its wide twin, when it has one)."""
    done = compile_(body)
    compiled = done.tree
    sandbox = ctx.sandbox
    try:
        columns = sandbox.columns_of(compiled)
    except SqlFailed as e:
        raise SuqlError(
            f"A subquery with answer() could not run on its own (is it correlated with the outer query?): {e.message}"
        ) from e
    result = sandbox.run_tree(compiled)
    names = unique([c for c, _ in columns])
    schema = list(zip(names, (t for _, t in columns)))
    table = ctx.stack.enter_context(sandbox.scratch_table(schema, result.rows))
    widened = done.wide
    if widened is not None:  # its rows if every unknown inner condition were true
        wide_tree, conditions = widened
        wide = ctx.stack.enter_context(sandbox.scratch_table(schema, sandbox.run_tree(wide_tree).rows))
        ctx.state.wide_tables[table.name] = (wide, conditions)
    return table


def materialise_ctes(ctx: RunContext, select: exp.Select, compile_: Compile) -> exp.Select:
    """``select`` with each CTE that asks an LLM read from a scratch table (a copy, when one does)."""
    with_ = select.args.get("with_")
    if with_ is None or not any(has_llm_calls(cte.this) for cte in with_.expressions):
        return select
    select = select.copy()
    with_ = select.args["with_"]
    earlier: list[exp.CTE] = []
    for cte in with_.expressions:
        if has_llm_calls(cte.this):
            body = cte.this.copy()
            if earlier:
                body.set("with_", exp.With(expressions=[c.copy() for c in earlier]))
            table = materialise(ctx, body, compile_)
            cte.set("this", exp.select("*").from_(table))
        earlier.append(cte)
    return select


def materialise_subqueries(ctx: RunContext, select: exp.Select, compile_: Compile) -> exp.Select:
    """Innermost first: every nested SELECT with LLM calls becomes a scratch table (in a copy of ``select``,
    when it has one)."""
    if not any(s is not select and has_llm_calls(s) for s in select.find_all(exp.Select)):
        return select
    select = select.copy()
    nested = [
        s
        for s in select.find_all(exp.Select)
        if s is not select and has_llm_calls(s) and not has_nested_llm_select(s) and not isinstance(s.parent, exp.CTE)
    ]
    for inner in nested:
        context = inner.copy()
        with_ = select.args.get("with_")
        if with_ is not None and context.args.get("with_") is None:
            context.set("with_", with_.copy())
        table = materialise(ctx, context, compile_)
        inner.replace(exp.select("*").from_(table))
    if any(
        s is not select and has_llm_calls(s) and not isinstance(s.parent, exp.CTE) for s in select.find_all(exp.Select)
    ):
        if not nested:
            raise SuqlError("answer() in this kind of nested query is not supported.")
        return materialise_subqueries(ctx, select, compile_)
    return select


def materialise_sources(ctx: RunContext, select: exp.Select, compile_: Compile) -> exp.Select:
    """Derived tables, views and CTE names in FROM / JOIN become scratch tables, so every row has a rowid (in
    a copy of ``select``, when one does)."""
    with_ = select.args.get("with_")
    cte_names = {c.alias_or_name for c in with_.expressions} if with_ is not None else set()
    kinds = [_source_kind(ctx, src.this, cte_names) for src in _sources(select)]
    if not any(kinds):
        return select
    select = select.copy()
    with_ = select.args.get("with_")
    for src, kind in zip(_sources(select), kinds):
        node = src.this
        if kind == "view":
            table = materialise(ctx, exp.select("*").from_(exp.table_(node.name, db=node.db or None)), compile_)
            table.set("alias", exp.TableAlias(this=exp.to_identifier(node.alias_or_name)))
            node.replace(table)
        elif kind == "cte":
            body = exp.select("*").from_(exp.to_table(node.name))
            assert with_ is not None  # a CTE source names a CTE of this SELECT's WITH (cte_names)
            body.set("with_", with_.copy())
            table = materialise(ctx, body, compile_)
            table.set("alias", exp.TableAlias(this=exp.to_identifier(node.alias_or_name)))
            node.replace(table)
        elif kind == "subquery":
            alias = node.alias_or_name
            table = materialise(ctx, node.this.copy(), compile_)
            table.set("alias", exp.TableAlias(this=exp.to_identifier(alias or table.name)))
            node.replace(table)
    return select


def _source_kind(ctx: RunContext, node: exp.Expr, cte_names: set[str]) -> str | None:
    """What a FROM / JOIN source is, when it must become a scratch table: a table without a rowid (a view),
    a CTE's name, a derived table; None when its rows have rowids already."""
    if isinstance(node, exp.Table) and node.db != "scratch" and node.name not in cte_names:
        return None if ctx.names.has_rowid(node) else "view"
    if isinstance(node, exp.Table) and not node.db and node.name in cte_names:
        return "cte"
    if isinstance(node, exp.Subquery):
        return "subquery"
    return None


def _sources(select: exp.Select) -> list[exp.Expr]:
    return [s for s in [select.args.get("from_")] + list(select.args.get("joins") or []) if s is not None]


# --- wide twins ---------------------------------------------------------------------------------


def over_wide_twins(state: RunState, tree: Q) -> tuple[Q, list[str]]:
    """``tree`` (a copy) with every scratch table that has a wide twin read from the twin, and the
    unknown conditions of the twins it read (in the order met, repeated as met)."""
    found: list[str] = []

    def swap(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Table) and node.db == "scratch" and node.name in state.wide_tables:
            wide, conditions = state.wide_tables[node.name]
            found.extend(conditions)
            twin = wide.copy()
            twin.set("alias", node.args["alias"].copy() if node.args.get("alias") is not None else None)
            return twin
        return node

    return transformed(tree.copy(), swap), found


def twin_of(state: RunState, tree: exp.Expr) -> Wide | None:
    """The wide twin of a statement that was not compiled on its own (it asks no LLM itself, or only in the
    CTEs and subqueries already materialised): ``tree`` over the wide twins of the scratch tables it reads, and
    their unknown conditions; None when it reads none."""
    if not state.wide_tables:
        return None
    out, found = over_wide_twins(state, tree)
    return (out, sorted(set(found))) if found else None


def set_operation_twin(tree: exp.Expr, parts: Sequence[tuple[str, Wide | None]]) -> Wide | None:
    """The wide twin of a compiled set operation or subquery ``tree`` whose compiled parts (``"this"``,
    ``"expression"``) have the twins ``parts``: each part with a twin read from it; None when none has one."""
    if all(got is None for _, got in parts):
        return None
    out = tree.copy()
    conditions: list[str] = []
    for part, got in parts:
        if got is not None:
            out.set(part, got[0].copy())
            conditions += got[1]
    return out, sorted(set(conditions))


def derived_to_verify(ctx: RunContext, widened: Wide | None, result: QueryResult) -> None:
    """Output rows whose inclusion depends on an unknown inner condition (see the module's docstring): those
    in the statement's result ``result`` or its wide twin ``widened``, and not in both."""
    if widened is None:
        return
    wide_tree, conditions = widened
    wide = ctx.sandbox.run_tree(wide_tree)
    narrow_rows = Counter(map(hashable, result.rows))
    wide_rows = Counter(map(hashable, wide.rows))
    only_wide = wide_rows - narrow_rows
    only_narrow = narrow_rows - wide_rows
    picked = []
    for source, extra in ((wide, only_wide), (result, only_narrow)):
        for row in source.rows:
            h = hashable(row)
            if extra.get(h, 0) > 0:
                extra[h] -= 1
                picked.append(row)
    for rec in QueryResult("", result.columns, tuple(picked), False, 0.0).records():
        rec["_row"] = "—"
        rec["unknown"] = [f"{c} (in a subquery)" for c in conditions]
        rec["approximate"] = ctx.state.approximate
        ctx.state.to_verify.append(rec)
        ctx.state.to_verify_keys.append(None)  # a row of the output, from a wide twin: settled when all are


def hashable(row: Sequence[Any]) -> tuple[Any, ...]:
    """A result row as a dictionary key (list values, e.g. a cuisines column, become tuples)."""
    return tuple(hashable(v) if isinstance(v, (list, tuple)) else repr(v) if isinstance(v, dict) else v for v in row)


def unique(names: Sequence[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for n in names:
        c = seen.get(n, 0)
        seen[n] = c + 1
        out.append(n if c == 0 else f"{n}_{c}")
    return out
