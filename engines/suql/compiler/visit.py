"""In which order candidate rows are visited, how many (the cap of mode F), and when the visit may stop."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlglot import exp

from engines.retrieval.bm25 import ChunkIndex
from engines.suql.compiler.context import Row, RunContext
from engines.suql.compiler.cost import Scores
from engines.suql.compiler.rows import run_all
from engines.suql.compiler.sqlparts import over_sources, parse_duck, sources_sql
from engines.suql.language import LLMCall, as_call, calls_in, pretty
from engines.suql.plan import Conjunct, Mode


def laziness(
    mode: Mode,
    *,
    text_where: bool,
    limit_n: int | None,
    order: exp.Expression | None,
    order_dep: bool,
    aggregated: bool,
) -> tuple[bool, str]:
    """May the visit stop once LIMIT (+ OFFSET) rows match, and why (not)."""
    if not text_where:
        return False, "no answer() in the WHERE"
    if not mode.lazy:
        return False, f"mode {mode.name} examines every candidate"
    if limit_n is None:
        return False, "no LIMIT: every match is needed"
    if aggregated:
        return False, "the query aggregates: every match is needed"
    if order_dep:
        return False, "ORDER BY depends on answer(): every candidate must be read before the first is known"
    if order is not None and mode.as_written:
        return False, "a row-at-a-time engine filters every row, then sorts, then takes the LIMIT"
    if order is not None:
        return True, "candidates are visited in the query's ORDER BY, so the first matches are the top ones"
    return True, "no ORDER BY: any matching rows are a valid answer"


def select_calls_scope(mode: Mode, *, aggregated: bool, order_dep: bool) -> str:
    """For which rows the SELECT-list calls run (shown in the plan)."""
    if mode.summaries_for_all_matches:
        return "every matching row (naive)"
    if aggregated:
        return "every matching row (the query aggregates over them)"
    if order_dep:
        return "every matching row for ORDER BY, then the output rows"
    return "the output rows only"


def retrieval_scores(
    ctx: RunContext,
    select: exp.Select,
    key: exp.Expression,
    where_calls: Sequence[LLMCall],
    rows: Sequence[Row],
    indexes: dict[str, ChunkIndex] | None = None,
) -> dict[str, dict[Any, float]]:
    """Per answer() question (keyed by call sql): every candidate's BM25 score (max over chunks).

    ``rows`` are the candidates (the structured conditions already ran in DuckDB).  A single base
    table of at most ``row_cap`` rows gets one index per text column over all its rows, built once
    and reused by later queries (the built-in worlds); a larger table, and a join, index only this
    query's candidates, from the text the candidate query already read: what ranking costs is what
    the candidates cost, never the table.  ``indexes`` receives each call's index (the adaptive
    ranker scores the answers' evidence with it).
    """
    out: dict[str, dict[Any, float]] = {}
    single = not select.args.get("joins")
    for call in where_calls:
        if call.sql() in out:
            continue
        text_sql = call.text.sql(dialect="duckdb")
        index = whole_table_index(ctx, select, key, text_sql) if single else None
        if index is None:
            index = ChunkIndex.build((r.key, r.texts.get(text_sql)) for r in rows)
        out[call.sql()] = index.scores(call.question or "summary")
        if indexes is not None:
            indexes[call.sql()] = index
    return out


def whole_table_index(ctx: RunContext, select: exp.Select, key: exp.Expression, text_sql: str) -> ChunkIndex | None:
    """The BM25 index of ``text_sql`` over every row of the single table ``select`` reads, built once per
    engine; None (remembered too) when the table holds more than ``row_cap`` rows: then only the
    candidates are indexed.  Counting stops at ``row_cap + 1`` rows."""
    cap = ctx.sandbox.row_cap

    def fetch() -> list[tuple[Any, Any]] | None:
        probe = over_sources(exp.select(exp.Literal.number(1)), select).limit(cap + 1)
        count = exp.select(exp.Count(this=exp.Star())).from_(probe.subquery("_rows"))
        rows = ctx.sandbox.run_tree(count).rows
        if not rows or rows[0][0] is None or int(rows[0][0]) > cap:
            return None
        q = over_sources(exp.select(exp.alias_(key.copy(), "_k"), exp.alias_(parse_duck(text_sql), "_t")), select)
        return [(k, t) for k, t in run_all(ctx, q).rows]

    return ctx.indexes.get((sources_sql(select), text_sql), fetch)


def visit_order(
    mode: Mode,
    rows: Sequence[Row],
    scores: Scores,
    conjuncts: Sequence[Conjunct],
    *,
    structured_order: bool,
    order: exp.Order | None,
) -> tuple[list[Row], str, bool]:
    """The candidates to visit, in order; how the order is described; whether the cap dropped any
    (the results are then approximate).  Sets each row's retrieval score."""
    cands = [r for r in rows if any(f is not False for f in r.flags)] if mode.structured_first else list(rows)
    per_conjunct = [
        [scores.get(as_call(n).sql(), {}) for lit in c.text for n in calls_in(lit)] for c in conjuncts
    ]  # each conjunct's calls' scores, found once
    for r in cands:
        best = 0.0
        for i, call_scores in enumerate(per_conjunct):
            if r.flags[i] is False and mode.structured_first:
                continue
            best = max(best, sum(s.get(r.key, 0.0) for s in call_scores))
        r.score = best
    capped_some = False
    if mode.cap is not None:
        # a row an OR branch without answer() already decides needs no call: the cap never drops it
        free = [r for r in cands if any(not c.text and r.flags[i] is True for i, c in enumerate(conjuncts))]
        free_ids = {id(r) for r in free}
        costly = [r for r in cands if id(r) not in free_ids]
        capped = sorted(costly, key=lambda r: (-r.score, r.key))[: mode.cap]
        capped_some = len(capped) < len(costly)
        keep = {id(r) for r in capped} | free_ids
        cands = [r for r in cands if id(r) in keep]
    if structured_order:
        assert order is not None
        return (
            cands,
            f"the query's ORDER BY ({', '.join(pretty(o) for o in order.expressions)}), then row id",
            capped_some,
        )
    if mode.retrieval:
        cands.sort(key=lambda r: (-r.score, r.key))
        return (
            cands,
            "retrieval score (BM25, max over chunks, summed over the conjunct's answer() conditions)",
            capped_some,
        )
    return cands, "table order", capped_some
