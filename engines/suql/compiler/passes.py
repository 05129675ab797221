"""The SUQL planner as pure passes (lecture 7 §3), kept in order in :data:`PASSES` as sqlglot's optimizer keeps
its ``RULES``:

    normalise → split_conjuncts → push_down → order_predicates → plan

Each pass is a function ``(value, PlanContext) -> new value``.  It reads the value it is given and returns a
new one: it never changes its input, runs no query and asks no LLM.  The first reads a :class:`SelectQuery`
(one SELECT with LLM calls of its own, :func:`select_query`); each later one adds what it decides to what came
before; the last returns a :class:`SelectPlan`, the data the executor runs (``engines.suql.compiler.executor``).

``push_down`` decides the one query DuckDB runs for the candidate rows; ``order_predicates`` and ``plan`` read
what that query found (:class:`Evidence`: the candidates, and their retrieval scores) from the context.
:func:`plan_select` runs the passes in order, and between the two halves asks its caller for that evidence.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, NamedTuple, TypeVar

from sqlglot import exp

from engines.retrieval.bm25 import ChunkIndex
from engines.suql.compiler.cost import COST_MODEL, CostModel, PredicateEstimate, Scores
from engines.suql.compiler.kleene import number_leaves
from engines.suql.compiler.records import CallKey, Row
from engines.suql.compiler.sqlparts import int_arg, over_sources, row_key, within
from engines.suql.dnf import Conjunct, dnf_text, normal_form, split
from engines.suql.language import LLMCall, annotate_calls, as_call, call_key, calls_in, pretty
from engines.suql.plan import ConjunctPlan, Mode, Plan

# --- what the passes read and return ----------------------------------------------------------------


@dataclass(frozen=True)
class Evidence:
    """What the candidate query found (read by the executor between ``push_down`` and ``order_predicates``)."""

    rows: tuple[Row, ...]  # every candidate, in the order the candidate query returned them
    scores: Scores = field(default_factory=dict)  # answer() call sql -> row key -> BM25 score (retrieval modes)
    indexes: Mapping[str, ChunkIndex[Any]] = field(default_factory=dict)  # answer() call sql -> its BM25 index


@dataclass(frozen=True)
class PlanContext:
    """What every pass may read besides its input: no database, no LLM."""

    mode: Mode
    cost: CostModel = COST_MODEL
    ranker: str = "static"  # the adaptive ranker's embeddings (named in the visit order shown)
    evidence: Evidence | None = None  # set for order_predicates and plan

    def read(self) -> Evidence:
        if self.evidence is None:
            raise ValueError("this pass reads the candidates' evidence: PlanContext(evidence=...)")
        return self.evidence


@dataclass(frozen=True, kw_only=True)
class SelectQuery:
    """One SELECT with LLM calls of its own, its sources materialised (:func:`select_query`)."""

    select: exp.Select  # its own LLM calls carry their keys (language.annotate_calls)
    key: exp.Expr  # the row key (rowid, or a join's rowids joined with '|')
    calls: Mapping[CallKey, LLMCall]  # its distinct calls, in order of appearance
    index_of: Mapping[CallKey, int]  # call key -> its value column c<i>
    order: exp.Order | None  # the ORDER BY over the sources (sqlparts.resolved_order)
    order_resolved: bool  # False: an ordinal points into SELECT *
    order_dep: bool  # the ORDER BY asks an LLM
    label: exp.Expr | None  # a readable column to name rows by
    display_id: exp.Expr  # what a row is called in events and rows to verify
    limit: int | None
    offset: int
    aggregated: bool  # GROUP BY, DISTINCT or an aggregate: every match is needed


@dataclass(frozen=True, kw_only=True)
class Normalised(SelectQuery):
    """``normalise``: the WHERE's condition in DNF when it asks an LLM."""

    where: exp.Expr | None  # the condition: in DNF (or too large for it), else as written
    text_where: bool  # the WHERE asks answer() / summary()
    in_dnf: bool  # False: DNF would explode, the condition is kept as written


