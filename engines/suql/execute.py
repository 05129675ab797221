"""The SUQL executor: the compiler of lecture 7 §3 and the six execution modes.

For a SELECT whose own clauses hold ``answer()`` / ``summary()``:

1. subqueries and CTEs with LLM calls are compiled first, innermost first, into scratch tables;
2. the WHERE is normalised to DNF; per conjunct the structured predicates run in DuckDB
   (one query marks, for every candidate row, which conjuncts' structured parts hold);
3. candidates are visited in the query's ORDER BY (when it is structured) or by retrieval
   score, and each row's answer() predicates are evaluated in cost x selectivity order with
   short-circuit, under Kleene logic (Unknown is SQL NULL);
4. with LIMIT and an order that does not depend on answer(), evaluation stops once enough
   rows match;
5. SELECT-list calls and summary() run only for the output rows;
6. every LLM value lands in a scratch table, and DuckDB runs the final projection, ordering,
   LIMIT/OFFSET and aggregation over it.

Rows whose WHERE is Unknown are returned apart, "to verify".
"""
from __future__ import annotations

import threading
import time
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

from sqlglot import exp

from engines.errors import Cancelled, EngineError
from engines.events import CallFinished, Emit, Event, ignore
from engines.llm.client import LLM
from engines.retrieval.bm25 import ChunkIndex, IndexCache, as_text
from engines.sql.readback import readback as read_back
from engines.sql.sandbox import QueryResult, Sandbox, SqlFailed, to_jsonable
from engines.suql import language
from engines.suql.language import LLMCall, SuqlError, as_call, calls_in, has_llm_calls, is_llm_call, pretty
from engines.suql.plan import (
    ConjunctPlan,
    Conjunct,
    Mode,
    Plan,
    PredicateEstimate,
    dnf_text,
    expected_cost,
    mode_named,
    passes_if_yes,
    predicate_cost,
    to_dnf,
    DEFAULT_MODE,
)

# --- events -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlanBuilt(Event):
    plan: Plan


@dataclass(frozen=True)
class RowDecided(Event):
    row_key: str
    truth: str  # "match" | "no" | "to verify"


@dataclass(frozen=True)
class QueryFinished(Event):
    result: Any = field(repr=False)
    readback: str = ""
    stats: Any = None


# --- results ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stats:
    answer_calls: int
    summary_calls: int
    cached_calls: int
    rows_examined: int
    wall_s: float

    def to_json(self) -> dict[str, Any]:
        return {"answer_calls": self.answer_calls, "summary_calls": self.summary_calls, "cached_calls": self.cached_calls,
                "rows_examined": self.rows_examined, "wall_s": round(self.wall_s, 4)}


@dataclass(frozen=True)
class SuqlResult:
    query: str
    mode: str
    dnf: str
    plan: Plan
    readback: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    to_verify: tuple[dict[str, Any], ...]
    approximate: bool
    truncated: bool
    stats: Stats
    budget_exhausted: bool = False  # the per-query budget of LLM calls ran out: the rows are partial
    message: str = ""


    def records(self) -> list[dict[str, Any]]:
        return QueryResult("", self.columns, self.rows, False, 0.0).records()

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "dnf": self.dnf,
            "plan": self.plan.to_json(),
            "readback": self.readback,
            "rows": self.records(),
            "to_verify": [{k: to_jsonable(v) for k, v in r.items()} for r in self.to_verify],
            "approximate": self.approximate,
            "truncated": self.truncated,
            "stats": self.stats.to_json(),
            "budget_exhausted": self.budget_exhausted,
            "message": self.message,
        }


# --- the engine ---------------------------------------------------------------------------------


class SuqlEngine:
    """Runs SUQL on the tables of one sandbox with one LLM."""

    def __init__(self, sandbox: Sandbox, llm: LLM, *, pool: int = 1, cap: int = 20, call_budget: int = 2000) -> None:
        if pool < 1:
            raise ValueError("pool must be at least 1")
        if call_budget < 1:
            raise ValueError("call_budget must be at least 1")
        self.call_budget = call_budget
        self.sandbox = sandbox
        self.llm = llm
        self.pool = pool
        self.cap = cap
        self.indexes = IndexCache()
        self._rowid: dict[str, bool] = {}
        self._id_columns: dict[tuple[str, str, str], str | None] = {}

    def compile(self, sql: str) -> tuple[exp.Expression, str]:
        """Parse, check and normalise: the tree and its WHERE in DNF (no database work)."""
        tree = language.parse(sql)
        select = tree if isinstance(tree, exp.Select) else tree.find(exp.Select)
        where = select.args.get("where") if select is not None else None
        if where is None or not calls_in(where.this):
            return tree, pretty(where.this) if where is not None else ""
        conjuncts, _ = to_dnf(where.this)
        return tree, dnf_text(conjuncts)

    def run(
        self,
        sql: str,
        *,
        mode: str | Mode = DEFAULT_MODE,
        emit: Emit = ignore,
        cancel: threading.Event | None = None,
        order_predicates: bool | None = None,
    ) -> SuqlResult:
        m = mode if isinstance(mode, Mode) else mode_named(mode, cap=self.cap, order_predicates=order_predicates)
        started = time.perf_counter()
        tree = language.parse(sql)
        run = _Run(self, self.llm, m, emit, cancel)
        llm = run.llm
        before = dict(llm.counter.counts), llm.counter.cached
        with ExitStack() as stack:
            run.stack = stack
            try:
                run.precheck(tree)
                if m.udf:
                    final = run.udf_rewrite(tree)
                else:
                    final = run.compile_statement(tree, top=True)
                result = self.sandbox.run_tree(final)
                if not m.udf:
                    run.derived_to_verify(final, result)
            except (Cancelled, EngineError):
                raise
            except RecursionError as e:
                raise SuqlError("The query is nested too deeply to compile.") from e
        counts, cached = llm.counter.counts, llm.counter.cached
        stats = Stats(
            answer_calls=counts.get("answer", 0) - before[0].get("answer", 0),
            summary_calls=counts.get("summary", 0) - before[0].get("summary", 0),
            cached_calls=cached - before[1],
            rows_examined=run.rows_examined,
            wall_s=time.perf_counter() - started,
        )
        try:
            sentence = read_back(tree, types=self.sandbox.column_types(tree))
        except Exception:  # the read-back must never hide a result
            sentence = "I ran your SUQL query."
        out = SuqlResult(
            query=sql,
            mode=m.name,
            dnf=run.dnf or "",
            plan=run.plan or Plan(m, ""),
            readback=sentence,
            columns=result.columns,
            rows=result.rows,
            to_verify=tuple(run.to_verify),
            approximate=run.approximate,
            truncated=result.truncated,
            stats=stats,
            budget_exhausted=run.budget_exhausted,
            message=budget_message(self.call_budget) if run.budget_exhausted else "",
        )
        emit(QueryFinished(out, sentence, stats))
        return out

    def estimate_calls(self, sql: str, mode: str | Mode = DEFAULT_MODE) -> int:
        """An upper bound on the LLM calls ``run(sql, mode=mode)`` can make, without making any.

        Per SELECT with calls of its own: the candidate rows (after the structured conditions, in
        the modes that test them first; capped in mode F) times the distinct answer() calls of its
        WHERE, plus the rows that can reach the SELECT list times its other calls (LIMIT bounds
        these only where the executor computes them for the output rows alone).  A run stops at
        the budget whatever this says.
        """
        m = mode if isinstance(mode, Mode) else mode_named(mode, cap=self.cap)
        tree = language.parse(sql)
        if not has_llm_calls(tree):
            return 0
        root_with = tree.args.get("with_")
        total = 0
        for select in tree.find_all(exp.Select):
            own = calls_in(select)
            if own:
                total += self._estimate_select(select, own, m, root_with if select is not tree else None)
        return total

    def _estimate_select(self, select: exp.Select, own: list, m: Mode, outer_with: exp.With | None) -> int:
        if not m.udf and _int_arg(select.args.get("limit")) == 0:
            return 0  # LIMIT 0: the executor makes no call
        where = select.args.get("where")
        where_nodes = calls_in(where.this) if where is not None else []
        in_where = {id(n) for n in where_nodes}
        other_nodes = [n for n in own if id(n) not in in_where]
        sources = [select.args.get("from_")] + list(select.args.get("joins") or [])
        if select.args.get("from_") is None:
            return 0  # refused at run time: answer() needs a FROM clause
        if m.udf:  # DuckDB may evaluate every occurrence on every row of any source
            counts = [self._count(select, None, outer_with)]
            counts += [self._count(exp.select("*").from_(src.this.copy()), None, outer_with, sources_of=select)
                       for src in sources[1:] if src is not None]
            return max(counts) * len(own)
        if where_nodes:
            conjuncts, _ = to_dnf(where.this)
            filt = None
            if m.structured_first and conjuncts:
                filt = exp.Not(this=exp.Is(this=exp.paren(exp.or_(*[exp.paren(c.structured_sql()) for c in conjuncts])),
                                           expression=exp.false()))
            n = self._count(select, filt, outer_with)
            if m.cap is not None:
                n = min(n, m.cap)
        else:
            n = self._count(select, where.this.copy() if where is not None else None, outer_with)
        total = n * len({as_call(x).key for x in where_nodes})
        other = {as_call(x).key for x in other_nodes}
        if not other:
            return total
        order, _ = resolved_order(select, self.sandbox)  # ORDER BY 2 / an alias may name an answer()
        order_keys = {as_call(x).key for x in calls_in(order)} if order is not None else set()
        aggregated = bool(select.args.get("group")) or bool(select.args.get("distinct")) or any(
            e.find(exp.AggFunc) is not None for e in select.expressions)
        limit_n = _int_arg(select.args.get("limit"))
        if aggregated or m.summaries_for_all_matches or limit_n is None:
            return total + n * len(other)
        out_rows = min(n, limit_n + (_int_arg(select.args.get("offset")) or 0))
        return total + n * len(other & order_keys) + out_rows * len(other - order_keys)

    def _count(self, select: exp.Select, condition: exp.Expression | None, outer_with: exp.With | None,
               *, sources_of: exp.Select | None = None) -> int:
        """Rows of ``select``'s FROM / JOINs satisfying ``condition``; nested SELECTs with LLM calls
        lose their LLM conditions (more rows, never fewer); the row cap when it cannot be counted."""
        q = _over_sources(exp.select(exp.Count(this=exp.Star())), select)
        if condition is not None:
            q = q.where(condition)
        context = sources_of if sources_of is not None else select
        withs = [c.copy() for w in (outer_with, context.args.get("with_")) if w is not None for c in w.expressions]
        if withs:
            q.set("with_", exp.With(expressions=withs))

        def neutral(node: exp.Expression) -> exp.Expression:
            if isinstance(node, exp.Select) and node is not q:
                for part in ("where", "having", "qualify"):
                    clause = node.args.get(part)
                    if clause is not None and has_llm_calls(clause):
                        node.set(part, None)
                return node
            if is_llm_call(node):
                return exp.cast(exp.null(), "VARCHAR")
            return node

        q = q.transform(neutral)
        try:
            rows = self.sandbox.run_tree(q).rows
            return int(rows[0][0]) if rows and rows[0][0] is not None else 0
        except EngineError:
            return self.sandbox.row_cap


