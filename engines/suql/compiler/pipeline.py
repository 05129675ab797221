"""The passes in order: a statement, then each SELECT with LLM calls of its own.

For such a SELECT (lecture 7 §3):

1. materialise: its CTEs, subqueries and derived tables with LLM calls become scratch tables;
2. its WHERE is normalised to DNF; one query reads every candidate row with each conjunct's
   structured truth (``rows.candidates``);
3. cost: each conjunct's answer() predicates are ordered by cost x selectivity (``rows.rank``);
   visit: candidates are ordered by the query's ORDER BY or by retrieval score, capped in mode F;
4. the row loop decides each row under Kleene logic, lazily when LIMIT allows (``rows.RowLoop``);
5. SELECT-list and ORDER BY calls run only where needed;
6. substitute: the calls become value columns and DuckDB runs the final query over them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlglot import exp

from engines.suql.compiler.adaptive import AdaptiveLoop, Learner
from engines.suql.compiler.asker import BudgetExhausted
from engines.suql.compiler.context import PlanBuilt, Row, RunContext, SelectContext
from engines.suql.compiler.kleene import structured_leaves
from engines.suql.compiler.materialise import (
    materialise_ctes,
    materialise_sources,
    materialise_subqueries,
    over_wide_twins,
)
from engines.suql.compiler.rows import RowEvaluator, RowLoop, candidates, rank
from engines.suql.compiler.sqlparts import int_arg, resolved_order, row_key, within
from engines.suql.compiler.substitute import collect_to_verify, final_query, output_keys, unknown_conditions
from engines.suql.compiler.visit import laziness, retrieval_scores, select_calls_scope, visit_order
from engines.suql.language import LLMCall, SuqlError, as_call, calls_in, has_llm_calls, pretty
from engines.suql.plan import Conjunct, Plan, dnf_text, to_dnf


def compile_statement(ctx: RunContext, tree: exp.Expression, *, top: bool = False) -> exp.Expression:
    """A tree with no LLM calls left, equivalent to ``tree``."""
    state = ctx.state
    if not has_llm_calls(tree):
        if top:
            state.plan = Plan(ctx.mode, "", notes=("no answer() or summary(): DuckDB runs the query as it is",))
            ctx.emit(PlanBuilt(state.plan))
        return tree
    if isinstance(tree, (exp.Union, exp.Except, exp.Intersect)):
        out = tree.copy()
        out.set("this", compile_statement(ctx, tree.this))
        out.set("expression", compile_statement(ctx, tree.expression))
        return out
    if isinstance(tree, exp.Subquery):
        out = tree.copy()
        out.set("this", compile_statement(ctx, tree.this))
        return out
    if not isinstance(tree, exp.Select):
        raise SuqlError(f"answer() and summary() are supported in SELECT statements, not in {type(tree).__name__}.")
    select = tree.copy()
    materialise_ctes(ctx, select, lambda body: compile_statement(ctx, body))
    materialise_subqueries(ctx, select, lambda body: compile_statement(ctx, body))
    if not calls_in(select):  # every call was in a CTE or subquery
        if top:
            state.plan = state.plan or Plan(ctx.mode, "", notes=("answer() ran in CTEs or subqueries",))
        return select
    return compile_select(ctx, select, top=top)


def compile_select(ctx: RunContext, select: exp.Select, *, top: bool) -> exp.Expression:
    """One SELECT with LLM calls in its own clauses, compiled into a query over value tables."""
    mode, state = ctx.mode, ctx.state
    materialise_sources(ctx, select, lambda body: compile_statement(ctx, body))
    key = row_key(select)
    nodes = calls_in(select)
    calls: dict[tuple[str, str, str], LLMCall] = {}
    for n in nodes:
        c = as_call(n)
        calls.setdefault(c.key, c)
    sel = SelectContext(select, key, calls, {k: i for i, k in enumerate(calls)})

    where = select.args.get("where")
    text_where = where is not None and bool(calls_in(where.this))
    order, order_resolved = resolved_order(select, ctx.sandbox)
    order_dep = order is not None and bool(calls_in(order))
    aggregated = (
        bool(select.args.get("group"))
        or bool(select.args.get("distinct"))
        or any(isinstance(e.unalias(), exp.AggFunc) or e.find(exp.AggFunc) is not None for e in select.expressions)
    )
    limit_n = int_arg(select.args.get("limit"))
    offset_n = int_arg(select.args.get("offset")) or 0

    conjuncts: list[Conjunct] = []
    dnf_ok = True
    if text_where:
        conjuncts, dnf_ok = to_dnf(where.this)
    if top or state.dnf is None:
        state.dnf = dnf_text(conjuncts) if text_where else (pretty(where.this) if where is not None else "")

    text_sqls = sorted({c.text.sql(dialect="duckdb") for c in calls.values()})
    label = ctx.names.label_column(select)

    # 1. candidates, with each conjunct's structured truth
    lazy_ok, lazy_reason = laziness(
        mode, text_where=text_where, limit_n=limit_n, order=order, order_dep=order_dep, aggregated=aggregated
    )
    if lazy_ok and not order_resolved:
        lazy_ok, lazy_reason = False, "ORDER BY names a column of SELECT * by its number: every match is read first"
    visit_structured_order = lazy_ok and order is not None
    written = mode.as_written and text_where
    leaves = structured_leaves(where.this) if written else []
    rows = candidates(
        ctx,
        select,
        key,
        conjuncts,
        text_where=text_where,
        text_sqls=text_sqls,
        label=label,
        visit_order=order if visit_structured_order else None,
        leaves=leaves,
    )

    # 2. estimates, retrieval, and the plan
    where_calls = [as_call(n) for c in conjuncts for lit in c.text for n in calls_in(lit)]
    indexes: dict = {}
    scores = retrieval_scores(ctx, select, key, where_calls, rows, indexes) if text_where and not written else {}
    adaptive = text_where and not written and mode.retrieval and mode.feedback and mode.short_circuit
    if written:  # a row-at-a-time engine sees the WHERE as written, not its DNF: nothing to order
        conjunct_plans, orders, estimates = [], [[] for _ in conjuncts], []
        evaluator = RowEvaluator(
            ctx, sel, conjuncts, orders, (where.this, {id(leaf): j for j, leaf in enumerate(leaves)})
        )
    else:
        conjunct_plans, orders, estimates = rank(ctx, conjuncts, rows, scores)
        evaluator = RowEvaluator(ctx, sel, conjuncts, orders, None)
    visit, visit_text, capped = visit_order(
        mode, rows, scores, conjuncts, structured_order=visit_structured_order, order=order
    )
    if adaptive:
        if lazy_ok and not visit_structured_order:
            visit_text += (
                "; re-ranked as answers arrive: rows most likely to match every condition first "
                "(like the sentences the 'Yes' answers quoted, unlike the 'No' ones"
                + (", by a sentence model's sense of them" if ctx.ranker == "sentence" else "")
                + ")"
            )
        visit_text += "; each row's conditions asked in the order its evidence suggests"
    if capped:
        state.approximate = True
    select_nodes = [n for n in nodes if not (where is not None and within(n, where))]
    select_calls = sorted({as_call(n).sql() for n in select_nodes})
    plan = Plan(
        mode=mode,
        dnf=state.dnf or "",
        conjuncts=tuple(conjunct_plans),
        visit_order=visit_text if text_where else "",
        lazy=lazy_ok,
        lazy_reason=lazy_reason,
        stop_after=(limit_n + offset_n) if lazy_ok and limit_n is not None else None,
        cap=mode.cap if text_where and mode.cap is not None else None,
        select_calls=tuple(select_calls),
        select_calls_for=select_calls_scope(mode, aggregated=aggregated, order_dep=order_dep),
        notes=(
            (
                "the WHERE as written, left to right on each row: AND stops at the first false condition, OR at "
                "the first true one; a condition written before the structured ones is asked of every row",
            )
            if written
            else ()
            if dnf_ok
            else (
                "the WHERE is too large for DNF: its top-level structured "
                "conditions run first in DuckDB, the rest row by row",
            )
        ),
    )
    if top or state.plan is None:
        state.plan = plan
    ctx.emit(PlanBuilt(plan))

    # 3. decide the rows
    if limit_n == 0:  # LIMIT 0: no row can be output, so no call is needed
        matches, unknown = [], []
    elif text_where and adaptive:
        learner = Learner(ctx, sel, conjuncts, orders, visit, scores, indexes)
        decided = AdaptiveLoop(ctx, evaluator, learner).decide(
            visit, lazy=lazy_ok, needed=(limit_n or 0) + offset_n, ordered=visit_structured_order
        )
        matches = [k for k, t in decided if t is True]
        unknown = [k for k, t in decided if t is None]
    elif text_where:
        decided = RowLoop(ctx, evaluator, estimates).decide(
            visit, lazy=lazy_ok, needed=(limit_n or 0) + offset_n, plan=plan
        )
        matches = [k for k, t in decided if t is True]
        unknown = [k for k, t in decided if t is None]
    else:
        matches = [r.key for r in rows]
        unknown = []

    # 4. SELECT-list / ORDER BY calls, only where needed
    by_key = {r.key: r for r in rows}
    other_calls = [calls[k] for k in calls if any(as_call(n).key == k for n in select_nodes)]
    if other_calls and limit_n != 0:
        order_calls = [
            calls[k] for k in calls if order is not None and any(as_call(n).key == k for n in calls_in(order))
        ]
        need_all = aggregated or mode.summaries_for_all_matches
        first = order_calls if not need_all else other_calls
        compute(ctx, sel, first, matches, by_key)
        if not need_all:
            output = output_keys(ctx, sel, matches)
            rest = [c for c in other_calls if c not in order_calls]
            compute(ctx, sel, rest, output, by_key)

    # 5. the final query over the scratch tables
    final = final_query(ctx, sel, matches if text_where else None)
    state.wide_of[id(final)] = None
    if unknown and top:
        collect_to_verify(ctx, sel, unknown, conjuncts)
    elif unknown:  # below the output: a wide twin with the unknown rows, for the statement to compare
        wide = final_query(ctx, sel, matches + unknown)
        state.wide_of[id(final)] = (wide, unknown_conditions(sel, conjuncts, list(set(unknown))))
    widen_own(ctx, select, final, top=top)
    return final


def compute(
    ctx: RunContext, sel: SelectContext, calls: Sequence[LLMCall], keys: Sequence[Any], by_key: dict[Any, Row]
) -> None:
    """The values of ``calls`` on the rows ``keys``; past the budget the rest stay unknown (NULL)."""
    for k in keys:
        row = by_key.get(k)
        if row is None:
            continue
        for call in calls:
            ctx.check_cancel()
            try:
                ctx.asker.value(row, call, sel.values)
            except BudgetExhausted:
                return


def widen_own(ctx: RunContext, select: exp.Select, final: exp.Expression, *, top: bool) -> None:
    """A SELECT with answer() of its own over sources (FROM, IN, EXISTS, …) that have wide twins:
    the same SELECT is compiled again over the twins (its own answer() asked of the rows they add),
    so the statement can compare the two results.  At the top its own unknown rows are listed apart,
    so the twin is its SQL result; below, the twin keeps its unknown rows as well."""
    wide_select, found = over_wide_twins(ctx.state, select)
    if not found:
        return
    wide_final = compile_select(ctx, wide_select, top=False)
    own = ctx.state.wide_of.get(id(wide_final))
    conditions = set(found) | set(own[1] if own is not None and not top else ())
    tree = own[0] if own is not None and not top else wide_final
    ctx.state.wide_of[id(final)] = (tree, sorted(conditions))