@dataclass(frozen=True, kw_only=True)
class Split(Normalised):
    """``split_conjuncts``: the OR branches, each split into structured and text literals."""

    conjuncts: tuple[Conjunct, ...]
    dnf: str  # as shown


@dataclass(frozen=True, kw_only=True)
class Pushed(Split):
    """``push_down``: the structured part as the one query DuckDB runs, and how far the visit may stop."""

    lazy: bool  # the visit may stop once LIMIT (+ OFFSET) rows match
    lazy_reason: str
    ordered: bool  # the candidates come in the query's ORDER BY (pushed into the candidate query)
    written: exp.Expr | None  # mode B: the WHERE as written, its structured leaves numbered
    leaves: tuple[exp.Expr, ...]  # mode B: those leaves, left to right
    text_sqls: tuple[str, ...]  # the texts the calls read, as the candidates' _t<j> columns
    candidates: exp.Select  # key, label, each conjunct's structured truth, each leaf, each text

    @property
    def where_calls(self) -> list[LLMCall]:
        """The calls of the conjuncts' text literals, in order (retrieval scores each answer() question)."""
        return [self.calls[call_key(n)] for c in self.conjuncts for lit in c.text for n in calls_in(lit)]


@dataclass(frozen=True, kw_only=True)
class Ordered(Pushed):
    """``order_predicates``: per conjunct, its answer() predicates in cost x selectivity order."""

    conjunct_plans: tuple[ConjunctPlan, ...]
    orders: tuple[tuple[int, ...], ...]  # per conjunct: its text literals' positions, in the order asked
    estimates: tuple[tuple[PredicateEstimate, ...], ...]  # per conjunct: the cost model's prior, as written


@dataclass(frozen=True, kw_only=True)
class SelectPlan(Ordered):
    """``plan``: what the executor runs, and the plan shown."""

    shown: Plan
    evidence: Evidence  # what the plan was made from (the adaptive loop learns on the same indexes)
    visit: tuple[Row, ...]  # the candidates to decide, in order, each with its retrieval score
    capped: bool  # the cap of mode F dropped candidates: the results are approximate
    adaptive: bool  # the visit re-ranks as answers arrive (modes E, F)
    select_list_calls: tuple[LLMCall, ...]  # calls outside the WHERE (SELECT list, ORDER BY, ...)
    first_calls: tuple[LLMCall, ...]  # ... asked of every match
    rest_calls: tuple[LLMCall, ...]  # ... asked of the output rows only (after the ORDER BY and LIMIT)
    need_all: bool  # every SELECT-list call of every match (aggregation, mode A)

    @property
    def needed(self) -> int:
        """Matches the visit needs before it may stop (LIMIT + OFFSET)."""
        return (self.limit or 0) + self.offset


V = TypeVar("V", bound=SelectQuery)


def _grow(value: SelectQuery, cls: type[V], **new: Any) -> V:
    """``value``'s fields and ``new`` ones, as the next pass's type."""
    return cls(**{f.name: getattr(value, f.name) for f in fields(value)}, **new)


# --- the input of the first pass ----------------------------------------------------------------------------