def budget_message(budget: int) -> str:
    return (f"Stopped after {budget:,} LLM calls (the per-query budget, CS224V_SUQL_CALL_BUDGET): "
            "the results are partial.")


class _BudgetExhausted(Exception):
    """Internal: the run's budget of real LLM calls is spent; the row being decided stays undecided."""


# --- one run of one query -----------------------------------------------------------------------

Truth = bool | None  # True, False, or Unknown

STRONG_MATCH = 0.5  # share of the best BM25 score a row needs to count as mentioning a question
NO_GIVEN_MENTION = 0.5  # prior: share of rows mentioning a topic whose text says no
SAMPLE_ROWS = 8  # rows evaluated in full to estimate how often each answer() predicate says no
PRIOR_WEIGHT = 4.0  # the prior counts as this many sampled rows


@dataclass
class _Row:
    key: Any
    label: str
    flags: list[Truth]  # per conjunct: does its structured part hold?
    texts: dict[str, Any]  # text expression sql -> value
    score: float = 0.0
    leaves: list[Truth] = field(default_factory=list)  # mode B: each structured leaf of the written WHERE


class _Run:
    def __init__(self, engine: SuqlEngine, llm: LLM, mode: Mode, emit: Emit, cancel: threading.Event | None) -> None:
        self.engine = engine
        self.sandbox = engine.sandbox
        self._seen = threading.local()  # per thread: was the last LLM call answered from the cache?

        def tracking(event: Event) -> None:
            if isinstance(event, CallFinished):
                self._seen.cached = event.cached
            emit(event)

        self.llm = llm.bind(tracking, cancel)
        self.budget = engine.call_budget
        self._budget_lock = threading.Lock()
        self._asked: dict[tuple[str, str, str], Any] = {}  # (function, text, question) -> value, this run
        self._asking: dict[tuple[str, str, str], threading.Event] = {}
        self._asked_lock = threading.Lock()
        self._wide_of: dict[int, tuple[exp.Expression, list[str]] | None] = {}  # a compiled SELECT -> its wide twin
        self._wide_tables: dict[str, tuple[exp.Table, list[str]]] = {}  # scratch name -> wide twin, conditions
        self._spent = 0  # real (uncached) calls made or in flight in this run
        self.budget_exhausted = False
        self.mode = mode
        self.emit = emit
        self.cancel = cancel
        self.stack: ExitStack
        self.plan: Plan | None = None
        self.dnf: str | None = None
        self.to_verify: list[dict[str, Any]] = []
        self.approximate = False
        self.rows_examined = 0
        self._estimates: list[list[PredicateEstimate]] = []
        self._written: tuple[exp.Expression, dict[int, int]] | None = None  # mode B: the WHERE and its leaves

    def precheck(self, tree: exp.Expression) -> None:
        """Bind the query with every LLM call replaced by NULL: a misspelt column fails here,
        before a single call is made."""
        if not has_llm_calls(tree):
            return
        probe = tree.copy().transform(lambda n: exp.cast(exp.null(), "VARCHAR") if is_llm_call(n) else n)
        try:
            self.sandbox.columns_of(probe)
        except SqlFailed as e:
            # DuckDB's own words, without the probe's internals (its LINE/caret block)
            lines = [ln for ln in e.message.splitlines() if ln.strip() and not ln.startswith("LINE ") and set(ln.strip()) != {"^"}]
            raise SqlFailed("\n".join(lines) + "\n(checked before any LLM call)", sql=pretty(tree)) from e
        self._check_text_arguments(tree)

    def _check_text_arguments(self, tree: exp.Expression) -> None:
        """answer() and summary() read text: a VARCHAR, or a list of VARCHAR (its items joined with newlines).
        A number, date, enum, … is refused before any call (it gave a bm25s traceback or 'all Unknown')."""
        root_with = tree.args.get("with_")
        for select in tree.find_all(exp.Select):
            own = [as_call(n) for n in calls_in(select)]
            if not own or select.args.get("from_") is None:
                continue
            q = _over_sources(exp.select(*[exp.alias_(c.text.copy(), f"_a{i}") for i, c in enumerate(own)]), select)
            withs = [c.copy() for w in ((root_with if select is not tree else None), select.args.get("with_"))
                     if w is not None for c in w.expressions]
            if withs:
                q.set("with_", exp.With(expressions=withs))
            q = q.transform(lambda n: exp.cast(exp.null(), "VARCHAR") if is_llm_call(n) else n)
            try:
                types = [t for _, t in self.sandbox.columns_of(q)]
            except EngineError:
                continue  # e.g. correlated with an outer query: the whole query was bound above
            for call, typ in zip(own, types):
                if typ.upper() not in ("VARCHAR", "VARCHAR[]"):
                    arg = pretty(call.text)
                    raise SuqlError(
                        f"{call.function}() reads text: {arg} is {typ}. Compare it in SQL instead, or pass it "
                        f"as text on purpose: {call.function}(CAST({arg} AS VARCHAR){', ...' if call.function == 'answer' else ''}).",
                        sql=pretty(tree))

    # -- mode B: DuckDB runs the query as written ----------------------------------------------

    def udf_rewrite(self, tree: exp.Expression) -> exp.Expression:
        answer_fn = self.stack.enter_context(self.sandbox.function("suql_answer", self._udf_answer, ["VARCHAR", "VARCHAR"], "VARCHAR"))
        summary_fn = self.stack.enter_context(self.sandbox.function("suql_summary", self._udf_summary, ["VARCHAR"], "VARCHAR"))
        text_types = self._text_types(tree)

        tree = tree.copy()
        if isinstance(tree, exp.Select):  # a bare summary(reviews) keeps its own text as the column name
            tree.set("expressions", [exp.alias_(e, pretty(e), quoted=True) if is_llm_call(e) else e for e in tree.expressions])

        def swap(node: exp.Expression) -> exp.Expression:
            if is_llm_call(node):
                call = as_call(node)
                text = _as_text_sql(call.text, text_types)
                if call.function == "summary":
                    return exp.Anonymous(this=summary_fn, expressions=[text])
                return exp.Anonymous(this=answer_fn, expressions=[text, exp.Literal.string(call.question)])
            return node

        where = tree.find(exp.Where)
        self.dnf = pretty(where.this) if where is not None else ""
        self.plan = Plan(self.mode, self.dnf, visit_order="DuckDB's own", lazy_reason="DuckDB evaluates whole vectors of rows",
                         notes=("DuckDB drops rows whose condition is unknown: mode B cannot list rows to verify",))
        self.emit(PlanBuilt(self.plan))
        return tree.copy().transform(swap)

    def _udf_answer(self, text: str | None, question: str | None) -> str | None:
        self._check_cancel()
        if text is None:  # a function of NULL is NULL: no call
            return None
        try:
            value = self._ask(("answer", text, question or ""), lambda: self.llm.answer(text, question or "").value)
        except _BudgetExhausted:
            return None  # past the budget every value is unknown: DuckDB drops the row
        self.rows_examined += 1
        return value

    def _udf_summary(self, text: str | None) -> str | None:
        self._check_cancel()
        if text is None:
            return None
        try:
            return self._ask(("summary", text, ""), lambda: self.llm.summary(text))
        except _BudgetExhausted:
            return None

    def _spend(self, call: Callable[[], Any]) -> Any:
        """Make one LLM call within the run's budget of real calls (cached answers are free).

        A slot is reserved under the lock before the call, so parallel workers never exceed the
        budget; it is given back when the answer came from the cache."""
        with self._budget_lock:
            if self._spent >= self.budget:
                self.budget_exhausted = True
                raise _BudgetExhausted()
            self._spent += 1
        self._seen.cached = False
        value = call()  # a failed call keeps its slot: it may have cost
        if self._seen.cached:
            with self._budget_lock:
                self._spent -= 1
        return value

    def _text_types(self, tree: exp.Expression) -> dict[str, str]:
        """DuckDB types of the columns of the base tables the query reads (to join list columns)."""
        return self.sandbox.column_types(tree)

    # -- the compiler -----------------------------------------------------------------------------

    def compile_statement(self, tree: exp.Expression, *, top: bool = False) -> exp.Expression:
        """A tree with no LLM calls left, equivalent to ``tree``."""
        if not has_llm_calls(tree):
            if top:
                self.plan = Plan(self.mode, "", notes=("no answer() or summary(): DuckDB runs the query as it is",))
                self.emit(PlanBuilt(self.plan))
            return tree
        if isinstance(tree, (exp.Union, exp.Except, exp.Intersect)):
            out = tree.copy()
            out.set("this", self.compile_statement(tree.this))
            out.set("expression", self.compile_statement(tree.expression))
            return out
        if isinstance(tree, exp.Subquery):
            out = tree.copy()
            out.set("this", self.compile_statement(tree.this))
            return out
        if not isinstance(tree, exp.Select):
            raise SuqlError(f"answer() and summary() are supported in SELECT statements, not in {type(tree).__name__}.")
        select = tree.copy()
        self._materialise_ctes(select)
        self._materialise_subqueries(select)
        if not calls_in(select):  # every call was in a CTE or subquery
            if top:
                self.plan = self.plan or Plan(self.mode, "", notes=("answer() ran in CTEs or subqueries",))
            return select
        return self._compile_select(select, top=top)

    def _materialise_ctes(self, select: exp.Select) -> None:
        with_ = select.args.get("with_")
        if with_ is None:
            return
        earlier: list[exp.CTE] = []
        for cte in with_.expressions:
            if has_llm_calls(cte.this):
                body = cte.this.copy()
                if earlier:
                    body.set("with_", exp.With(expressions=[c.copy() for c in earlier]))
                table = self._materialise(body)
                cte.set("this", exp.select("*").from_(table))
            earlier.append(cte)

    def _materialise_subqueries(self, select: exp.Select) -> None:
        """Innermost first: every nested SELECT with LLM calls becomes a scratch table."""
        nested = [
            s for s in select.find_all(exp.Select)
            if s is not select and has_llm_calls(s) and not _has_nested_llm_select(s)
            and not isinstance(s.parent, exp.CTE)
        ]
        for inner in nested:
            context = inner.copy()
            with_ = select.args.get("with_")
            if with_ is not None and context.args.get("with_") is None:
                context.set("with_", with_.copy())
            table = self._materialise(context)
            inner.replace(exp.select("*").from_(table))
        if any(s is not select and has_llm_calls(s) and not isinstance(s.parent, exp.CTE) for s in select.find_all(exp.Select)):
            if not nested:
                raise SuqlError("answer() in this kind of nested query is not supported.")
            self._materialise_subqueries(select)

    def _materialise(self, select: exp.Expression) -> exp.Table:
        compiled = self.compile_statement(select)
        try:
            columns = self.sandbox.columns_of(compiled)
        except SqlFailed as e:
            raise SuqlError(f"A subquery with answer() could not run on its own (is it correlated with the outer query?): {e.message}") from e
        result = self.sandbox.run_tree(compiled)
        names = _unique([c for c, _ in columns])
        schema = list(zip(names, (t for _, t in columns)))
        table = self.stack.enter_context(self.sandbox.scratch_table(schema, result.rows))
        widened = self.widen(compiled)
        if widened is not None:  # its rows if every unknown inner condition were true
            wide_tree, conditions = widened
            wide = self.stack.enter_context(self.sandbox.scratch_table(schema, self.sandbox.run_tree(wide_tree).rows))
            self._wide_tables[table.name] = (wide, conditions)
        return table

    # -- rows to verify below the output (CTEs, subqueries, UNION branches) ----------------------
    #
    # Inside a CTE, a subquery or a derived table an Unknown is SQL NULL: the inner row whose condition
    # is unknown is not one of its rows, exactly as DuckDB's WHERE drops it.  Beside each such scratch
    # table a "wide" twin holds the rows it would have if every unknown condition were true.  The
    # statement is run over both; an output row that is in one result and not in the other depends on
    # an unknown and is listed to verify (rows the outer query includes or excludes either way never
    # are).  A SELECT with answer() of its own over such tables is compiled a second time over the twins
    # (its answer() asked of the rows they add); its own unknown rows are listed as usual.

    def widen(self, tree: exp.Expression) -> tuple[exp.Expression, list[str]] | None:
        """``tree`` over the wide twins, and the unknown conditions involved; None when nothing differs."""
        if id(tree) in self._wide_of:
            return self._wide_of[id(tree)]
        if isinstance(tree, (exp.Union, exp.Except, exp.Intersect)):
            left, right = self.widen(tree.this), self.widen(tree.expression)
            if left is None and right is None:
                return None
            out = tree.copy()
            conditions: list[str] = []
            for part, got in (("this", left), ("expression", right)):
                if got is not None:
                    out.set(part, got[0].copy())
                    conditions += got[1]
            return out, sorted(set(conditions))
        if isinstance(tree, exp.Subquery):
            inner = self.widen(tree.this)
            if inner is None:
                return None
            out = tree.copy()
            out.set("this", inner[0].copy())
            return out, inner[1]
        found: list[str] = []

        def swap(node: exp.Expression) -> exp.Expression:
            if isinstance(node, exp.Table) and node.db == "scratch" and node.name in self._wide_tables:
                wide, conditions = self._wide_tables[node.name]
                found.extend(conditions)
                twin = wide.copy()
                if node.args.get("alias") is not None:
                    twin.set("alias", node.args["alias"].copy())
                return twin
            return node

        out = tree.copy().transform(swap)
        return (out, sorted(set(found))) if found else None

    def derived_to_verify(self, final: exp.Expression, result: QueryResult) -> None:
        """Output rows whose inclusion depends on an unknown inner condition (see above)."""
        widened = self.widen(final)
        if widened is None:
            return
        wide_tree, conditions = widened
        wide = self.sandbox.run_tree(wide_tree)
        narrow_rows = Counter(map(_hashable, result.rows))
        wide_rows = Counter(map(_hashable, wide.rows))
        only_wide = wide_rows - narrow_rows
        only_narrow = narrow_rows - wide_rows
        picked = []
        for source, extra in ((wide, only_wide), (result, only_narrow)):
            for row in source.rows:
                h = _hashable(row)
                if extra.get(h, 0) > 0:
                    extra[h] -= 1
                    picked.append(row)
        for rec in QueryResult("", result.columns, tuple(picked), False, 0.0).records():
            rec["_row"] = "—"
            rec["unknown"] = [f"{c} (in a subquery)" for c in conditions]
            rec["approximate"] = self.approximate
            self.to_verify.append(rec)

    # -- one SELECT with LLM calls in its own clauses --------------------------------------------

    def _compile_select(self, select: exp.Select, *, top: bool) -> exp.Expression:
        self._materialise_sources(select)
        key = _row_key(select)
        nodes = calls_in(select)
        calls: dict[tuple, LLMCall] = {}
        for n in nodes:
            c = as_call(n)
            calls.setdefault(c.key, c)
        index_of = {k: i for i, k in enumerate(calls)}

        where = select.args.get("where")
        text_where = where is not None and bool(calls_in(where.this))
        order, order_resolved = self._resolved_order(select)
        order_dep = order is not None and bool(calls_in(order))
        aggregated = bool(select.args.get("group")) or bool(select.args.get("distinct")) or any(
            isinstance(e.unalias(), exp.AggFunc) or e.find(exp.AggFunc) is not None for e in select.expressions
        )
        limit_n = _int_arg(select.args.get("limit"))
        offset_n = _int_arg(select.args.get("offset")) or 0

        conjuncts: list[Conjunct] = []
        dnf_ok = True
        if text_where:
            conjuncts, dnf_ok = to_dnf(where.this)
        if top or self.dnf is None:
            self.dnf = dnf_text(conjuncts) if text_where else (pretty(where.this) if where is not None else "")

        text_sqls = sorted({c.text.sql(dialect="duckdb") for c in calls.values()})
        text_types = self._text_types(select)
        label = self._label_column(select)

        # 1. candidates, with each conjunct's structured truth
        lazy_ok, lazy_reason = self._lazy(text_where, limit_n, order, order_dep, aggregated)
        if lazy_ok and not order_resolved:
            lazy_ok, lazy_reason = False, "ORDER BY names a column of SELECT * by its number: every match is read first"
        visit_structured_order = lazy_ok and order is not None
        written = self.mode.as_written and text_where
        leaves = _structured_leaves(where.this) if written else []
        rows = self._candidates(select, key, conjuncts, text_where, text_sqls, text_types, label,
                                order if visit_structured_order else None, leaves)

        # 2. estimates, retrieval, and the plan
        where_calls = [as_call(n) for c in conjuncts for lit in c.text for n in calls_in(lit)]
        scores = self._retrieval(select, key, text_types, where_calls, rows) if text_where and not written else {}
        if written:  # a row-at-a-time engine sees the WHERE as written, not its DNF: nothing to order
            conjunct_plans, orders = [], [[] for _ in conjuncts]
            self._written = (where.this, {id(leaf): j for j, leaf in enumerate(leaves)})
        else:
            conjunct_plans, orders = self._order_predicates(conjuncts, rows, scores)
        visit = self._visit_order(rows, scores, conjuncts, visit_structured_order, order)
        select_nodes = [n for n in nodes if not (where is not None and _within(n, where))]
        select_calls = sorted({as_call(n).sql() for n in select_nodes})
        plan = Plan(
            mode=self.mode,
            dnf=self.dnf or "",
            conjuncts=tuple(conjunct_plans),
            visit_order=visit[1] if text_where else "",
            lazy=lazy_ok,
            lazy_reason=lazy_reason,
            stop_after=(limit_n + offset_n) if lazy_ok and limit_n is not None else None,
            cap=self.mode.cap if text_where and self.mode.cap is not None else None,
            select_calls=tuple(select_calls),
            select_calls_for=self._select_calls_scope(aggregated, order_dep),
            notes=(("the WHERE as written, left to right on each row: AND stops at the first false condition, OR at "
                    "the first true one; a condition written before the structured ones is asked of every row",)
                   if written else () if dnf_ok else ("the WHERE is too large for DNF: its top-level structured "
                                                      "conditions run first in DuckDB, the rest row by row",)),
        )
        if top or self.plan is None:
            self.plan = plan
        self.emit(PlanBuilt(plan))

        # 3. decide the rows
        values: dict[tuple[Any, tuple], Any] = {}
        if limit_n == 0:  # LIMIT 0: no row can be output, so no call is needed
            matches, unknown = [], []
        elif text_where:
            decided = self._decide(visit[0], conjuncts, orders, values, lazy_ok, (limit_n or 0) + offset_n, select, key, plan)
            matches = [k for k, t in decided if t is True]
            unknown = [k for k, t in decided if t is None]
        else:
            matches = [r.key for r in rows]
            unknown = []

        # 4. SELECT-list / ORDER BY calls, only where needed
        by_key = {r.key: r for r in rows}
        other_calls = [calls[k] for k in calls if any(as_call(n).key == k for n in select_nodes)]
        if other_calls and limit_n != 0:
            order_calls = [calls[k] for k in calls if order is not None and any(as_call(n).key == k for n in calls_in(order))]
            need_all = aggregated or self.mode.summaries_for_all_matches
            first = order_calls if not need_all else other_calls
            self._compute(first, matches, by_key, values)
            if not need_all:
                output = self._output_keys(select, key, matches, calls, index_of, values, limit_n, offset_n)
                rest = [c for c in other_calls if c not in order_calls]
                self._compute(rest, output, by_key, values)

        # 5. the final query over the scratch tables
        final = self._final(select, key, calls, index_of, values, matches if text_where else None)
        self._wide_of[id(final)] = None
        if unknown and top:
            self._collect_to_verify(select, key, calls, index_of, values, unknown, conjuncts)
        elif unknown:  # below the output: a wide twin with the unknown rows, for the statement to compare
            wide = self._final(select, key, calls, index_of, values, matches + unknown)
            unknown_set = set(unknown)
            conditions = sorted({
                pretty(lit) for c in conjuncts for lit in c.text
                if any(values.get((k, as_call(n).key), "missing") is None for k in unknown_set for n in calls_in(lit))})
            self._wide_of[id(final)] = (wide, conditions)
        self._widen_own(select, final, top)
        return final

    def _widen_own(self, select: exp.Select, final: exp.Expression, top: bool) -> None:
        """A SELECT with answer() of its own over sources (FROM, IN, EXISTS, …) that have wide twins:
        the same SELECT is compiled again over the twins (its own answer() asked of the rows they add),
        so the statement can compare the two results.  At the top its own unknown rows are listed apart,
        so the twin is its SQL result; below, the twin keeps its unknown rows as well."""
        found: list[str] = []

        def swap(node: exp.Expression) -> exp.Expression:
            if isinstance(node, exp.Table) and node.db == "scratch" and node.name in self._wide_tables:
                wide, conditions = self._wide_tables[node.name]
                found.extend(conditions)
                twin = wide.copy()
                twin.set("alias", node.args["alias"].copy() if node.args.get("alias") is not None else None)
                return twin
            return node

        wide_select = select.copy().transform(swap)
        if not found:
            return
        wide_final = self._compile_select(wide_select, top=False)
        own = self._wide_of.get(id(wide_final))
        conditions = set(found) | set(own[1] if own is not None and not top else ())
        tree = own[0] if own is not None and not top else wide_final
        self._wide_of[id(final)] = (tree, sorted(conditions))

    def _materialise_sources(self, select: exp.Select) -> None:
        """Derived tables and CTE names in FROM / JOIN become scratch tables, so every row has a rowid."""
        sources = [select.args.get("from_")] + list(select.args.get("joins") or [])
        with_ = select.args.get("with_")
        cte_names = {c.alias_or_name for c in with_.expressions} if with_ is not None else set()
        for src in sources:
            if src is None:
                continue
            node = src.this
            if isinstance(node, exp.Table) and node.db != "scratch" and node.name not in cte_names and not self._has_rowid(node):
                table = self._materialise(exp.select("*").from_(exp.table_(node.name, db=node.db or None)))
                table.set("alias", exp.TableAlias(this=exp.to_identifier(node.alias_or_name)))
                node.replace(table)
            elif isinstance(node, exp.Table) and not node.db and node.name in cte_names:
                body = exp.select("*").from_(exp.to_table(node.name))
                body.set("with_", with_.copy())
                table = self._materialise(body)
                table.set("alias", exp.TableAlias(this=exp.to_identifier(node.alias_or_name)))
                node.replace(table)
            elif isinstance(node, exp.Subquery):
                alias = node.alias_or_name
                table = self._materialise(node.this.copy())
                table.set("alias", exp.TableAlias(this=exp.to_identifier(alias or table.name)))
                node.replace(table)

    def _has_rowid(self, table: exp.Table) -> bool:
        """Base tables have a rowid; views do not (they are materialised first)."""
        name = table.sql(dialect="duckdb").split(" AS ")[0]
        cached = self.engine._rowid.get(name)
        if cached is None:
            try:
                self.sandbox.columns_of(exp.select("rowid").from_(exp.table_(table.name, db=table.db or None)))
                cached = True
            except EngineError:
                cached = False
            self.engine._rowid[name] = cached
        return cached

    def _id_column(self, table: exp.Table) -> str | None:
        """The table's own row id: an ``_id`` column, else a one-column PRIMARY KEY; None if it has neither."""
        cache_key = (table.catalog or "", table.db or "", table.name)
        if cache_key in self.engine._id_columns:
            return self.engine._id_columns[cache_key]
        found = None
        try:
            names = [c for c, _ in self.sandbox.columns_of(exp.select("*").from_(_bare_table(table)))]
        except EngineError:
            names = []
        if "_id" in names:
            found = "_id"
        elif table.db != "scratch":
            try:
                pks = self.sandbox.run(
                    "SELECT schema_name, table_name, constraint_column_names FROM duckdb_constraints() "
                    "WHERE constraint_type = 'PRIMARY KEY'").rows
            except EngineError:
                pks = ()
            for schema, name, cols in pks:
                if name == table.name and (not table.db or schema == table.db) and len(cols) == 1 and cols[0] in names:
                    found = cols[0]
                    break
        if table.db != "scratch":  # scratch tables are per query
            self.engine._id_columns[cache_key] = found
        return found

    def _display_id(self, select: exp.Select) -> exp.Expression:
        """What a row is called in events and rows to verify: each source's own id (``_id`` / primary key),
        else its rowid (0-based, as the HybridQA tab numbers rows); a join's ids joined with '|'."""
        parts = []
        for src in [select.args.get("from_")] + list(select.args.get("joins") or []):
            if src is None or not isinstance(src.this, exp.Table):
                continue
            table = src.this
            column = self._id_column(table)
            parts.append(exp.column(column or "rowid", table=table.alias_or_name, quoted=column is not None))
        if len(parts) == 1:
            return parts[0]
        return _join_parts(parts, "-")

    def _label_column(self, select: exp.Select) -> exp.Expression | None:
        """A readable column of the FROM table (name, title, an id) to label rows in events."""
        from_ = select.args.get("from_")
        if from_ is None or not isinstance(from_.this, exp.Table):
            return None
        table = from_.this
        try:
            names = {c for c, _ in self.sandbox.columns_of(exp.select("*").from_(_bare_table(table)))}
        except EngineError:
            return None
        for candidate in ("name", "Name", "title", "Title", "course_id", "id"):
            if candidate in names:
                return exp.column(candidate, table=table.alias_or_name)
        return None

    def _resolved_order(self, select: exp.Select) -> tuple[exp.Order | None, bool]:
        return resolved_order(select, self.sandbox)

    def _lazy(self, text_where: bool, limit_n: int | None, order: exp.Expression | None, order_dep: bool, aggregated: bool) -> tuple[bool, str]:
        if not text_where:
            return False, "no answer() in the WHERE"
        if not self.mode.lazy:
            return False, f"mode {self.mode.name} examines every candidate"
        if limit_n is None:
            return False, "no LIMIT: every match is needed"
        if aggregated:
            return False, "the query aggregates: every match is needed"
        if order_dep:
            return False, "ORDER BY depends on answer(): every candidate must be read before the first is known"
        if order is not None and self.mode.as_written:
            return False, "a row-at-a-time engine filters every row, then sorts, then takes the LIMIT"
        if order is not None:
            return True, "candidates are visited in the query's ORDER BY, so the first matches are the top ones"
        return True, "no ORDER BY: any matching rows are a valid answer"

    def _select_calls_scope(self, aggregated: bool, order_dep: bool) -> str:
        if self.mode.summaries_for_all_matches:
            return "every matching row (naive)"
        if aggregated:
            return "every matching row (the query aggregates over them)"
        if order_dep:
            return "every matching row for ORDER BY, then the output rows"
        return "the output rows only"

    # -- candidates -----------------------------------------------------------------------------

    def _candidates(self, select, key, conjuncts, text_where, text_sqls, text_types, label, visit_order,
                    leaves: list[exp.Expression] = ()) -> list[_Row]:
        q = exp.select(exp.alias_(key.copy(), "_k"), exp.alias_(self._display_id(select), "_d"))
        if label is not None:
            q = q.select(exp.alias_(label, "_label"))
        for i, c in enumerate(conjuncts):
            q = q.select(exp.alias_(exp.paren(c.structured_sql()), f"_s{i}"))
        for j, leaf in enumerate(leaves):
            q = q.select(exp.alias_(exp.paren(leaf.copy()), f"_w{j}"))
        for j, t in enumerate(text_sqls):
            q = q.select(exp.alias_(_parse_duck(t), f"_t{j}"))
        _over_sources(q, select)
        where = select.args.get("where")
        if not text_where:
            if where is not None:
                q.set("where", where.copy())
        elif self.mode.structured_first and conjuncts:
            structured_any = exp.or_(*[exp.paren(c.structured_sql()) for c in conjuncts])
            q = q.where(exp.Not(this=exp.Is(this=exp.paren(structured_any), expression=exp.false())))
        if visit_order is not None:
            ordered = visit_order.copy()
            ordered.append("expressions", exp.Ordered(this=key.copy()))
            q.set("order", ordered)
        else:
            q = q.order_by(exp.Ordered(this=key.copy()))
        result = self._run_all(q)
        rows = []
        cols = result.columns
        n_conj = len(conjuncts)
        for raw in result.rows:
            rec = dict(zip(cols, raw))
            rows.append(
                _Row(
                    key=rec["_k"],
                    label=f"#{rec['_d']} {rec['_label']}" if label is not None else f"#{rec['_d']}",
                    flags=[rec[f"_s{i}"] for i in range(n_conj)],
                    texts={t: rec[f"_t{j}"] for j, t in enumerate(text_sqls)},
                    leaves=[rec[f"_w{j}"] for j in range(len(leaves))],
                )
            )
        return rows

    def _run_all(self, q: exp.Expression) -> QueryResult:
        result = self.sandbox.run_tree(q)
        if result.truncated:
            raise SuqlError(f"More than {self.sandbox.row_cap} candidate rows: narrow the structured conditions or raise the row cap.")
        return result

    # -- retrieval and the cost model ---------------------------------------------------------

    def _retrieval(self, select, key, text_types, where_calls: list[LLMCall], rows: list[_Row]) -> dict[str, dict[Any, float]]:
        """Per answer() question (keyed by call sql): every row's BM25 score (max over chunks).

        A single base table gets one index per text column, built once and reused by later
        queries; joins index only this query's candidates.
        """
        out: dict[str, dict[Any, float]] = {}
        single = not select.args.get("joins")
        for call in where_calls:
            if call.sql() in out:
                continue
            text_sql = call.text.sql(dialect="duckdb")
            if not single:
                index = ChunkIndex.build((r.key, r.texts.get(text_sql)) for r in rows)
                out[call.sql()] = index.scores(call.question or "summary")
                continue
            cache_key = (_sources_sql(select), text_sql)

            def fetch(text_sql=text_sql):
                q = _over_sources(exp.select(exp.alias_(key.copy(), "_k"), exp.alias_(_parse_duck(text_sql), "_t")), select)
                return [(k, t) for k, t in self._run_all(q).rows]

            index = self.engine.indexes.get(cache_key, fetch)
            out[call.sql()] = index.scores(call.question or "summary")
        return out

    def _order_predicates(self, conjuncts, rows, scores):
        plans, orders = [], []
        self._estimates = []
        for i, c in enumerate(conjuncts):
            cands = [r for r in rows if r.flags[i] is not False] if self.mode.structured_first else rows
            estimates = []
            for pos, pred in enumerate(c.text):
                cost = predicate_cost(pred)
                sel, source = 0.5, "no estimate"
                pred_calls = [as_call(n) for n in calls_in(pred)]
                if pred_calls and cands and all(pc.sql() in scores for pc in pred_calls):
                    # a row "mentions" the question when its best chunk scores at least half the best
                    # score anywhere: a chunk sharing only a common word ("great") does not count
                    strong = {pc.sql(): STRONG_MATCH * max(scores[pc.sql()].values(), default=0.0) for pc in pred_calls}
                    hits = sum(
                        1 for r in cands
                        if all(0 < strong[pc.sql()] <= scores[pc.sql()].get(r.key, 0.0) for pc in pred_calls)
                    )
                    share = hits / len(cands)
                    # Under Kleene AND only a False stops a row; Unknown (the text is silent) goes on
                    # to the next predicate.  Only rows that mention the topic can answer No, so a
                    # predicate stops about half of the rows that mention it.
                    if passes_if_yes(pred):
                        sel = min(0.98, max(0.02, 1 - NO_GIVEN_MENTION * share))
                        source = f"{share:.0%} of candidates mention it; about half of those say no"
                    else:
                        sel, source = min(0.95, max(0.05, 1 - share / 2)), "a non-'Yes' test: most rows go on"
                estimates.append(PredicateEstimate(pretty(pred), pos, cost, sel, source))
            order = self._sorted(estimates)
            ordered = [estimates[k] for k in order]
            plans.append(ConjunctPlan(i, pretty(c.structured_sql()), len(cands), tuple(ordered), expected_cost(ordered)))
            orders.append(order)
            self._estimates.append(estimates)
        return plans, orders

    def _sorted(self, estimates: list[PredicateEstimate]) -> list[int]:
        order = list(range(len(estimates)))
        if self.mode.order_predicates:
            order.sort(key=lambda k: (estimates[k].rank, k))
        return order

    def _reestimate(self, plan: Plan, orders: list[list[int]], observed: dict[tuple[int, int], list[Truth]], sample: int) -> Plan:
        """Blend each predicate's prior with what a sample of rows showed; re-order; the new plan."""
        conjunct_plans = list(plan.conjuncts)
        for i, estimates in enumerate(self._estimates):
            if len(estimates) < 2:
                continue
            updated = []
            for k, est in enumerate(estimates):
                seen = observed.get((i, k), [])
                false = sum(1 for t in seen if t is False)
                stop = (false + (1 - est.selectivity) * PRIOR_WEIGHT) / (len(seen) + PRIOR_WEIGHT)
                source = f"{false} of {len(seen)} sampled rows said no, blended with the prior"
                updated.append(PredicateEstimate(est.sql, est.written_position, est.cost, min(0.98, max(0.02, 1 - stop)), source))
            self._estimates[i] = updated
            orders[i] = self._sorted(updated)
            ordered = [updated[k] for k in orders[i]]
            old = conjunct_plans[i]
            conjunct_plans[i] = ConjunctPlan(old.index, old.structured, old.candidates, tuple(ordered), expected_cost(ordered))
        note = f"predicate order re-estimated after a sample of {sample} rows (evaluated without short-circuit)"
        return replace(plan, conjuncts=tuple(conjunct_plans), notes=tuple(plan.notes) + (note,))

    def _visit_order(self, rows, scores, conjuncts, structured_order: bool, order) -> tuple[list[_Row], str]:
        cands = [r for r in rows if any(f is not False for f in r.flags)] if self.mode.structured_first else list(rows)
        for r in cands:
            best = 0.0
            for i, c in enumerate(conjuncts):
                if r.flags[i] is False and self.mode.structured_first:
                    continue
                calls = [as_call(n) for lit in c.text for n in calls_in(lit)]
                best = max(best, sum(scores.get(cl.sql(), {}).get(r.key, 0.0) for cl in calls))
            r.score = best
        if self.mode.cap is not None:
            # a row an OR branch without answer() already decides needs no call: the cap never drops it
            free = [r for r in cands
                    if any(not c.text and r.flags[i] is True for i, c in enumerate(conjuncts))]
            free_ids = {id(r) for r in free}
            costly = [r for r in cands if id(r) not in free_ids]
            capped = sorted(costly, key=lambda r: (-r.score, r.key))[: self.mode.cap]
            if len(capped) < len(costly):
                self.approximate = True
            keep = {id(r) for r in capped} | free_ids
            cands = [r for r in cands if id(r) in keep]
        if structured_order:
            return cands, f"the query's ORDER BY ({', '.join(pretty(o) for o in order.expressions)}), then row id"
        if self.mode.retrieval:
            cands.sort(key=lambda r: (-r.score, r.key))
            return cands, "retrieval score (BM25, max over chunks, summed over the conjunct's answer() conditions)"
        return cands, "table order"

    # -- deciding rows ---------------------------------------------------------------------------

    def _decide(self, visit, conjuncts, orders, values, lazy, needed, select, key, plan: Plan) -> list[tuple[Any, Truth]]:
        """Evaluate rows in visit order on a bounded pool; stop early when lazy.

        When a conjunct has several answer() predicates, the first rows are a sample: every
        predicate is evaluated on them, and what they say refines the order for the rest.
        """
        decided: list[tuple[Any, Truth]] = []
        matched = 0
        sample = SAMPLE_ROWS if self.mode.order_predicates and any(len(c.text) > 1 for c in conjuncts) else 0
        if sample:
            observed: dict[tuple[int, int], list[Truth]] = {}
            for row in visit[:sample]:
                self._check_cancel()
                try:
                    truth = self._evaluate_row(row, conjuncts, orders, values, select, key, observe=observed)
                except _BudgetExhausted:
                    return decided  # this row and the rest stay undecided
                decided.append((row.key, truth))
                self._report(row, truth)
                matched += truth is True
                if lazy and matched >= needed:
                    return decided
            new_plan = self._reestimate(plan, orders, observed, min(sample, len(visit)))
            if self.plan is plan:
                self.plan = new_plan
            self.emit(PlanBuilt(new_plan))
            visit = visit[sample:]
        pool = self.engine.pool
        if pool == 1:
            for row in visit:
                self._check_cancel()
                try:
                    truth = self._evaluate_row(row, conjuncts, orders, values, select, key)
                except _BudgetExhausted:
                    break  # this row and the rest stay undecided
                decided.append((row.key, truth))
                self._report(row, truth)
                matched += truth is True
                if lazy and matched >= needed:
                    break
            return decided
        with ThreadPoolExecutor(max_workers=pool, thread_name_prefix="suql") as ex:
            pending: dict[int, Future] = {}
            next_submit = 0
            next_take = 0
            stop = False
            while next_take < len(visit):
                while not stop and next_submit < len(visit) and len(pending) < pool:
                    self._check_cancel()
                    row = visit[next_submit]
                    pending[next_submit] = ex.submit(self._evaluate_row, row, conjuncts, orders, values, select, key)
                    next_submit += 1
                if next_take not in pending:
                    break
                fut = pending.pop(next_take)
                try:
                    truth = fut.result()
                except _BudgetExhausted:  # rows from here on stay undecided
                    wait(list(pending.values()))
                    for f in pending.values():
                        if f.exception() and not isinstance(f.exception(), (Cancelled, _BudgetExhausted)):
                            raise f.exception()  # type: ignore[misc]
                    break
                row = visit[next_take]
                decided.append((row.key, truth))
                self._report(row, truth)
                next_take += 1
                matched += truth is True
                if lazy and matched >= needed:
                    stop = True
                    wait(list(pending.values()))  # speculative calls already started finish; their rows are not used
                    for f in pending.values():
                        if f.exception() and not isinstance(f.exception(), Cancelled):
                            raise f.exception()  # type: ignore[misc]
                    break
        return decided

    def _report(self, row: _Row, truth: Truth) -> None:
        self.rows_examined += 1
        self.emit(RowDecided(row.label, {True: "match", False: "no", None: "to verify"}[truth]))

    def _evaluate_row(self, row, conjuncts, orders, values, select, key, observe=None) -> Truth:
        """Kleene OR over conjuncts of (structured AND text predicates), short-circuiting.

        With ``observe``, every predicate of every applicable conjunct is evaluated and its
        value recorded under (conjunct, written position).
        """
        if self.mode.as_written:
            assert self._written is not None
            tree, leaf_index = self._written
            return self._written_truth(tree, leaf_index, row, values, select, key)
        if not self.mode.short_circuit:  # naive: every answer() of the WHERE, on every row
            for c in conjuncts:
                for lit in c.text:
                    for n in calls_in(lit):
                        self._value(row, as_call(n), values)
        result: Truth = False
        for i, c in enumerate(conjuncts):
            flag = row.flags[i]
            if flag is False and self.mode.short_circuit:
                continue
            truth: Truth = flag if flag is not None else None
            if flag is False:
                truth = False
            for k in orders[i]:
                if truth is False and self.mode.short_circuit and observe is None:
                    break
                t = self._predicate(row, c.text[k], values, select, key)
                if observe is not None and flag is not False:
                    observe.setdefault((i, k), []).append(t)
                truth = _and(truth, t)
            result = _or(result, truth)
            if result is True and self.mode.short_circuit and observe is None:
                break
        return result

    def _written_truth(self, node, leaf_index, row, values, select, key) -> Truth:
        """Mode B: the WHERE as a row-at-a-time engine evaluates it — left to right, Kleene logic,
        AND stopping at the first False and OR at the first True."""
        if isinstance(node, exp.Paren):
            return self._written_truth(node.this, leaf_index, row, values, select, key)
        if isinstance(node, exp.Not):
            inner = self._written_truth(node.this, leaf_index, row, values, select, key)
            return None if inner is None else not inner
        if isinstance(node, (exp.And, exp.Or)):
            stop = isinstance(node, exp.Or)  # the value that decides the connective
            left = self._written_truth(node.this, leaf_index, row, values, select, key)
            if left is stop:
                return left
            right = self._written_truth(node.expression, leaf_index, row, values, select, key)
            return _or(left, right) if stop else _and(left, right)
        if id(node) in leaf_index:
            value = row.leaves[leaf_index[id(node)]]
            return None if value is None else bool(value)
        return self._predicate(row, node, values, select, key)

    def _predicate(self, row, pred, values, select, key) -> Truth:
        inner = pred.unnest() if isinstance(pred, exp.Paren) else pred
        if isinstance(inner, (exp.And, exp.Or, exp.Not, exp.Case)) and calls_in(inner):
            return self._lazy_truth(row, inner, values, select, key)
        for n in calls_in(pred):
            self._value(row, as_call(n), values)
        fast = _fast_truth(pred, lambda n: values[(row.key, as_call(n).key)])
        if fast is not _NO_FAST:
            return fast
        return self._slow_truth(row, pred, values, select, key)

    def _lazy_truth(self, row, node, values, select, key) -> Truth:
        """A predicate holding AND / OR / NOT / CASE, evaluated the way SQL defines it but asking only
        what decides the row: a CASE asks the conditions in order and only the branch the row takes
        (``CASE WHEN c THEN answer(..) = 'Yes' ELSE answer(..) = 'Yes' END``); AND / OR stop at the
        deciding value (the naive mode has asked everything already).  Kleene logic throughout."""
        node = node.unnest() if isinstance(node, exp.Paren) else node
        if not calls_in(node):
            return self._slow_truth(row, node, values, select, key)
        if isinstance(node, exp.Not):
            t = self._lazy_truth(row, node.this, values, select, key)
            return None if t is None else not t
        if isinstance(node, (exp.And, exp.Or)):
            stop = isinstance(node, exp.Or)
            first, second = node.this, node.expression
            if self.mode.structured_first and calls_in(first) and not calls_in(second):
                first, second = second, first  # the side without a call first: it may decide the row
            left = self._lazy_truth(row, first, values, select, key)
            if left is stop and self.mode.short_circuit:
                return left
            right = self._lazy_truth(row, second, values, select, key)
            return _or(left, right) if stop else _and(left, right)
        if isinstance(node, exp.Case) and node.this is None:  # searched CASE: WHEN cond THEN value
            for branch in node.args.get("ifs") or []:
                if self._lazy_truth(row, branch.this, values, select, key) is True:
                    return self._lazy_truth(row, branch.args["true"], values, select, key)
            default = node.args.get("default")
            return None if default is None else self._lazy_truth(row, default, values, select, key)
        for n in calls_in(node):
            self._value(row, as_call(n), values)
        fast = _fast_truth(node, lambda n: values[(row.key, as_call(n).key)])
        if fast is not _NO_FAST:
            return fast
        return self._slow_truth(row, node, values, select, key)

    def _slow_truth(self, row, pred, values, select, key) -> Truth:
        def lit(node):
            if is_llm_call(node):
                v = values[(row.key, as_call(node).key)]
                return exp.null() if v is None else exp.Literal.string(str(v))
            return node

        q = _over_sources(exp.select(exp.alias_(exp.paren(pred.copy().transform(lit)), "_v")), select)
        q = q.where(exp.EQ(this=key.copy(), expression=_literal(row.key)))
        rows = self.sandbox.run_tree(q).rows
        if not rows or rows[0][0] is None:
            return None
        return bool(rows[0][0])

    def _value(self, row: _Row, call: LLMCall, values: dict) -> Any:
        k = (row.key, call.key)
        if k in values:
            return values[k]
        raw = row.texts.get(call.text.sql(dialect="duckdb"))
        if raw is None:  # SQL: a function of NULL is NULL (the missing side of a LEFT JOIN): no call
            values[k] = None
            return None
        text = as_text(raw)
        if call.function == "summary":
            v = self._ask(("summary", text, ""), lambda: self.llm.summary(text, row_key=row.label))
        else:
            v = self._ask(("answer", text, call.question),
                          lambda: self.llm.answer(text, call.question, row_key=row.label).value)
        values[k] = v
        return v

    def _ask(self, pair: tuple[str, str, str], call: Callable[[], Any]) -> Any:
        """One LLM call per distinct (function, text, question) in this run: a self-join's rows that
        read the same document share its answer (the cache is per text; this counts it once).
        Parallel workers asking the same pair wait for the first; a call that raised is not kept."""
        while True:
            with self._asked_lock:
                if pair in self._asked:
                    return self._asked[pair]
                pending = self._asking.get(pair)
                if pending is None:
                    pending = self._asking[pair] = threading.Event()
                    mine = True
                else:
                    mine = False
            if not mine:
                pending.wait()
                continue
            try:
                value = self._spend(call)
                with self._asked_lock:
                    self._asked[pair] = value
                return value
            finally:
                with self._asked_lock:
                    self._asking.pop(pair, None)
                pending.set()

    def _compute(self, calls: Sequence[LLMCall], keys: Sequence[Any], by_key: dict[Any, _Row], values: dict) -> None:
        for k in keys:
            row = by_key.get(k)
            if row is None:
                continue
            for call in calls:
                self._check_cancel()
                try:
                    self._value(row, call, values)
                except _BudgetExhausted:
                    return  # the remaining values stay unknown (NULL)

    def _check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled()

    # -- output rows and the final query --------------------------------------------------------

    def _values_table(self, calls, index_of, values, keys, key: exp.Expression) -> exp.Table:
        key_type = _key_type(key)
        cols = [("_k", key_type)] + [(f"c{index_of[k]}", "VARCHAR") for k in calls]
        rows = []
        for key in keys:
            rows.append([key] + [_str_or_none(values.get((key, k))) for k in calls])
        return self.stack.enter_context(self.sandbox.scratch_table(cols, rows))

    def _rewrite(self, select, key, calls, index_of, vals: exp.Table, alias: str) -> exp.Select:
        out = select.copy()
        # a bare summary(reviews) in the SELECT list keeps its own text as the column name
        out.set("expressions", [
            exp.alias_(e, pretty(e), quoted=True) if is_llm_call(e) else e for e in out.expressions
        ])

        def swap(node):
            if is_llm_call(node):
                return exp.column(f"c{index_of[as_call(node).key]}", table=alias)
            return node

        out = out.transform(swap)
        _hide_values(out, alias, ["_k"] + [f"c{index_of[k]}" for k in calls])
        vals_ref = vals.copy()
        vals_ref.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
        out = out.join(vals_ref, on=exp.EQ(this=exp.column("_k", table=alias), expression=key.copy()), join_type="left")
        return out

    def _output_keys(self, select, key, matches, calls, index_of, values, limit_n, offset_n) -> list[Any]:
        if not matches:
            return []
        vals = self._values_table(calls, index_of, values, matches, key)
        alias = "_suql_v"
        q = self._rewrite(select, key, calls, index_of, vals, alias)
        # the select list stays (ORDER BY may name its aliases or number its columns); the key comes last
        q.set("expressions", list(q.expressions) + [exp.alias_(key.copy(), "_suql_out_k")])
        q.set("where", exp.Where(this=exp.In(this=key.copy(), expressions=[_literal(k) for k in matches])))
        q.set("distinct", None)
        order = q.args.get("order")
        if order is not None:
            order.append("expressions", exp.Ordered(this=key.copy()))
        else:
            q = q.order_by(exp.Ordered(this=key.copy()))
        return [r[-1] for r in self.sandbox.run_tree(q).rows]

    def _final(self, select, key, calls, index_of, values, matches) -> exp.Expression:
        keys = sorted({k for k, _ in values}, key=_sortable)
        vals = self._values_table(list(calls), index_of, values, keys, key)
        alias = "_suql_v"
        out = self._rewrite(select, key, calls, index_of, vals, alias)
        if matches is not None:
            matched = self.stack.enter_context(self.sandbox.scratch_table([("_k", _key_type(key))], [[k] for k in matches]))
            out.set("where", exp.Where(this=exp.In(this=key.copy(), query=exp.select("_k").from_(matched).subquery())))
        order = out.args.get("order")
        if order is not None and not out.args.get("group") and not out.args.get("distinct"):
            order.append("expressions", exp.Ordered(this=key.copy()))
        return out

    def _collect_to_verify(self, select, key, calls, index_of, values, unknown, conjuncts) -> None:
        keys = sorted(set(unknown), key=_sortable)
        vals = self._values_table(list(calls), index_of, values, sorted({k for k, _ in values} | set(keys), key=_sortable), key)
        alias = "_suql_v"
        q = self._rewrite(select, key, calls, index_of, vals, alias)
        aggregated = bool(q.args.get("group")) or any(e.find(exp.AggFunc) is not None for e in q.expressions)
        if aggregated:  # list the underlying rows, not groups
            q.set("expressions", [exp.Star()])
            _hide_values(q, alias, ["_k"] + [f"c{index_of[k]}" for k in calls])
            q.set("group", None)
            q.set("having", None)
            q.set("order", None)
        q.set("expressions", list(q.expressions) + [exp.alias_(key.copy(), "_suql_key"),
                                                    exp.alias_(self._display_id(select), "_row")])
        q.set("where", exp.Where(this=exp.In(this=key.copy(), expressions=[_literal(k) for k in keys])))
        q.set("limit", None)
        q.set("offset", None)
        q.set("distinct", None)
        result = self.sandbox.run_tree(q)
        for rec in result.records():
            row_key = rec.pop("_suql_key")
            unknown_preds = [
                pretty(lit) for c in conjuncts for lit in c.text
                if any(values.get((row_key, as_call(n).key), "missing") is None for n in calls_in(lit))
            ]
            rec["unknown"] = sorted(set(unknown_preds))
            rec["approximate"] = self.approximate
            self.to_verify.append(rec)


