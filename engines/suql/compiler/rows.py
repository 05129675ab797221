"""The candidate rows of a SELECT, the truth of its WHERE on one row, and the row loop with its pool."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import replace
from typing import Any

from sqlglot import exp

from engines.errors import Cancelled, EngineError
from engines.sql.sandbox import QueryResult
from engines.suql.compiler.asker import BudgetExhausted, Halted
from engines.suql.compiler.context import PlanBuilt, Row, RowDecided, RunContext, SelectContext
from engines.suql.compiler.cost import PredicateEstimate
from engines.suql.compiler.kleene import NO_FAST, Truth, dnf_truth, fast_truth, predicate_truth, written_truth
from engines.suql.compiler.sqlparts import literal, over_sources, parse_duck
from engines.suql.language import LLMCall, SuqlError, as_call, calls_in, is_llm_call, pretty
from engines.suql.plan import Conjunct, ConjunctPlan, Plan


def run_all(ctx: RunContext, q: exp.Expression, counted: Callable[[], tuple[str, str]] | None = None) -> QueryResult:
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


def _count(ctx: RunContext, q: exp.Expression) -> int | None:
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


def candidates(
    ctx: RunContext,
    select: exp.Select,
    key: exp.Expression,
    conjuncts: Sequence[Conjunct],
    *,
    text_where: bool,
    text_sqls: Sequence[str],
    label: exp.Expression | None,
    visit_order: exp.Order | None,
    leaves: Sequence[exp.Expression],
) -> list[Row]:
    """One query: every candidate row with its key, label, each conjunct's structured truth, each
    structured leaf of the written WHERE (mode B) and the texts the calls read."""
    q = exp.select(exp.alias_(key.copy(), "_k"), exp.alias_(ctx.names.display_id(select), "_d"))
    if label is not None:
        q = q.select(exp.alias_(label, "_label"))
    for i, c in enumerate(conjuncts):
        q = q.select(exp.alias_(exp.paren(c.structured_sql()), f"_s{i}"))
    for j, leaf in enumerate(leaves):
        q = q.select(exp.alias_(exp.paren(leaf.copy()), f"_w{j}"))
    for j, t in enumerate(text_sqls):
        q = q.select(exp.alias_(parse_duck(t), f"_t{j}"))
    over_sources(q, select)
    where = select.args.get("where")
    if not text_where:
        if where is not None:
            q.set("where", where.copy())
    elif ctx.mode.structured_first and conjuncts:
        structured_any = exp.or_(*[exp.paren(c.structured_sql()) for c in conjuncts])
        q = q.where(exp.Not(this=exp.Is(this=exp.paren(structured_any), expression=exp.false())))
    if visit_order is not None:
        ordered = visit_order.copy()
        ordered.append("expressions", exp.Ordered(this=key.copy()))
        q.set("order", ordered)
    else:
        q = q.order_by(exp.Ordered(this=key.copy()))
    result = run_all(ctx, q, lambda: _counted(ctx, select, conjuncts, text_where=text_where))
    rows = []
    cols = result.columns
    n_conj = len(conjuncts)
    for raw in result.rows:
        rec = dict(zip(cols, raw))
        rows.append(
            Row(
                key=rec["_k"],
                label=f"#{rec['_d']} {rec['_label']}" if label is not None else f"#{rec['_d']}",
                flags=[rec[f"_s{i}"] for i in range(n_conj)],
                texts={t: rec[f"_t{j}"] for j, t in enumerate(text_sqls)},
                leaves=[rec[f"_w{j}"] for j in range(len(leaves))],
            )
        )
    return rows


class RowEvaluator:
    """The WHERE of one SELECT on one row, under Kleene logic, asking the LLM only for what decides it.

    ``orders``: per conjunct, the order its text predicates are asked in (the row loop re-orders it
    after a sample).  ``written``: mode B's WHERE as written, with its structured leaves' positions.
    """

    def __init__(
        self,
        ctx: RunContext,
        sel: SelectContext,
        conjuncts: Sequence[Conjunct],
        orders: list[list[int]],
        written: tuple[exp.Expression, dict[int, int]] | None,
    ) -> None:
        self.ctx = ctx
        self.sel = sel
        self.conjuncts = conjuncts
        self.orders = orders
        self.written = written
        self._calls_of: dict[int, tuple[exp.Expression, list[LLMCall]]] = {}
        self._call_of: dict[int, tuple[exp.Expression, LLMCall]] = {}

    def truth(
        self,
        row: Row,
        observe: dict[tuple[int, int], list[Truth]] | None = None,
        *,
        orders: Sequence[Sequence[int]] | None = None,
        defer: bool = False,
    ) -> Truth:
        """With ``observe``, every predicate of every applicable conjunct is evaluated and its value
        recorded under (conjunct, written position).  ``orders``: this row's own predicate order (the
        adaptive loop's); ``defer``: stop a conjunct once it cannot be True (``kleene.DEFERRED``)."""
        mode = self.ctx.mode
        leaf = self._leaf(row)

        def predicate(pred: exp.Expression) -> Truth:
            return predicate_truth(pred, leaf, structured_first=mode.structured_first, short_circuit=mode.short_circuit)

        if mode.as_written:
            assert self.written is not None
            tree, leaf_index = self.written
            known = {
                node_id: None if row.leaves[j] is None else bool(row.leaves[j]) for node_id, j in leaf_index.items()
            }
            return written_truth(tree, known, predicate)
        if not mode.short_circuit:  # naive: every answer() of the WHERE, on every row
            for c in self.conjuncts:
                for lit in c.text:
                    for call in self._calls(lit):
                        self.ctx.asker.value(row, call, self.sel.values)
        return dnf_truth(
            row.flags,
            self.conjuncts,
            self.orders if orders is None else orders,
            predicate,
            short_circuit=mode.short_circuit,
            observe=observe,
            defer=defer and mode.short_circuit,
        )

    def _calls(self, node: exp.Expression) -> list[LLMCall]:
        """The calls of a leaf, found once per run (the conjuncts' trees live as long as the run)."""
        got = self._calls_of.get(id(node))
        if got is None or got[0] is not node:
            got = self._calls_of[id(node)] = (node, [as_call(n) for n in calls_in(node)])
        return got[1]

    def _call(self, node: exp.Expression) -> LLMCall:
        got = self._call_of.get(id(node))
        if got is None or got[0] is not node:
            got = self._call_of[id(node)] = (node, as_call(node))
        return got[1]

    def _leaf(self, row: Row) -> Callable[[exp.Expression], Truth]:
        values = self.sel.values

        def leaf(node: exp.Expression) -> Truth:
            for call in self._calls(node):
                self.ctx.asker.value(row, call, values)
            fast = fast_truth(node, lambda n: values[(row.key, self._call(n).key)])
            if fast is not NO_FAST:
                return fast
            return self._database_truth(row, node)

        return leaf

    def _database_truth(self, row: Row, pred: exp.Expression) -> Truth:
        """DuckDB evaluates ``pred`` on the row, its LLM calls replaced by their values."""
        values = self.sel.values

        def lit(node: exp.Expression) -> exp.Expression:
            if is_llm_call(node):
                v = values[(row.key, as_call(node).key)]
                return exp.null() if v is None else exp.Literal.string(str(v))
            return node

        q = over_sources(exp.select(exp.alias_(exp.paren(pred.copy().transform(lit)), "_v")), self.sel.select)
        q = q.where(exp.EQ(this=self.sel.key.copy(), expression=literal(row.key)))
        rows = self.ctx.sandbox.run_tree(q).rows
        if not rows or rows[0][0] is None:
            return None
        return bool(rows[0][0])