def select_query(
    select: exp.Select,
    *,
    order: tuple[exp.Order | None, bool] = (None, True),
    label: exp.Expr | None = None,
    display_id: exp.Expr | None = None,
) -> SelectQuery:
    """The first pass's input: ``select`` (copied, its LLM calls annotated with their keys) and what its row
    loop needs to know of it.  ``order``: the ORDER BY resolved over the sources, and whether it could be
    (``sqlparts.resolved_order``); ``label`` and ``display_id``: how rows are named (``identity.RowNames``);
    the three read the schema, so the executor finds them.  Refuses a SELECT whose rows have no key."""
    key = row_key(select)
    select = annotate_calls(select)
    calls: dict[CallKey, LLMCall] = {}
    for n in calls_in(select):
        calls.setdefault(call_key(n), as_call(n))
    resolved, order_resolved = order
    return SelectQuery(
        select=select,
        key=key,
        calls=calls,
        index_of={k: i for i, k in enumerate(calls)},
        order=resolved,
        order_resolved=order_resolved,
        order_dep=resolved is not None and bool(calls_in(resolved)),
        label=label,
        display_id=display_id if display_id is not None else key.copy(),
        limit=int_arg(select.args.get("limit")),
        offset=int_arg(select.args.get("offset")) or 0,
        aggregated=(
            bool(select.args.get("group"))
            or bool(select.args.get("distinct"))
            or any(isinstance(e.unalias(), exp.AggFunc) or e.find(exp.AggFunc) is not None for e in select.expressions)
        ),
    )


# --- the passes -----------------------------------------------------------------------------------------


def normalise(query: SelectQuery, ctx: PlanContext) -> Normalised:
    """The WHERE's condition in DNF when it asks an LLM (a new tree; kept as written when DNF would explode)."""
    where = query.select.args.get("where")
    condition = where.this if where is not None else None
    if condition is None or not calls_in(condition):
        return _grow(query, Normalised, where=condition, text_where=False, in_dnf=True)
    normal, in_dnf = normal_form(condition)
    return _grow(query, Normalised, where=normal, text_where=True, in_dnf=in_dnf)


def split_conjuncts(normalised: Normalised, ctx: PlanContext) -> Split:
    """One conjunct per OR branch, its literals split into structured ones and those that ask an LLM."""
    if not normalised.text_where:
        shown = pretty(normalised.where) if normalised.where is not None else ""
        return _grow(normalised, Split, conjuncts=(), dnf=shown)
    assert normalised.where is not None
    conjuncts = split(normalised.where, normalised.in_dnf)
    return _grow(normalised, Split, conjuncts=tuple(conjuncts), dnf=dnf_text(conjuncts))


def push_down(s: Split, ctx: PlanContext) -> Pushed:
    """The structured part pushed into DuckDB: one query reads every candidate row with its key, its label,
    each conjunct's structured truth (mode B: each structured leaf of the WHERE as written) and the texts the
    calls read.  In the modes that run structured conditions first it keeps only rows some conjunct's
    structured part does not rule out; when the visit may stop early in the query's ORDER BY, it sorts."""
    mode = ctx.mode
    lazy, reason = laziness(
        mode, text_where=s.text_where, limit_n=s.limit, order=s.order, order_dep=s.order_dep, aggregated=s.aggregated
    )
    if lazy and not s.order_resolved:
        lazy, reason = False, "ORDER BY names a column of SELECT * by its number: every match is read first"
    ordered = lazy and s.order is not None
    written: exp.Expr | None = None
    leaves: list[exp.Expr] = []
    where = s.select.args.get("where")
    if mode.as_written and s.text_where:
        assert where is not None  # text_where: the WHERE asks an LLM
        written, leaves = number_leaves(where.this)
    texts: dict[str, exp.Expr] = {}
    for call in s.calls.values():
        texts.setdefault(call.text_sql, call.text)
    text_sqls = tuple(sorted(texts))

    q = exp.select(exp.alias_(s.key.copy(), "_k"), exp.alias_(s.display_id, "_d"))
    if s.label is not None:
        q = q.select(exp.alias_(s.label, "_label"))
    for i, c in enumerate(s.conjuncts):
        q = q.select(exp.alias_(exp.paren(c.structured_sql()), f"_s{i}"))
    for j, leaf in enumerate(leaves):
        q = q.select(exp.alias_(exp.paren(leaf.copy()), f"_w{j}"))
    for j, t in enumerate(text_sqls):
        q = q.select(exp.alias_(texts[t], f"_t{j}"))
    over_sources(q, s.select)
    if not s.text_where:
        if where is not None:
            q.set("where", where.copy())
    elif mode.structured_first and s.conjuncts:
        structured_any = exp.or_(*[exp.paren(c.structured_sql()) for c in s.conjuncts])
        q = q.where(exp.Not(this=exp.Is(this=exp.paren(structured_any), expression=exp.false())))
    if ordered:
        assert s.order is not None
        in_order = s.order.copy()
        in_order.append("expressions", exp.Ordered(this=s.key.copy()))
        q.set("order", in_order)
    else:
        q = q.order_by(exp.Ordered(this=s.key.copy()))
    return _grow(
        s,
        Pushed,
        lazy=lazy,
        lazy_reason=reason,
        ordered=ordered,
        written=written,
        leaves=tuple(leaves),
        text_sqls=text_sqls,
        candidates=q,
    )


