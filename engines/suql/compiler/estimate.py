"""An upper bound on the LLM calls a query can make, without making any (the consent prompt's number)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from engines.errors import EngineError
from engines.sql.sandbox import Sandbox
from engines.suql.compiler.sqlparts import int_arg, over_sources, resolved_order, within
from engines.suql.dnf import to_dnf
from engines.suql.language import as_call, calls_in, has_llm_calls, is_llm_call
from engines.suql.plan import Mode


def estimate_calls(sandbox: Sandbox, tree: exp.Expr, m: Mode) -> int:
    """Per SELECT with calls of its own: the candidate rows (after the structured conditions, in
    the modes that test them first; capped in mode F) times the distinct answer() calls of its
    WHERE, plus the rows that can reach the SELECT list times its other calls (LIMIT bounds
    these only where the executor computes them for the output rows alone).  A run stops at
    the budget whatever this says.
    """
    if not has_llm_calls(tree):
        return 0
    root_with = tree.args.get("with_")
    total = 0
    for select in tree.find_all(exp.Select):
        own = calls_in(select)
        if own:
            total += estimate_select(sandbox, select, own, m, root_with if select is not tree else None)
    return total


def estimate_select(
    sandbox: Sandbox, select: exp.Select, own: Sequence[exp.Anonymous], m: Mode, outer_with: exp.With | None
) -> int:
    """The bound for one SELECT with calls of its own (see :func:`estimate_calls`)."""
    if not m.udf and int_arg(select.args.get("limit")) == 0:
        return 0  # LIMIT 0: the executor makes no call
    where = select.args.get("where")
    where_nodes = calls_in(where.this) if where is not None else []
    other_nodes = [n for n in own if not (where is not None and within(n, where))]
    sources = [select.args.get("from_")] + list(select.args.get("joins") or [])
    if select.args.get("from_") is None:
        return 0  # refused at run time: answer() needs a FROM clause
    if m.udf:  # DuckDB may evaluate every occurrence on every row of any source
        counts = [count_rows(sandbox, select, None, outer_with)]
        counts += [
            count_rows(sandbox, exp.select("*").from_(src.this.copy()), None, outer_with, sources_of=select)
            for src in sources[1:]
            if src is not None
        ]
        return max(counts) * len(own)
    if where is not None and where_nodes:  # (where_nodes are read from the WHERE: it is there)
        conjuncts, _ = to_dnf(where.this)
        filt = None
        if m.structured_first and conjuncts:
            filt = exp.Not(
                this=exp.Is(
                    this=exp.paren(exp.or_(*[exp.paren(c.structured_sql()) for c in conjuncts])), expression=exp.false()
                )
            )
        n = count_rows(sandbox, select, filt, outer_with)
        if m.cap is not None:
            n = min(n, m.cap)
    else:
        n = count_rows(sandbox, select, where.this.copy() if where is not None else None, outer_with)
    total = n * len({as_call(x).key for x in where_nodes})
    other = {as_call(x).key for x in other_nodes}
    if not other:
        return total
    order, _ = resolved_order(select, sandbox)  # ORDER BY 2 / an alias may name an answer()
    order_keys = {as_call(x).key for x in calls_in(order)} if order is not None else set()
    aggregated = (
        bool(select.args.get("group"))
        or bool(select.args.get("distinct"))
        or any(e.find(exp.AggFunc) is not None for e in select.expressions)
    )
    limit_n = int_arg(select.args.get("limit"))
    if aggregated or m.summaries_for_all_matches or limit_n is None:
        return total + n * len(other)
    out_rows = min(n, limit_n + (int_arg(select.args.get("offset")) or 0))
    return total + n * len(other & order_keys) + out_rows * len(other - order_keys)


def count_rows(
    sandbox: Sandbox,
    select: exp.Select,
    condition: exp.Expr | None,
    outer_with: exp.With | None,
    *,
    sources_of: exp.Select | None = None,
) -> int:
    """Rows of ``select``'s FROM / JOINs satisfying ``condition``; nested SELECTs with LLM calls
    lose their LLM conditions (more rows, never fewer); the row cap when it cannot be counted."""
    q = over_sources(exp.select(exp.Count(this=exp.Star())), select)
    if condition is not None:
        q = q.where(condition)
    context = sources_of if sources_of is not None else select
    withs = [c.copy() for w in (outer_with, context.args.get("with_")) if w is not None for c in w.expressions]
    if withs:
        q.set("with_", exp.With(expressions=withs))

    def neutral(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Select) and node is not q:
            for part in ("where", "having", "qualify"):
                clause = node.args.get(part)
                if clause is not None and has_llm_calls(clause):
                    node.set(part, None)
            return node
        if is_llm_call(node):
            return exp.cast(exp.null(), "VARCHAR")
        return node

    counted = q.transform(neutral)
    try:
        rows = sandbox.run_tree(counted).rows
        return int(rows[0][0]) if rows and rows[0][0] is not None else 0
    except EngineError:
        return sandbox.row_cap