# --- helpers -------------------------------------------------------------------------------------


def resolved_order(select: exp.Select, sandbox: Sandbox) -> tuple[exp.Order | None, bool]:
    """The ORDER BY as expressions over the sources: ``ORDER BY 2`` and ``ORDER BY alias`` name a
    SELECT-list expression (DuckDB's and PostgreSQL's rule: a bare name is the output column first;
    inside an expression an alias counts only where no source column has that name).  The executor
    visits candidates in this order, so ordinals and aliases must mean what they mean to DuckDB.
    False as second value when an ordinal points into a ``SELECT *`` (left unresolved)."""
    order = select.args.get("order")
    if order is None:
        return None, True
    order = order.copy()
    items = list(select.expressions)
    aliases = {e.alias: e.unalias() for e in items if isinstance(e, exp.Alias) and e.alias}
    source_columns: set[str] | None = None
    resolved = True

    def sources() -> set[str]:
        nonlocal source_columns
        if source_columns is None:
            try:
                probe = _over_sources(exp.select(exp.Star()), select)
                probe = probe.transform(lambda n: exp.cast(exp.null(), "VARCHAR") if is_llm_call(n) else n)
                source_columns = {c for c, _ in sandbox.columns_of(probe)}
            except EngineError:
                source_columns = set()
        return source_columns

    for ordered in order.expressions:
        term = ordered.this
        if isinstance(term, exp.Literal) and not term.is_string and term.name.isdigit():
            n = int(term.name)
            if any(isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
                   for e in items[:n]):
                resolved = False
            elif 1 <= n <= len(items):
                ordered.set("this", items[n - 1].unalias().copy())
        elif isinstance(term, exp.Column) and not term.table and term.name in aliases:
            ordered.set("this", aliases[term.name].copy())
        else:
            def swap(node):
                if (isinstance(node, exp.Column) and not node.table and node.name in aliases
                        and node.name not in sources()):
                    return aliases[node.name].copy()
                return node
            if any(isinstance(c, exp.Column) and not c.table and c.name in aliases for c in term.find_all(exp.Column)):
                ordered.set("this", term.transform(swap))
    return order, resolved