def order_predicates(p: Pushed, ctx: PlanContext) -> Ordered:
    """Per conjunct, its answer() predicates by cost x selectivity (the cost model's prior, from the candidates'
    retrieval scores); as written where the mode does not order them.  Mode B orders nothing: a row-at-a-time
    engine reads the WHERE as written, left to right."""
    if ctx.mode.as_written and p.text_where:
        return _grow(p, Ordered, conjunct_plans=(), orders=tuple(() for _ in p.conjuncts), estimates=())
    evidence = ctx.read()
    cost, mode = ctx.cost, ctx.mode
    plans, orders, estimates = [], [], []
    for i, c in enumerate(p.conjuncts):
        cands = [r for r in evidence.rows if r.flags[i] is not False] if mode.structured_first else evidence.rows
        prior = cost.prior(c, [r.key for r in cands], evidence.scores)
        order = cost.order(prior, by_rank=mode.order_predicates)
        ranked = [prior[k] for k in order]
        plans.append(ConjunctPlan(i, pretty(c.structured_sql()), len(cands), tuple(ranked), cost.expected_cost(ranked)))
        orders.append(tuple(order))
        estimates.append(tuple(prior))
    return _grow(p, Ordered, conjunct_plans=tuple(plans), orders=tuple(orders), estimates=tuple(estimates))


def plan(o: Ordered, ctx: PlanContext) -> SelectPlan:
    """The visit (which candidates, in which order, each with its retrieval score; the cap of mode F), which
    calls outside the WHERE run for which rows, and the plan shown."""
    mode, evidence = ctx.mode, ctx.read()
    written = mode.as_written and o.text_where
    adaptive = o.text_where and not written and mode.retrieval and mode.feedback and mode.short_circuit
    visit, visit_text, capped = visit_order(
        mode, evidence.rows, evidence.scores, o.conjuncts, structured_order=o.ordered, order=o.order
    )
    if adaptive:
        if o.lazy and not o.ordered:
            visit_text += (
                "; re-ranked as answers arrive: rows most likely to match every condition first "
                "(like the sentences the 'Yes' answers quoted, unlike the 'No' ones"
                + (", by a sentence model's sense of them" if ctx.ranker == "sentence" else "")
                + ")"
            )
        visit_text += "; each row's conditions asked in the order its evidence suggests"
    where = o.select.args.get("where")
    select_nodes = [n for n in calls_in(o.select) if not (where is not None and within(n, where))]
    select_list = tuple(o.calls[k] for k in o.calls if any(call_key(n) == k for n in select_nodes))
    order_calls = [
        o.calls[k] for k in o.calls if o.order is not None and any(call_key(n) == k for n in calls_in(o.order))
    ]
    need_all = o.aggregated or mode.summaries_for_all_matches
    shown = Plan(
        mode=mode,
        dnf=o.dnf,
        conjuncts=o.conjunct_plans,
        visit_order=visit_text if o.text_where else "",
        lazy=o.lazy,
        lazy_reason=o.lazy_reason,
        stop_after=(o.limit + o.offset) if o.lazy and o.limit is not None else None,
        cap=mode.cap if o.text_where and mode.cap is not None else None,
        select_calls=tuple(sorted({as_call(n).sql() for n in select_nodes})),
        select_calls_for=select_calls_scope(mode, aggregated=o.aggregated, order_dep=o.order_dep),
        notes=(
            (
                "the WHERE as written, left to right on each row: AND stops at the first false condition, OR at "
                "the first true one; a condition written before the structured ones is asked of every row",
            )
            if written
            else ()
            if o.in_dnf
            else (
                "the WHERE is too large for DNF: its top-level structured "
                "conditions run first in DuckDB, the rest row by row",
            )
        ),
    )
    return _grow(
        o,
        SelectPlan,
        shown=shown,
        evidence=evidence,
        visit=tuple(visit),
        capped=capped,
        adaptive=adaptive,
        select_list_calls=select_list,
        first_calls=tuple(select_list if need_all else order_calls),
        rest_calls=() if need_all else tuple(c for c in select_list if c not in order_calls),
        need_all=need_all,
    )


