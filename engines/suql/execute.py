"""The SUQL executor: the compiler of lecture 7 §3 and the six execution modes.

:class:`SuqlEngine` is the public entry; the passes live in :mod:`engines.suql.compiler`:

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
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from engines.errors import Cancelled, EngineError
from engines.events import Emit, Event, ignore
from engines.jsonable import Jsonable, JsonShape
from engines.llm.client import LLM
from engines.retrieval.bm25 import IndexCache
from engines.sql.readback import readback as read_back
from engines.sql.sandbox import QueryResult, Sandbox, to_jsonable
from engines.suql import language
from engines.suql.compiler.asker import Asker
from engines.suql.compiler.context import RunContext, RunState
from engines.suql.compiler.estimate import estimate_calls
from engines.suql.compiler.identity import RowNames
from engines.suql.compiler.materialise import derived_to_verify
from engines.suql.compiler.pipeline import compile_statement
from engines.suql.compiler.precheck import precheck
from engines.suql.compiler.records import Compiled, PlanBuilt, RowDecided
from engines.suql.compiler.semantic import check_ranker
from engines.suql.compiler.sqlparts import resolved_order
from engines.suql.compiler.udf import udf_rewrite
from engines.suql.dnf import dnf_text, to_dnf
from engines.suql.language import Query, SuqlError, calls_in, pretty
from engines.suql.plan import DEFAULT_MODE, Mode, Plan, mode_named

if TYPE_CHECKING:
    from engines.settings import Settings

__all__ = [
    "PlanBuilt",
    "Query",
    "QueryFinished",
    "RowDecided",
    "Stats",
    "SuqlEngine",
    "compile_query",
    "SuqlResult",
    "budget_message",
    "resolved_order",
]


@dataclass(frozen=True)
class QueryFinished(Event):
    result: Any = field(repr=False)
    readback: str = ""
    stats: Any = None


# --- results ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stats(Jsonable):
    answer_calls: int
    summary_calls: int
    cached_calls: int
    rows_examined: int
    wall_s: float

    __json__ = JsonShape(rounded={"wall_s": 4})


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
    decided_by: tuple[str, ...] = ()  # mode G: per row, "llm" or "proxy" (a row the proxy matched without a call)

    def records(self) -> list[dict[str, Any]]:
        out = QueryResult("", self.columns, self.rows, False, 0.0).records()
        if self.decided_by:  # mode G: who decided each row (a column of that name keeps its own value)
            name = "decided_by" if "decided_by" not in self.columns else "_decided_by"
            for rec, by in zip(out, self.decided_by):
                rec[name] = by
        return out

    # Hand-written: the rows as records and the rows to verify made JSON-ready, not the tuples it holds.
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


def compile_query(sql: str | Query) -> tuple[exp.Expr, str]:
    """Parse, check and normalise a SUQL query: its tree and its WHERE in DNF (no database work; every engine's
    ``compile``)."""
    tree = language.read(sql).tree
    select = tree if isinstance(tree, exp.Select) else tree.find(exp.Select)
    where = select.args.get("where") if select is not None else None
    if where is None or not calls_in(where.this):
        return tree, pretty(where.this) if where is not None else ""
    conjuncts, _ = to_dnf(where.this)
    return tree, dnf_text(conjuncts)


class SuqlEngine:
    """Runs SUQL on the tables of one sandbox with one LLM."""

    def __init__(
        self,
        sandbox: Sandbox,
        llm: LLM,
        *,
        pool: int = 1,
        cap: int = 20,
        call_budget: int = 2000,
        ranker: str = "static",
        names: RowNames | None = None,
        cascade: tuple[float, float, float, int] = (0.9, 0.9, 0.05, 400),
    ) -> None:
        """``ranker``: the adaptive ranker's embeddings (modes E, F), ``static`` (WordLlama) or ``sentence``
        (all-MiniLM-L6-v2, the optional extra ``sentence``; a ConfigurationError naming it when not installed).
        ``names``: the sandbox's :class:`RowNames` shared with other engines on the same sandbox (its tables are
        then described once for all of them, not once per engine)."""
        self.ranker = check_ranker(ranker)
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
        if names is not None and names.sandbox is not sandbox:
            raise ValueError("names must describe the engine's own sandbox")
        self._names = names if names is not None else RowNames(sandbox)  # rowids, id columns: once per table
        self.cascade = cascade  # mode G: precision and recall targets, delta, sample size

    @classmethod
    def from_settings(cls, sandbox: Sandbox, llm: LLM, settings: Settings, *, pool: int = 1) -> SuqlEngine:
        """The engine bounded by ``settings`` (``suql_cap``, ``suql_call_budget``, ``suql_ranker``)."""
        return cls(
            sandbox,
            llm,
            pool=pool,
            cap=settings.suql_cap,
            call_budget=settings.suql_call_budget,
            ranker=settings.suql_ranker,
            cascade=(
                settings.suql_cascade_precision,
                settings.suql_cascade_recall,
                settings.suql_cascade_delta,
                settings.suql_cascade_sample,
            ),
        )

    @staticmethod
    def parse(sql: str) -> Query:
        """``sql`` parsed and checked once: a :class:`Query` that :meth:`run`, :meth:`estimate_calls` and
        :meth:`compile` take instead of the text, without parsing it again (no database work)."""
        return language.read(sql)

    def compile(self, sql: str | Query) -> tuple[exp.Expr, str]:
        """Parse, check and normalise: the tree and its WHERE in DNF (no database work)."""
        return compile_query(sql)

    def run(
        self,
        sql: str | Query,
        *,
        mode: str | Mode = DEFAULT_MODE,
        emit: Emit = ignore,
        cancel: threading.Event | None = None,
        order_predicates: bool | None = None,
    ) -> SuqlResult:
        """Run ``sql`` (its text, or the :class:`Query` :meth:`parse` read: the text is parsed once either way)."""
        m = mode if isinstance(mode, Mode) else mode_named(mode, cap=self.cap, order_predicates=order_predicates)
        if m.cascade and not isinstance(mode, Mode):  # mode G by name: the engine's targets (a Mode keeps its own)
            m = replace(m, targets=self.cascade[:3], cascade_sample=self.cascade[3])
        started = time.perf_counter()
        query = language.read(sql)
        tree = query.tree
        asker = Asker(self.llm, emit, cancel, self.call_budget, pool=self.pool)
        counter = asker.llm.counter
        before = dict(counter.counts), counter.cached
        state = RunState()
        with ExitStack() as stack:
            ctx = RunContext(
                sandbox=self.sandbox,
                mode=m,
                emit=emit,
                cancel=cancel,
                stack=stack,
                asker=asker,
                names=self._names,
                indexes=self.indexes,
                pool=self.pool,
                state=state,
                ranker=self.ranker,
            )
            try:
                precheck(self.sandbox, tree)
                compiled = Compiled(udf_rewrite(ctx, tree)) if m.udf else compile_statement(ctx, tree, top=True)
                result = self.sandbox.run_tree(compiled.tree)
                if not m.udf:
                    derived_to_verify(ctx, compiled.wide, result)
                decided_by = (
                    proxy_marks(result.rows, self.sandbox.run_tree(state.llm_only).rows) if state.llm_only else ()
                )
            except (Cancelled, EngineError):
                raise
            except RecursionError as e:
                raise SuqlError("The query is nested too deeply to compile.") from e
        counts, cached = counter.counts, counter.cached
        stats = Stats(
            answer_calls=counts.get("answer", 0) - before[0].get("answer", 0),
            summary_calls=counts.get("summary", 0) - before[0].get("summary", 0),
            cached_calls=cached - before[1],
            rows_examined=state.rows_examined,
            wall_s=time.perf_counter() - started,
        )
        try:
            sentence = read_back(tree, types=self.sandbox.column_types(tree))
        except Exception:  # the read-back must never hide a result
            sentence = "I ran your SUQL query."
        out = SuqlResult(
            query=query.text,
            mode=m.name,
            dnf=state.dnf or "",
            plan=state.plan or Plan(m, ""),
            readback=sentence,
            columns=result.columns,
            rows=result.rows,
            to_verify=tuple(state.to_verify),
            approximate=state.approximate,
            truncated=result.truncated,
            stats=stats,
            budget_exhausted=asker.budget_exhausted,
            message=budget_message(self.call_budget) if asker.budget_exhausted else "",
            decided_by=decided_by,
        )
        emit(QueryFinished(out, sentence, stats))
        return out

    def estimate_calls(self, sql: str | Query, mode: str | Mode = DEFAULT_MODE) -> int:
        """An upper bound on the LLM calls ``run(sql, mode=mode)`` can make, without making any
        (:func:`engines.suql.compiler.estimate.estimate_calls`).  A run stops at the budget whatever this says."""
        m = mode if isinstance(mode, Mode) else mode_named(mode, cap=self.cap)
        return estimate_calls(self.sandbox, language.read(sql).tree, m)


def proxy_marks(rows: Sequence[tuple[Any, ...]], llm_rows: Sequence[tuple[Any, ...]]) -> tuple[str, ...]:
    """Mode G: per output row, "llm" when the output without the proxy's rows has it too (as a multiset),
    else "proxy" (the row, or the group's value, depends on a row the proxy matched without a call)."""
    left = Counter(llm_rows)
    out = []
    for r in rows:
        if left[r] > 0:
            left[r] -= 1
            out.append("llm")
        else:
            out.append("proxy")
    return tuple(out)


def budget_message(budget: int) -> str:
    return (
        f"Stopped after {budget:,} LLM calls (the per-query budget, CS224V_SUQL_CALL_BUDGET): the results are partial."
    )