def _hide_values(select: exp.Select, alias: str, columns: Sequence[str]) -> None:
    """A bare ``*`` of ``select`` leaves out the columns of the joined values table ``alias``
    (qualified, so a user's own column of the same name stays)."""
    for e in select.expressions:
        if isinstance(e, exp.Star):
            hidden = [exp.column(c, table=alias) for c in columns]
            e.set("except_", list(e.args.get("except_") or []) + hidden)

_NO_FAST = object()


def _structured_leaves(node: exp.Expression) -> list[exp.Expression]:
    """The maximal parts of a WHERE below AND / OR / NOT / parentheses that hold no LLM call,
    left to right: the conditions a row-at-a-time engine tests without asking the LLM."""
    if isinstance(node, exp.Paren):
        return _structured_leaves(node.this)
    if isinstance(node, exp.Not):
        return _structured_leaves(node.this)
    if isinstance(node, (exp.And, exp.Or)):
        return _structured_leaves(node.this) + _structured_leaves(node.expression)
    return [] if calls_in(node) else [node]


def _and(a: Truth, b: Truth) -> Truth:
    if a is False or b is False:
        return False
    if a is None or b is None:
        return None
    return True


def _or(a: Truth, b: Truth) -> Truth:
    if a is True or b is True:
        return True
    if a is None or b is None:
        return None
    return False