class Passes(NamedTuple):
    """The planner's passes, in the order they run."""

    normalise: Callable[[SelectQuery, PlanContext], Normalised]
    split_conjuncts: Callable[[Normalised, PlanContext], Split]
    push_down: Callable[[Split, PlanContext], Pushed]
    order_predicates: Callable[[Pushed, PlanContext], Ordered]
    plan: Callable[[Ordered, PlanContext], SelectPlan]


PASSES = Passes(normalise, split_conjuncts, push_down, order_predicates, plan)


def plan_select(
    query: SelectQuery, ctx: PlanContext, read: Callable[[Pushed], Evidence], passes: Passes = PASSES
) -> SelectPlan:
    """The passes in order.  ``read``: the executor's reading of what the pushed-down query finds (DuckDB for
    the candidates, BM25 for their scores), handed to the last two passes in their context."""
    pushed = passes.push_down(passes.split_conjuncts(passes.normalise(query, ctx), ctx), ctx)
    with_evidence = replace(ctx, evidence=read(pushed))
    return passes.plan(passes.order_predicates(pushed, with_evidence), with_evidence)


# --- what the passes decide, one function each ------------------------------------------------------------


def laziness(
    mode: Mode,
    *,
    text_where: bool,
    limit_n: int | None,
    order: exp.Expr | None,
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


def visit_order(
    mode: Mode,
    rows: Sequence[Row],
    scores: Scores,
    conjuncts: Sequence[Conjunct],
    *,
    structured_order: bool,
    order: exp.Order | None,
) -> tuple[list[Row], str, bool]:
    """The candidates to visit, in order, each a copy of its row with its retrieval score (the best over the
    conjuncts it may match of the sum over their answer() conditions); how the order is described; whether
    the cap dropped any (the results are then approximate)."""
    cands = [r for r in rows if any(f is not False for f in r.flags)] if mode.structured_first else list(rows)
    per_conjunct = [
        [scores.get(as_call(n).sql(), {}) for lit in c.text for n in calls_in(lit)] for c in conjuncts
    ]  # each conjunct's calls' scores, found once
    scored = []
    for r in cands:
        best = 0.0
        for i, call_scores in enumerate(per_conjunct):
            if r.flags[i] is False and mode.structured_first:
                continue
            best = max(best, sum(s.get(r.key, 0.0) for s in call_scores))
        scored.append(replace(r, score=best))
    cands = scored
    capped_some = False
    if mode.cap is not None:
        # a row an OR branch without answer() already decides needs no call: the cap never drops it
        free = {
            j for j, r in enumerate(cands) if any(not c.text and r.flags[i] is True for i, c in enumerate(conjuncts))
        }
        costly = [j for j in range(len(cands)) if j not in free]
        capped = sorted(costly, key=lambda j: (-cands[j].score, cands[j].key))[: mode.cap]
        capped_some = len(capped) < len(costly)
        keep = set(capped) | free
        cands = [r for j, r in enumerate(cands) if j in keep]
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
