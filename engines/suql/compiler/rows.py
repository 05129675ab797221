"""The truth of a SELECT's WHERE on one row, and the row loop with its pool (the executor's static visit)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import replace
from typing import Any, Literal, overload

from sqlglot import exp

from engines.errors import Cancelled
from engines.suql.compiler.asker import BudgetExhausted, Halted
from engines.suql.compiler.context import RunContext, SelectContext
from engines.suql.compiler.cost import PredicateEstimate
from engines.suql.compiler.kleene import (
    DEFERRED,
    NO_FAST,
    Deferred,
    Truth,
    dnf_truth,
    fast_truth,
    predicate_truth,
    written_truth,
)
from engines.suql.compiler.records import PlanBuilt, Row, RowDecided
from engines.suql.compiler.sqlparts import literal, over_sources
from engines.suql.dnf import Conjunct
from engines.suql.language import LLMCall, call_key, calls_in, is_llm_call
from engines.suql.plan import ConjunctPlan, Plan


class RowEvaluator:
    """The WHERE of one SELECT on one row, under Kleene logic, asking the LLM only for what decides it.

    ``orders``: per conjunct, the order its text predicates are asked in (the row loop re-orders it
    after a sample).  ``written``: mode B's WHERE as written, its structured leaves numbered
    (``kleene.number_leaves``).  The calls a condition asks are those of the SELECT (``sel.calls``),
    found by the keys its call nodes carry (``language.call_key``).
    """

    def __init__(
        self,
        ctx: RunContext,
        sel: SelectContext,
        conjuncts: Sequence[Conjunct],
        orders: list[list[int]],
        written: exp.Expr | None,
    ) -> None:
        self.ctx = ctx
        self.sel = sel
        self.conjuncts = conjuncts
        self.orders = orders
        self.written = written

    @overload
    def truth(
        self,
        row: Row,
        observe: dict[tuple[int, int], list[Truth]] | None = None,
        *,
        orders: Sequence[Sequence[int]] | None = None,
        defer: Literal[False] = False,
    ) -> Truth: ...

    @overload
    def truth(
        self,
        row: Row,
        observe: dict[tuple[int, int], list[Truth]] | None = None,
        *,
        orders: Sequence[Sequence[int]] | None = None,
        defer: bool,
    ) -> Truth | Deferred: ...

    def truth(
        self,
        row: Row,
        observe: dict[tuple[int, int], list[Truth]] | None = None,
        *,
        orders: Sequence[Sequence[int]] | None = None,
        defer: bool = False,
    ) -> Truth | Deferred:
        """With ``observe``, every predicate of every applicable conjunct is evaluated and its value
        recorded under (conjunct, written position).  ``orders``: this row's own predicate order (the
        adaptive loop's); ``defer``: stop a conjunct once it cannot be True (``kleene.DEFERRED``)."""
        mode = self.ctx.mode
        leaf = self._leaf(row)

        def predicate(pred: exp.Expr) -> Truth:
            return predicate_truth(pred, leaf, structured_first=mode.structured_first, short_circuit=mode.short_circuit)

        if mode.as_written:
            assert self.written is not None
            known = [None if v is None else bool(v) for v in row.leaves]
            return written_truth(self.written, known, predicate)
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
            verifying=self.ctx.asker.set_verifying,
        )

    def _calls(self, node: exp.Expr) -> list[LLMCall]:
        """The calls a condition asks, in order."""
        return [self.sel.calls[call_key(n)] for n in calls_in(node)]

    def _leaf(self, row: Row) -> Callable[[exp.Expr], Truth]:
        values = self.sel.values

        def leaf(node: exp.Expr) -> Truth:
            for call in self._calls(node):
                self.ctx.asker.value(row, call, values)
            fast = fast_truth(node, lambda n: values[(row.key, call_key(n))])
            if fast is not NO_FAST:
                return fast
            return self._database_truth(row, node)

        return leaf

    def _database_truth(self, row: Row, pred: exp.Expr) -> Truth:
        """DuckDB evaluates ``pred`` on the row, its LLM calls replaced by their values."""
        values = self.sel.values

        def lit(node: exp.Expr) -> exp.Expr:
            if is_llm_call(node):
                v = values[(row.key, call_key(node))]
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
        self.defer: Callable[[Row], bool] | None = None

    def decide(
        self,
        visit: Sequence[Row],
        *,
        lazy: bool,
        needed: int,
        plan: Plan,
        defer: Callable[[Row], bool] | None = None,
    ) -> list[tuple[Any, Truth | Deferred]]:
        """Each visited row's truth; ``defer``: the rows (after the sample) that stop at their first Unknown
        condition, :data:`~engines.suql.compiler.kleene.DEFERRED` when they can no longer match."""
        ctx = self.ctx
        self.defer = defer
        decided: list[tuple[Any, Truth | Deferred]] = []
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
        decided: list[tuple[Any, Truth | Deferred]],
        progress: dict[str, Any],
        *,
        lazy: bool,
        needed: int,
        observed: dict[tuple[int, int], list[Truth]] | None = None,
    ) -> bool:
        """Decide ``visit`` in order (on the pool when there is one); False when the budget ran out."""
        ctx = self.ctx

        def one(row: Row) -> tuple[Truth | Deferred, dict[tuple[int, int], list[Truth]] | None]:
            mine: dict[tuple[int, int], list[Truth]] | None = {} if observed is not None else None
            lazily = mine is None and self.defer is not None and self.defer(row)  # the sample is asked in full
            return self.evaluator.truth(row, observe=mine, defer=lazily), mine

        def take(row: Row, truth: Truth | Deferred, mine: dict[tuple[int, int], list[Truth]] | None) -> None:
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
            pending: dict[int, Future[tuple[Truth | Deferred, dict[tuple[int, int], list[Truth]] | None]]] = {}
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

    def _report(self, row: Row, truth: Truth | Deferred) -> None:
        self.ctx.state.rows_examined += 1
        shown = "to verify" if truth is DEFERRED else {True: "match", False: "no", None: "to verify"}[truth]
        self.ctx.emit(RowDecided(row.label, shown))

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