def _fast_truth(pred: exp.Expression, value_of: Callable[[exp.Expression], Any]) -> Any:
    """Kleene truth of common shapes without a database round trip; _NO_FAST otherwise."""
    pred = pred.unnest() if isinstance(pred, exp.Paren) else pred
    if isinstance(pred, exp.Not):
        inner = _fast_truth(pred.this, value_of)
        if inner is _NO_FAST or inner is None:
            return inner
        return not inner
    if isinstance(pred, (exp.EQ, exp.NEQ)):
        for a, b in ((pred.this, pred.expression), (pred.expression, pred.this)):
            if is_llm_call(a) and isinstance(b, exp.Literal) and b.is_string:
                v = value_of(a)
                if v is None:
                    return None
                return (str(v) == b.name) if isinstance(pred, exp.EQ) else (str(v) != b.name)
    if isinstance(pred, exp.Is) and isinstance(pred.expression, exp.Null) and is_llm_call(pred.this):
        is_null = value_of(pred.this) is None
        return not is_null if pred.args.get("negate") else is_null  # IS NOT NULL parses as a negated Is
    return _NO_FAST


def _over_sources(q: exp.Select, select: exp.Select) -> exp.Select:
    """``q`` reading the same FROM, JOINs and CTEs as ``select``."""
    from_ = select.args.get("from_")
    q.set("from_", from_.copy() if from_ is not None else None)
    if select.args.get("joins"):
        q.set("joins", [j.copy() for j in select.args["joins"]])
    if select.args.get("with_"):
        q.set("with_", select.args["with_"].copy())
    return q


