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
from collections.abc import Iterable, Sequence
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
from engines.suql.compiler.asker import Asker, Known
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
    "VERIFY_MODES",
    "settle_run",
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
    verification_calls: int = 0  # of the calls, those asked of rows whose WHERE was already Unknown (settling)

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
    verify: str = "eager"  # how rows to verify were verified: "eager" (in full) or "lazy" (VERIFY_MODES)
    unsettled: int = 0  # rows to verify listed without asking their other conditions (lazy): may shrink
    # the row key of each row to verify, and the answers the run has: what SuqlEngine.settle starts from
    to_verify_keys: tuple[Any, ...] = field(default=(), repr=False, compare=False)
    known: Known | None = field(default=None, repr=False, compare=False)
    decided_by: tuple[str, ...] = ()  # mode G: per row, "llm" or "proxy" (a row the proxy matched without a call)

    @property
    def settled(self) -> bool:
        """Are the rows to verify exactly those eager verification lists?  (False: a superset, until settled.)"""
        return self.unsettled == 0

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
            "verify": self.verify,
            "settled": self.settled,
            "unsettled": self.unsettled,
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
        verify: str = "eager",
        cascade: tuple[float, float, float, int] = (0.9, 0.9, 0.05, 400),
        indexes: IndexCache | None = None,
    ) -> None:
        """``ranker``: the adaptive ranker's embeddings (modes E, F), ``static`` (WordLlama) or ``sentence``
        (all-MiniLM-L6-v2, the optional extra ``sentence``; a ConfigurationError naming it when not installed).
        ``names``: the sandbox's :class:`RowNames` shared with other engines on the same sandbox (its tables are
        then described once for all of them, not once per engine).  ``verify``: how :meth:`run` verifies the
        rows whose WHERE is Unknown by default, ``eager`` (every condition asked: the rows to verify are
        exact) or ``lazy`` (a row stops at its first Unknown condition; :meth:`settle` asks the rest).
        ``indexes``: BM25 indexes shared with other engines on the same sandbox (its data does not change under
        them), so a table's whole-table index is built once for all of them."""
        self.ranker = check_ranker(ranker)
        self.verify = check_verify(verify)
        if pool < 1:
            raise ValueError("pool must be at least 1")
        if call_budget < 1:
            raise ValueError("call_budget must be at least 1")
        self.call_budget = call_budget
        self.sandbox = sandbox
        self.llm = llm
        self.pool = pool
        self.cap = cap
        self.indexes = indexes if indexes is not None else IndexCache()
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
            verify=settings.suql_verify,
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
        verify: str | None = None,
        settle: frozenset[Any] = frozenset(),
        known: Known | None = None,
    ) -> SuqlResult:
        """Run ``sql`` (its text, or the :class:`Query` :meth:`parse` read: the text is parsed once either way).

        ``verify``: ``eager`` or ``lazy`` (default: the engine's).  Lazily, a row whose WHERE can no longer be
        True stops at its first Unknown condition and is listed to verify unsettled, except the rows whose key
        is in ``settle``; ``known``: the answers an earlier run of the same query has (asked again for free).
        :meth:`settle` uses both."""
        m = mode if isinstance(mode, Mode) else mode_named(mode, cap=self.cap, order_predicates=order_predicates)
        how = self.verify if verify is None else check_verify(verify)
        if m.cascade and not isinstance(mode, Mode):  # mode G by name: the engine's targets (a Mode keeps its own)
            m = replace(m, targets=self.cascade[:3], cascade_sample=self.cascade[3])
        started = time.perf_counter()
        query = language.read(sql)
        tree = query.tree
        asker = Asker(self.llm, emit, cancel, self.call_budget, pool=self.pool, known=known)
        asker.settling = known is not None  # settling: every call it makes verifies a row
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
                verify=how,
                settle=settle,
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
            verification_calls=asker.verification_calls,
        )
        try:
            sentence = read_back(tree, types=self.sandbox.column_types(tree))
        except Exception:  # the read-back must never hide a result
            sentence = "I ran your SUQL query."
        out = SuqlResult(
            query=query.text,
            mode=m.name,
            dnf=state.dnf or "",
            plan=with_verification(state.plan or Plan(m, ""), how, state.unsettled, stats),
            readback=sentence,
            columns=result.columns,
            rows=result.rows,
            to_verify=tuple(state.to_verify),
            approximate=state.approximate,
            truncated=result.truncated,
            stats=stats,
            budget_exhausted=asker.budget_exhausted,
            message=budget_message(self.call_budget) if asker.budget_exhausted else "",
            verify=how,
            unsettled=state.unsettled,
            to_verify_keys=tuple(state.to_verify_keys),
            known=asker.known(),
            decided_by=decided_by,
        )
        emit(QueryFinished(out, sentence, stats))
        return out

    def settle(
        self,
        result: SuqlResult,
        rows: Iterable[int] | None = None,
        *,
        emit: Emit = ignore,
        cancel: threading.Event | None = None,
    ) -> SuqlResult:
        """Settle the rows to verify of ``result`` (a lazy run of this engine): ``rows`` (positions in
        ``result.to_verify``) or all of them (``None``): their remaining conditions are asked, the rest of the
        query runs again over the answers ``result`` has (no call repeated).  With every row settled it returns
        what the eager run returns: the same rows, rows to verify and answers.  Its stats count the calls
        settling made, every one a verification call."""
        return settle_run(self, result, rows, emit=emit, cancel=cancel)

    def estimate_calls(self, sql: str | Query, mode: str | Mode = DEFAULT_MODE) -> int:
        """An upper bound on the LLM calls ``run(sql, mode=mode)`` can make, without making any
        (:func:`engines.suql.compiler.estimate.estimate_calls`).  A run stops at the budget whatever this says."""
        m = mode if isinstance(mode, Mode) else mode_named(mode, cap=self.cap)
        return estimate_calls(self.sandbox, language.read(sql).tree, m)


