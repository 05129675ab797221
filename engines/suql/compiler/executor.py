"""The executor: runs one SELECT's plan (:class:`~engines.suql.compiler.passes.SelectPlan`).

It decides the candidate rows the plan visits, in its order, under Kleene logic (the static loop of
:mod:`~engines.suql.compiler.rows`, or the adaptive one of :mod:`~engines.suql.compiler.adaptive` in the
retrieval modes), asks the SELECT-list and ORDER BY calls only where needed, and returns the SELECT with every
call a column of a scratch table of values (:mod:`~engines.suql.compiler.substitute`).  What the run finds out
on the way (the plan shown, rows to verify, rows examined) goes to the run's :class:`RunState`; the wide twin
of the result is returned with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from engines.suql.compiler.adaptive import AdaptiveLoop, Learner
from engines.suql.compiler.asker import BudgetExhausted
from engines.suql.compiler.cascade import cascade_decide
from engines.suql.compiler.context import RunContext, SelectContext
from engines.suql.compiler.kleene import DEFERRED, Deferred, Truth
from engines.suql.compiler.passes import SelectPlan
from engines.suql.compiler.records import Compiled, PlanBuilt, Row, Wide
from engines.suql.compiler.rows import RowEvaluator, RowLoop
from engines.suql.compiler.substitute import collect_to_verify, final_query, output_keys, unknown_conditions
from engines.suql.language import LLMCall


def execute_select(ctx: RunContext, plan: SelectPlan, *, top: bool) -> Compiled:
    """Run ``plan``: the SELECT with no LLM call left, over the values its calls returned, and its wide twin
    (the rows whose WHERE is unknown, when the SELECT is not the statement's output: ``top`` lists them to
    verify instead)."""
    state = ctx.state
    if top or state.dnf is None:
        state.dnf = plan.dnf
    if plan.capped:
        state.approximate = True
    shown = replace(plan.shown, dnf=state.dnf or "")  # the statement's WHERE, as the run shows it
    if top or state.plan is None:
        state.plan = shown
    ctx.emit(PlanBuilt(shown))

    sel = SelectContext(plan.select, plan.key, plan.calls, plan.index_of)
    conjuncts = list(plan.conjuncts)
    orders = [list(o) for o in plan.orders]  # the static loop re-orders them after its sample
    evaluator = RowEvaluator(ctx, sel, conjuncts, orders, plan.written)
    rows = plan.evidence.rows
    # lazy verification: a row stops at its first Unknown condition, unless the user asked to settle it
    defer = (lambda row: row.key not in ctx.settle) if ctx.defers(top=top) else None
    unsettled: list[Any] = []

    # the rows
    if plan.limit == 0:  # LIMIT 0: no row can be output, so no call is needed
        matches, unknown = [], []
    elif plan.text_where:
        cascaded = cascade_decide(ctx, evaluator, plan, shown, top=top, defer=defer) if ctx.mode.cascade else None  # G
        decided: list[tuple[Any, Truth | Deferred]]
        if cascaded is not None:
            decided = cascaded
        elif plan.adaptive:
            learner = Learner(ctx, sel, conjuncts, orders, plan.visit, plan.evidence.scores, plan.evidence.indexes)
            decided = AdaptiveLoop(ctx, evaluator, learner).decide(
                plan.visit, lazy=plan.lazy, needed=plan.needed, ordered=plan.ordered, defer=defer
            )
        else:
            decided = RowLoop(ctx, evaluator, [list(e) for e in plan.estimates]).decide(
                plan.visit, lazy=plan.lazy, needed=plan.needed, plan=shown, defer=defer
            )
        matches = [k for k, t in decided if t is True]
        unknown = [k for k, t in decided if t is None]
        unsettled = [k for k, t in decided if t is DEFERRED]
    else:
        matches = [r.key for r in rows]
        unknown = []

    # SELECT-list / ORDER BY calls, only where needed
    if plan.select_list_calls and plan.limit != 0:
        by_key = {r.key: r for r in rows}
        compute(ctx, sel, plan.first_calls, matches, by_key)
        if not plan.need_all:
            compute(ctx, sel, plan.rest_calls, output_keys(ctx, sel, matches), by_key)

    # the final query over the scratch tables
    final = final_query(ctx, sel, matches if plan.text_where else None)
    if top and ctx.state.proxy_accepted:  # mode G: the output without the proxy's rows marks who decided each
        ctx.state.llm_only = final_query(ctx, sel, [k for k in matches if k not in ctx.state.proxy_accepted])
    wide: Wide | None = None
    if (unknown or unsettled) and top:
        collect_to_verify(ctx, sel, unknown + unsettled, conjuncts, unsettled=unsettled)
    elif unknown:  # below the output: a wide twin with the unknown rows, for the statement to compare
        wide = (final_query(ctx, sel, matches + unknown), unknown_conditions(sel, conjuncts, list(set(unknown))))
    return Compiled(final, wide)


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