def _bare_table(table: exp.Table) -> exp.Table:
    """The table with its catalog and schema (a scratch table lives in memory.scratch), without its alias."""
    bare = table.copy()
    bare.set("alias", None)
    return bare


def _row_key(select: exp.Select) -> exp.Expression:
    sources = [select.args.get("from_")] + list(select.args.get("joins") or [])
    names = []
    for src in sources:
        if src is None:
            continue
        node = src.this
        if not isinstance(node, exp.Table):
            raise SuqlError(f"answer() over {type(node).__name__} sources is not supported.")
        names.append(node.alias_or_name)
    if not names:
        raise SuqlError("answer() and summary() need a FROM clause: they read a text column of each row.")
    keys = [exp.column("rowid", table=n) for n in names]
    if len(keys) == 1:
        return keys[0]
    return _join_parts(keys, "")


def _join_parts(parts: Sequence[exp.Expression], missing: str) -> exp.Expression:
    """``a|b`` for a joined row; the side an outer join left empty is ``missing`` (sqlglot's CONCAT_WS
    is NULL as soon as one part is, which gave every unmatched row of a LEFT JOIN the same NULL key)."""
    return exp.func("concat_ws", exp.Literal.string("|"), *[
        exp.func("coalesce", exp.cast(p.copy(), "VARCHAR"), exp.Literal.string(missing)) for p in parts])