VERIFY_MODES = ("lazy", "eager")


def settle_run(
    runner: Any,
    result: SuqlResult,
    rows: Iterable[int] | None,
    *,
    emit: Emit = ignore,
    cancel: threading.Event | None = None,
) -> SuqlResult:
    """:meth:`SuqlEngine.settle` for any engine whose ``run`` takes ``verify``, ``settle`` and ``known``."""
    if result.known is None:
        raise SuqlError("This result cannot be settled: it does not carry its run's answers.")
    if rows is None:
        chosen: frozenset[Any] = frozenset()
        how = "eager"
    else:
        keys = result.to_verify_keys
        chosen = frozenset(keys[i] for i in rows if 0 <= i < len(keys) and keys[i] is not None)
        how = result.verify
    settled: SuqlResult = runner.run(
        result.query,
        mode=result.plan.mode,
        emit=emit,
        cancel=cancel,
        verify=how,
        settle=chosen,
        known=result.known,
    )
    return settled


def check_verify(verify: str) -> str:
    if verify not in VERIFY_MODES:
        raise SuqlError(f"Unknown verification {verify[:20]!r}: choose lazy or eager.")
    return verify


def with_verification(plan: Plan, verify: str, unsettled: int, stats: Stats) -> Plan:
    """The plan, with what verification did: the rows left unsettled (lazy), the calls spent verifying."""
    notes: list[str] = []
    if verify == "lazy" and unsettled:
        notes.append(
            "verify lazy: a row whose WHERE can no longer be True stops at its first Unknown condition; "
            f"{unsettled} row(s) to verify not yet settled: the list may shrink when verified"
        )
    if stats.verification_calls:
        notes.append(f"verification: {stats.verification_calls} of the calls asked rows already Unknown")
    return replace(plan, notes=tuple(plan.notes) + tuple(notes)) if notes else plan


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