class RowLoop:
    """Decides rows in visit order on a bounded pool; stops early when lazy.

    When a conjunct has several answer() predicates, the first rows are a sample: every predicate is
    evaluated on them, and what they say refines the order for the rest (a new plan is emitted).  The
    sample runs on the pool like the rest; the rows after it wait only for its answers (their order
    depends on them).

    Rows are decided, reported and counted in visit order whatever order their answers arrive in, so the
    result is the sequential one.  A row waiting for its next answer holds no call slot (the asker
    bounds the calls in flight to the pool): past a LIMIT the rows in progress are at most the pool, so
    at most pool - 1 speculative calls go unused; without one twice as many rows are in progress, and
    the slots stay busy while a row's conditions wait for each other.
    """

    def __init__(self, ctx: RunContext, evaluator: RowEvaluator, estimates: list[list[PredicateEstimate]]) -> None:
        self.ctx = ctx
        self.evaluator = evaluator
        self.estimates = estimates

    def decide(self, visit: Sequence[Row], *, lazy: bool, needed: int, plan: Plan) -> list[tuple[Any, Truth]]:
        ctx = self.ctx
        decided: list[tuple[Any, Truth]] = []
        progress = {"matched": 0, "stop": False}
        conjuncts = self.evaluator.conjuncts
        sample = ctx.cost.sample_rows if ctx.mode.order_predicates and any(len(c.text) > 1 for c in conjuncts) else 0
        if sample:
            observed: dict[tuple[int, int], list[Truth]] = {}
            if not self._run(visit[:sample], decided, progress, lazy=lazy, needed=needed, observed=observed):
                return decided  # the budget ran out: this row and the rest stay undecided
            if progress["stop"]:
                return decided
            new_plan = self._reestimate(plan, observed, min(sample, len(visit)))
            if ctx.state.plan is plan:
                ctx.state.plan = new_plan
            ctx.emit(PlanBuilt(new_plan))
            visit = visit[sample:]
        self._run(visit, decided, progress, lazy=lazy, needed=needed)
        return decided

    def _run(
        self,
        visit: Sequence[Row],
        decided: list[tuple[Any, Truth]],
        progress: dict[str, Any],
        *,
        lazy: bool,
        needed: int,
        observed: dict[tuple[int, int], list[Truth]] | None = None,
    ) -> bool:
        """Decide ``visit`` in order (on the pool when there is one); False when the budget ran out."""
        ctx = self.ctx

        def one(row: Row) -> tuple[Truth, dict[tuple[int, int], list[Truth]] | None]:
            mine: dict[tuple[int, int], list[Truth]] | None = {} if observed is not None else None
            return self.evaluator.truth(row, observe=mine), mine

        def take(row: Row, truth: Truth, mine: dict[tuple[int, int], list[Truth]] | None) -> None:
            if observed is not None and mine is not None:
                for k, ts in mine.items():
                    observed.setdefault(k, []).extend(ts)
            decided.append((row.key, truth))
            self._report(row, truth)
            progress["matched"] += truth is True
            if lazy and progress["matched"] >= needed:
                progress["stop"] = True

        if ctx.pool == 1:
            for row in visit:
                ctx.check_cancel()
                try:
                    truth, mine = one(row)
                except BudgetExhausted:
                    return False
                take(row, truth, mine)
                if progress["stop"]:
                    break
            return True
        window = ctx.pool if lazy else 2 * ctx.pool
        ok = True
        with ThreadPoolExecutor(max_workers=window, thread_name_prefix="suql") as ex:
            pending: dict[int, Future] = {}
            next_submit = 0
            try:
                for n, row in enumerate(visit):
                    while next_submit < len(visit) and len(pending) < window:
                        ctx.check_cancel()
                        pending[next_submit] = ex.submit(one, visit[next_submit])
                        next_submit += 1
                    fut = pending.pop(n)
                    try:
                        truth, mine = fut.result()
                    except BudgetExhausted:  # rows from here on stay undecided
                        ok = False
                        break
                    take(row, truth, mine)
                    if progress["stop"]:
                        ctx.asker.halt.set()  # the rows still in flight start no further call
                        break
            finally:
                wait(list(pending.values()))  # calls already started finish; their rows are not used
                ctx.asker.halt.clear()
                for f in pending.values():
                    e = f.exception()
                    if e is not None and not isinstance(e, (Cancelled, BudgetExhausted, Halted)):
                        raise e
        return ok

    def _report(self, row: Row, truth: Truth) -> None:
        self.ctx.state.rows_examined += 1
        self.ctx.emit(RowDecided(row.label, {True: "match", False: "no", None: "to verify"}[truth]))

    def _reestimate(self, plan: Plan, observed: dict[tuple[int, int], list[Truth]], sample: int) -> Plan:
        """Blend each predicate's prior with what the sample showed; re-order; the new plan."""
        cost, by_rank = self.ctx.cost, self.ctx.mode.order_predicates
        orders = self.evaluator.orders
        conjunct_plans = list(plan.conjuncts)
        for i, estimates in enumerate(self.estimates):
            if len(estimates) < 2:
                continue
            updated = cost.blend(estimates, {k: observed.get((i, k), []) for k in range(len(estimates))})
            self.estimates[i] = updated
            orders[i] = cost.order(updated, by_rank=by_rank)
            ordered = [updated[k] for k in orders[i]]
            old = conjunct_plans[i]
            conjunct_plans[i] = ConjunctPlan(
                old.index, old.structured, old.candidates, tuple(ordered), cost.expected_cost(ordered)
            )
        note = f"predicate order re-estimated after a sample of {sample} rows (evaluated without short-circuit)"
        return replace(plan, conjuncts=tuple(conjunct_plans), notes=tuple(plan.notes) + (note,))


def rank(
    ctx: RunContext, conjuncts: Sequence[Conjunct], rows: Sequence[Row], scores: Any
) -> tuple[list[ConjunctPlan], list[list[int]], list[list[PredicateEstimate]]]:
    """Per conjunct: its plan, the order of its text predicates, their estimates (the cost model's prior)."""
    plans, orders, all_estimates = [], [], []
    for i, c in enumerate(conjuncts):
        cands = [r for r in rows if r.flags[i] is not False] if ctx.mode.structured_first else rows
        estimates = ctx.cost.prior(c, [r.key for r in cands], scores)
        order = ctx.cost.order(estimates, by_rank=ctx.mode.order_predicates)
        ordered = [estimates[k] for k in order]
        plans.append(
            ConjunctPlan(i, pretty(c.structured_sql()), len(cands), tuple(ordered), ctx.cost.expected_cost(ordered))
        )
        orders.append(order)
        all_estimates.append(estimates)
    return plans, orders, all_estimates
