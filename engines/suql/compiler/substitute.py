"""Substitute: every LLM call of a SELECT becomes a column of a scratch table of values, joined on the row key.

DuckDB then runs the projection, ORDER BY, LIMIT / OFFSET and aggregation over those values: for the
final query, for the output rows' keys (which rows need their SELECT-list calls), and for the rows to
verify.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlglot import exp

from engines.suql.compiler.context import RunContext, SelectContext
from engines.suql.compiler.sqlparts import literal, transformed
from engines.suql.dnf import Conjunct
from engines.suql.language import call_key, calls_in, is_llm_call, pretty

ALIAS = "_suql_v"  # the values table in a rewritten SELECT


def key_type(key: exp.Expr) -> str:
    """The scratch type of a row key (``sqlparts.row_key``): one table's rowid, or a join's rowids joined as text.
    Decided by the key, not by a value: a join with no matches has none (it got BIGINT against VARCHAR)."""
    return "BIGINT" if isinstance(key, exp.Column) else "VARCHAR"


def sortable(k: Any) -> tuple[int, Any, str]:
    return (0, k, "") if isinstance(k, (int, float)) else (1, 0, str(k))


def _str_or_none(v: Any) -> str | None:
    return None if v is None else str(v)


def hide_values(select: exp.Select, alias: str, columns: Sequence[str]) -> None:
    """A bare ``*`` of ``select`` leaves out the columns of the joined values table ``alias``
    (qualified, so a user's own column of the same name stays)."""
    for e in select.expressions:
        if isinstance(e, exp.Star):
            hidden = [exp.column(c, table=alias) for c in columns]
            e.set("except_", list(e.args.get("except_") or []) + hidden)


def values_table(ctx: RunContext, sel: SelectContext, keys: Sequence[Any]) -> exp.Table:
    """A scratch table: per row key, the value of each call (c<i>), NULL where unknown or not asked.
    The same rows again (output_keys' table for the final query when no value came between) are the same table."""
    cols = (("_k", key_type(sel.key)),) + tuple((f"c{sel.index_of[k]}", "VARCHAR") for k in sel.calls)
    rows = tuple(tuple([row_key] + [_str_or_none(sel.values.get((row_key, k))) for k in sel.calls]) for row_key in keys)
    made = sel.tables.get((cols, rows))
    if made is None:
        made = ctx.stack.enter_context(ctx.sandbox.scratch_table(cols, rows))
        sel.tables[(cols, rows)] = made
    return made


def rewrite(sel: SelectContext, vals: exp.Table) -> exp.Select:
    """The SELECT with its calls read from ``vals`` (LEFT JOINed on the row key as :data:`ALIAS`)."""
    out = sel.select.copy()
    # a bare summary(reviews) in the SELECT list keeps its own text as the column name
    out.set("expressions", [exp.alias_(e, pretty(e), quoted=True) if is_llm_call(e) else e for e in out.expressions])

    def swap(node: exp.Expr) -> exp.Expr:
        if is_llm_call(node):
            return exp.column(f"c{sel.index_of[call_key(node)]}", table=ALIAS)
        return node

    out = transformed(out, swap)
    hide_values(out, ALIAS, _value_columns(sel))
    vals_ref = vals.copy()
    vals_ref.set("alias", exp.TableAlias(this=exp.to_identifier(ALIAS)))
    out = out.join(vals_ref, on=exp.EQ(this=exp.column("_k", table=ALIAS), expression=sel.key.copy()), join_type="left")
    return out


def _value_columns(sel: SelectContext) -> list[str]:
    return ["_k"] + [f"c{sel.index_of[k]}" for k in sel.calls]


def output_keys(ctx: RunContext, sel: SelectContext, matches: Sequence[Any]) -> list[Any]:
    """The keys of the rows the SELECT outputs (its ORDER BY, LIMIT and OFFSET over the values so far)."""
    if not matches:
        return []
    vals = values_table(ctx, sel, matches)
    q = rewrite(sel, vals)
    key = sel.key
    # the select list stays (ORDER BY may name its aliases or number its columns); the key comes last
    q.set("expressions", list(q.expressions) + [exp.alias_(key.copy(), "_suql_out_k")])
    q.set("where", exp.Where(this=exp.In(this=key.copy(), expressions=[literal(k) for k in matches])))
    q.set("distinct", None)
    order = q.args.get("order")
    if order is not None:
        order.append("expressions", exp.Ordered(this=key.copy()))
    else:
        q = q.order_by(exp.Ordered(this=key.copy()))
    return [r[-1] for r in ctx.sandbox.run_tree(q).rows]


def final_query(ctx: RunContext, sel: SelectContext, matches: Sequence[Any] | None) -> exp.Expr:
    """The SELECT with no LLM call left; ``matches``: the keys its WHERE keeps (None: DuckDB's WHERE)."""
    # the keys its WHERE keeps are the values table's: one scratch table both joins the values and keeps the rows
    # (the values of other rows would be joined to rows the WHERE drops)
    keys = sorted({k for k, _ in sel.values} if matches is None else set(matches), key=sortable)
    vals = values_table(ctx, sel, keys)
    out = rewrite(sel, vals)
    key = sel.key
    if matches is not None:
        out.set("where", exp.Where(this=exp.In(this=key.copy(), query=exp.select("_k").from_(vals.copy()).subquery())))
    order = out.args.get("order")
    if order is not None and not out.args.get("group") and not out.args.get("distinct"):
        order.append("expressions", exp.Ordered(this=key.copy()))
    return out


def unknown_conditions(sel: SelectContext, conjuncts: Sequence[Conjunct], keys: Sequence[Any]) -> list[str]:
    """The text conditions whose value is unknown on any of ``keys``, sorted."""
    return sorted(
        {
            text
            for text, call_keys in _literals(conjuncts)
            if any(sel.values.get((k, ck), "missing") is None for k in keys for ck in call_keys)
        }
    )


def _literals(conjuncts: Sequence[Conjunct]) -> list[tuple[str, list[tuple[str, str, str]]]]:
    """Each text literal of the conjuncts, as shown, with the keys of its calls."""
    return [(pretty(lit), [call_key(n) for n in calls_in(lit)]) for c in conjuncts for lit in c.text]


def collect_to_verify(
    ctx: RunContext,
    sel: SelectContext,
    unknown: Sequence[Any],
    conjuncts: Sequence[Conjunct],
    *,
    unsettled: Sequence[Any] = (),
) -> None:
    """The rows whose WHERE is Unknown, with the conditions left unknown, into the run's rows to verify
    (the underlying rows when the query aggregates).  ``unsettled``: those of them lazy verification stopped
    at their first Unknown: each also says ``settled: False`` and the conditions ``not_asked`` (the row may
    still turn out not to match: a condition not asked could say 'No')."""
    keys = sorted(set(unknown), key=sortable)
    vals = values_table(ctx, sel, sorted({k for k, _ in sel.values} | set(keys), key=sortable))
    key = sel.key
    q = rewrite(sel, vals)
    aggregated = bool(q.args.get("group")) or any(e.find(exp.AggFunc) is not None for e in q.expressions)
    if aggregated:  # list the underlying rows, not groups
        q.set("expressions", [exp.Star()])
        hide_values(q, ALIAS, _value_columns(sel))
        q.set("group", None)
        q.set("having", None)
        q.set("order", None)
    q.set(
        "expressions",
        list(q.expressions)
        + [exp.alias_(key.copy(), "_suql_key"), exp.alias_(ctx.names.display_id(sel.select), "_row")],
    )
    q.set("where", exp.Where(this=exp.In(this=key.copy(), expressions=[literal(k) for k in keys])))
    q.set("limit", None)
    q.set("offset", None)
    q.set("distinct", None)
    result = ctx.sandbox.run_tree(q)
    literals = _literals(conjuncts)
    lazy = set(unsettled)
    for rec in result.records():
        row_key = rec.pop("_suql_key")
        rec["unknown"] = sorted(
            {
                text
                for text, call_keys in literals
                if any(sel.values.get((row_key, ck), "missing") is None for ck in call_keys)
            }
        )
        rec["approximate"] = ctx.state.approximate
        if row_key in lazy:
            asked = {text for text, call_keys in literals if all((row_key, ck) in sel.values for ck in call_keys)}
            rec["not_asked"] = sorted({text for text, _ in literals} - asked)
            if not rec["unknown"]:  # no condition came back Unknown: the structured part is (SQL NULL)
                rec["unknown"] = ["a structured condition (NULL)"]
            rec["settled"] = False
            ctx.state.unsettled += 1
        ctx.state.to_verify.append(rec)
        ctx.state.to_verify_keys.append(row_key)
