"""A statement, compiled: its set operations, CTEs and subqueries first, then each SELECT with LLM calls of
its own, planned by the pure passes and run by the executor.

For such a SELECT (lecture 7 §3):

1. materialise: its CTEs, subqueries and derived tables with LLM calls become scratch tables;
2. plan (:mod:`~engines.suql.compiler.passes`): normalise → split conjuncts → push down → order predicates →
   plan, reading between the last two the candidates the pushed-down query finds
   (:mod:`~engines.suql.compiler.evidence`);
3. execute (:mod:`~engines.suql.compiler.executor`): decide the rows, ask the SELECT-list calls, and build
   the query over value tables DuckDB runs.

Every step returns a new value: the statement it is given is never changed, and a compiled statement carries
its wide twin (:class:`~engines.suql.compiler.records.Compiled`) instead of a table keyed by object identity.
"""

from __future__ import annotations

from sqlglot import exp

from engines.suql.compiler.context import RunContext
from engines.suql.compiler.evidence import read_evidence
from engines.suql.compiler.executor import execute_select
from engines.suql.compiler.materialise import (
    materialise_ctes,
    materialise_sources,
    materialise_subqueries,
    over_wide_twins,
    set_operation_twin,
    twin_of,
)
from engines.suql.compiler.passes import PASSES, PlanContext, SelectQuery, plan_select, select_query
from engines.suql.compiler.records import Compiled, PlanBuilt
from engines.suql.compiler.sqlparts import resolved_order, row_key
from engines.suql.language import SuqlError, calls_in, has_llm_calls
from engines.suql.plan import Plan


def compile_statement(ctx: RunContext, tree: exp.Expr, *, top: bool = False) -> Compiled:
    """A tree with no LLM calls left, equivalent to ``tree``, and its wide twin."""
    state = ctx.state
    if not has_llm_calls(tree):
        if top:
            state.plan = Plan(ctx.mode, "", notes=("no answer() or summary(): DuckDB runs the query as it is",))
            ctx.emit(PlanBuilt(state.plan))
        return Compiled(tree, twin_of(state, tree))
    if isinstance(tree, (exp.Union, exp.Except, exp.Intersect)):
        out = tree.copy()
        left, right = compile_statement(ctx, out.this), compile_statement(ctx, out.expression)
        out.set("this", left.tree)
        out.set("expression", right.tree)
        return Compiled(out, set_operation_twin(out, [("this", left.wide), ("expression", right.wide)]))
    if isinstance(tree, exp.Subquery):
        sub = tree.copy()
        inner = compile_statement(ctx, sub.this)
        sub.set("this", inner.tree)
        return Compiled(sub, set_operation_twin(sub, [("this", inner.wide)]))
    if not isinstance(tree, exp.Select):
        raise SuqlError(f"answer() and summary() are supported in SELECT statements, not in {type(tree).__name__}.")
    select = materialise_ctes(ctx, tree, lambda body: compile_statement(ctx, body))
    select = materialise_subqueries(ctx, select, lambda body: compile_statement(ctx, body))
    if not calls_in(select):  # every call was in a CTE or subquery
        if top:
            state.plan = state.plan or Plan(ctx.mode, "", notes=("answer() ran in CTEs or subqueries",))
        return Compiled(select, twin_of(state, select))
    return compile_select(ctx, select, top=top)


def compile_select(ctx: RunContext, select: exp.Select, *, top: bool) -> Compiled:
    """One SELECT with LLM calls in its own clauses, planned and run into a query over value tables."""
    select = materialise_sources(ctx, select, lambda body: compile_statement(ctx, body))
    planned = plan_select(
        analyse(ctx, select),
        PlanContext(ctx.mode, ctx.cost, ctx.ranker),
        lambda pushed: read_evidence(ctx, pushed),
        PASSES,
    )
    compiled = execute_select(ctx, planned, top=top)
    return widen_own(ctx, select, compiled, top=top)


def analyse(ctx: RunContext, select: exp.Select) -> SelectQuery:
    """The first pass's input, with what the schema says of ``select``: its ORDER BY over the sources, and how
    its rows are named."""
    row_key(select)  # a SELECT whose rows have no key is refused before any schema is read
    return select_query(
        select,
        order=resolved_order(select, ctx.sandbox),
        label=ctx.names.label_column(select),
        display_id=ctx.names.display_id(select),
    )


def widen_own(ctx: RunContext, select: exp.Select, compiled: Compiled, *, top: bool) -> Compiled:
    """A SELECT with answer() of its own over sources (FROM, IN, EXISTS, …) that have wide twins:
    the same SELECT is compiled again over the twins (its own answer() asked of the rows they add),
    so the statement can compare the two results.  At the top its own unknown rows are listed apart,
    so the twin is its SQL result; below, the twin keeps its unknown rows as well."""
    wide_select, found = over_wide_twins(ctx.state, select)
    if not found:
        return compiled
    wide_final = compile_select(ctx, wide_select, top=False)
    own = wide_final.wide
    conditions = set(found) | set(own[1] if own is not None and not top else ())
    tree = own[0] if own is not None and not top else wide_final.tree
    return Compiled(compiled.tree, (tree, sorted(conditions)))