def _as_text_sql(node: exp.Expression, text_types: dict[str, str]) -> exp.Expression:
    """A text argument as VARCHAR: list columns joined with newlines."""
    if isinstance(node, exp.Column) and text_types.get(node.name, "").endswith("[]"):
        return exp.func("array_to_string", node.copy(), exp.func("chr", exp.Literal.number(10)))
    return exp.cast(node.copy(), "VARCHAR")


def _has_nested_llm_select(s: exp.Select) -> bool:
    return any(inner is not s and has_llm_calls(inner) for inner in s.find_all(exp.Select))


def _within(node: exp.Expression, ancestor: exp.Expression) -> bool:
    p = node.parent
    while p is not None:
        if p is ancestor:
            return True
        p = p.parent
    return False


def _int_arg(node: exp.Expression | None) -> int | None:
    if node is None:
        return None
    value = node.args.get("expression") or node.this
    if isinstance(value, exp.Literal) and not value.is_string:
        try:
            return int(value.name)
        except ValueError:
            return None
    return None


def _sources_sql(select: exp.Select) -> str:
    parts = [select.args["from_"].sql(dialect="duckdb")] + [j.sql(dialect="duckdb") for j in select.args.get("joins") or []]
    return " ".join(parts)


def _parse_duck(sql: str) -> exp.Expression:
    import sqlglot

    return sqlglot.parse_one(sql, read="duckdb")


def _literal(value: Any) -> exp.Expression:
    if isinstance(value, (int, float)):
        return exp.Literal.number(value)
    return exp.Literal.string(str(value))


def _key_type(key: exp.Expression) -> str:
    """The scratch type of a row key (:func:`_row_key`): one table's rowid, or a join's rowids joined as text.
    Decided by the key, not by a value: a join with no matches has none (it got BIGINT against VARCHAR)."""
    return "BIGINT" if isinstance(key, exp.Column) else "VARCHAR"


def _hashable(row: Sequence[Any]) -> tuple:
    """A result row as a dictionary key (list values, e.g. a cuisines column, become tuples)."""
    return tuple(_hashable(v) if isinstance(v, (list, tuple)) else repr(v) if isinstance(v, dict) else v for v in row)


def _str_or_none(v: Any) -> str | None:
    return None if v is None else str(v)


def _sortable(k: Any) -> tuple:
    return (0, k, "") if isinstance(k, (int, float)) else (1, 0, str(k))


def _unique(names: Sequence[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for n in names:
        c = seen.get(n, 0)
        seen[n] = c + 1
        out.append(n if c == 0 else f"{n}_{c}")
    return out
