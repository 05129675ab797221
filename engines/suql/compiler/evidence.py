"""What the planner's last passes read: the candidate rows (the pushed-down query, run in DuckDB) and their
retrieval scores (BM25).  The executor reads them between ``push_down`` and ``order_predicates``
(:func:`engines.suql.compiler.passes.plan_select`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlglot import exp

from engines.errors import EngineError
from engines.retrieval.bm25 import ChunkIndex
from engines.sql.sandbox import QueryResult
from engines.suql.compiler.context import RunContext
from engines.suql.compiler.passes import Evidence, Pushed
from engines.suql.compiler.records import Row
from engines.suql.compiler.sqlparts import over_sources, sources_sql
from engines.suql.dnf import Conjunct
from engines.suql.language import LLMCall, SuqlError, pretty


def read_evidence(ctx: RunContext, pushed: Pushed) -> Evidence:
    """The candidates of ``pushed``, and in the modes that visit by retrieval their BM25 scores (and indexes)."""
    rows = read_candidates(ctx, pushed)
    indexes: dict[str, ChunkIndex[Any]] = {}
    scores: dict[str, dict[Any, float]] = {}
    if pushed.text_where and not ctx.mode.as_written:  # mode B visits in table order, reads no score
        scores = retrieval_scores(ctx, pushed, pushed.where_calls, rows, indexes)
    return Evidence(tuple(rows), scores, indexes)


def read_candidates(ctx: RunContext, pushed: Pushed) -> list[Row]:
    """Every candidate row of the pushed-down query, with its key, label, each conjunct's structured truth,
    each structured leaf of the written WHERE (mode B) and the texts the calls read."""
    result = run_all(
        ctx, pushed.candidates, lambda: _counted(ctx, pushed.select, pushed.conjuncts, text_where=pushed.text_where)
    )
    rows: list[Row] = []
    cols = result.columns
    n_conj = len(pushed.conjuncts)
    labelled = pushed.label is not None
    for raw in result.rows:
        rec = dict(zip(cols, raw))
        rows.append(
            Row(
                key=rec["_k"],
                label=f"#{rec['_d']} {rec['_label']}" if labelled else f"#{rec['_d']}",
                flags=[rec[f"_s{i}"] for i in range(n_conj)],
                texts={t: rec[f"_t{j}"] for j, t in enumerate(pushed.text_sqls)},
                leaves=[rec[f"_w{j}"] for j in range(len(pushed.leaves))],
            )
        )
    return rows


def run_all(ctx: RunContext, q: exp.Query, counted: Callable[[], tuple[str, str]] | None = None) -> QueryResult:
    """``q``'s rows, all of them: a query past the row cap is refused (candidates must not be cut), with a
    message that says how many rows there are and what they are (``counted``: what the rows are, e.g.
    "rows of 'big' pass the query's structured conditions (...)", and what to do)."""
    result = ctx.sandbox.run_tree(q)
    if result.truncated:
        cap = ctx.sandbox.row_cap
        what, advice = counted() if counted is not None else ("candidate rows", "Narrow the structured conditions.")
        n = _count(ctx, q)
        many = f"{n:,}" if n is not None else f"More than {cap:,}"
        raise SuqlError(
            f"{many} {what}: more than the {cap:,} candidate rows a SUQL query may read "
            f"(row_cap; CS224V_ROW_CAP raises it). {advice}"
        )
    return result


def _count(ctx: RunContext, q: exp.Query) -> int | None:
    """How many rows ``q`` returns, counted by DuckDB (None if it cannot tell in time)."""
    inner = q.copy()
    inner.set("order", None)
    counting = exp.select(exp.Count(this=exp.Star())).from_(inner.subquery("_candidates"))
    try:
        rows = ctx.sandbox.run_tree(counting).rows
    except EngineError:
        return None
    return int(rows[0][0]) if rows and rows[0][0] is not None else None


def _sources_named(select: exp.Select) -> str:
    """The tables a SELECT reads, as a message names them: 'big', the join of 'a' and 'b'."""
    names = []
    for src in [select.args.get("from_")] + list(select.args.get("joins") or []):
        if src is None:
            continue
        node = src.this
        own = isinstance(node, exp.Table) and node.db != "scratch"  # a CTE or subquery with answer() is scratch
        names.append(repr(node.name) if own else "a subquery's rows")
    if len(names) == 1:
        return names[0]
    return "the join of " + ", ".join(names[:-1]) + " and " + names[-1]


def _counted(
    ctx: RunContext, select: exp.Select, conjuncts: Sequence[Conjunct], *, text_where: bool
) -> tuple[str, str]:
    """What the candidate query of ``select`` counts, and what would lower the count, said for a message."""
    tables = _sources_named(select)
    where = select.args.get("where")
    narrow = "Narrow the structured conditions."
    if not text_where:
        if where is None:
            return f"rows of {tables} (the query has no WHERE)", "Add a structured condition (a WHERE) to narrow them."
        return f"rows of {tables} match the WHERE ({_short(pretty(where.this))})", narrow
    if not ctx.mode.structured_first:
        return (
            f"rows of {tables} (mode {ctx.mode.name} asks answer() of every row: no structured condition runs first)",
            "Use a mode that runs the structured conditions first (C, D, E or F).",
        )
    if not conjuncts or any(not c.structured for c in conjuncts):
        return (
            f"rows of {tables} (a branch of the WHERE has no structured condition, so every row is a candidate)",
            "Give every branch of the WHERE a structured condition.",
        )
    structured = " OR ".join(
        pretty(c.structured_sql()) if len(conjuncts) == 1 else f"({pretty(c.structured_sql())})" for c in conjuncts
    )
    return f"rows of {tables} pass the query's structured conditions ({_short(structured)})", narrow


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def retrieval_scores(
    ctx: RunContext,
    pushed: Pushed,
    where_calls: Sequence[LLMCall],
    rows: Sequence[Row],
    indexes: dict[str, ChunkIndex[Any]] | None = None,
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
    single = not pushed.select.args.get("joins")
    for call in where_calls:
        if call.sql() in out:
            continue
        index = whole_table_index(ctx, pushed, call) if single else None
        if index is None:
            index = ChunkIndex.build((r.key, r.texts.get(call.text_sql)) for r in rows)
        out[call.sql()] = index.scores(call.question or "summary")
        if indexes is not None:
            indexes[call.sql()] = index
    return out


def whole_table_index(ctx: RunContext, pushed: Pushed, call: LLMCall) -> ChunkIndex[Any] | None:
    """The BM25 index of the text ``call`` reads over every row of the single table the SELECT reads, built
    once per engine; None (remembered too) when the table holds more than ``row_cap`` rows: then only the
    candidates are indexed.  Counting stops at ``row_cap + 1`` rows."""
    cap = ctx.sandbox.row_cap
    select = pushed.select

    def fetch() -> list[tuple[Any, Any]] | None:
        probe = over_sources(exp.select(exp.Literal.number(1)), select).limit(cap + 1)
        count = exp.select(exp.Count(this=exp.Star())).from_(probe.subquery("_rows"))
        rows = ctx.sandbox.run_tree(count).rows
        if not rows or rows[0][0] is None or int(rows[0][0]) > cap:
            return None
        q = over_sources(exp.select(exp.alias_(pushed.key.copy(), "_k"), exp.alias_(call.text, "_t")), select)
        return [(k, t) for k, t in run_all(ctx, q).rows]

    return ctx.indexes.get((sources_sql(select), call.text_sql), fetch)
