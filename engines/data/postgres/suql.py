"""SUQL over PostgreSQL: the structured part runs on the server, the rest in a local DuckDB sandbox.

Per query, the filter and the columns each base table needs (:func:`candidate_filters`) run on
PostgreSQL, the candidate rows stream into a fresh local sandbox
(:func:`engines.data.postgres.candidates.load_candidates`), and the unchanged
:class:`engines.suql.execute.SuqlEngine` runs the query there: only answer() values and the final
projection are computed locally, and answer() only ever sees filtered rows.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from engines.data.postgres.candidates import CandidatesLoaded, load_candidates
from engines.data.postgres.gate import PostgresGate
from engines.data.postgres_pushdown import TableFilter, candidate_filters
from engines.events import Emit, ignore
from engines.sql.sandbox import Limits, Sandbox

if TYPE_CHECKING:
    from engines.settings import Settings
    from engines.suql.execute import SuqlEngine
    from engines.suql.language import Query

LABEL_COLUMNS = ("name", "Name", "title", "Title", "course_id", "id")  # engines.suql RowNames.label_column


class PostgresSuqlEngine:
    """SUQL over a PostgreSQL source, with the interface of :class:`engines.suql.execute.SuqlEngine`.

    Per query: the structured filter and the columns each table needs (:func:`candidate_filters`) run
    on PostgreSQL, the candidate rows stream into a fresh DuckDB sandbox, and the unchanged SuqlEngine
    runs the query there.  Modes that do not run structured predicates first (A, B, B-duckdb: the
    lecture's baselines) get every row of the tables they read, so their cost stays what they show.
    """

    def __init__(
        self,
        gate: PostgresGate,
        llm: Any,
        *,
        settings: Settings,
        pool: int = 1,
        cap: int = 20,
        call_budget: int = 2000,
        ranker: str = "static",
        verify: str = "eager",
    ):
        """``settings``: the bounds of the candidates' load and of the local sandbox (``postgres_candidate_rows``,
        ``row_cap``, the DuckDB limits)."""
        from engines.retrieval.bm25 import IndexCache
        from engines.suql.compiler.semantic import check_ranker

        self.sandbox = gate
        self.settings = settings
        self.llm = llm
        self.pool = pool
        self.cap = cap
        self.call_budget = call_budget
        self.ranker = check_ranker(ranker)  # the local engine's adaptive ranker (suql_ranker)
        self.verify = verify  # the local engine's verification of rows to verify (suql_verify)
        self.indexes = IndexCache()
        self.last_loads: tuple[CandidatesLoaded, ...] = ()

    def compile(self, sql: str | Query) -> tuple[exp.Expr, str]:
        """Parse, check and normalise, as :meth:`engines.suql.execute.SuqlEngine.compile` does (no database work):
        the tree and its WHERE in DNF."""
        from engines.suql.execute import compile_query

        return compile_query(sql)

    def _local(
        self, sql: str | Query, mode: Any, emit: Emit, cancel: threading.Event | None
    ) -> tuple[SuqlEngine, Sandbox, Query]:
        """The local engine over the candidate rows PostgreSQL returns for ``sql``, read once: the same reading
        (a :class:`~engines.suql.language.Query`) is given to that engine, so the text is parsed once per run."""
        from engines.suql import language
        from engines.suql.execute import SuqlEngine
        from engines.suql.plan import Mode, mode_named

        m = mode if isinstance(mode, Mode) else mode_named(mode, cap=self.cap)
        query = language.read(sql)
        filters = self.filters(query.tree, structured_first=m.structured_first)
        settings = self.settings
        local, loads = load_candidates(
            self.sandbox,
            filters,
            cap=settings.postgres_candidate_rows,
            cancel=cancel,
            limits=Limits.from_settings(settings),
            row_cap=settings.row_cap,
        )
        self.last_loads = tuple(loads)
        for load in loads:
            emit(load)
        engine = SuqlEngine(
            local,
            self.llm,
            pool=self.pool,
            cap=self.cap,
            call_budget=self.call_budget,
            ranker=self.ranker,
            verify=self.verify,
        )
        return engine, local, query

    def filters(self, tree: exp.Expr, *, structured_first: bool = True) -> dict[str, TableFilter]:
        tables = self.sandbox.tables_by_name
        always = [c for t in tables.values() for c in ([t.primary_key] if t.primary_key else [])] + [
            "_id",
            *LABEL_COLUMNS,
        ]
        filters = candidate_filters(
            tree,
            {n: [c.name for c in t.columns] for n, t in tables.items()},
            kinds={n: {c.name: c.kind for c in t.columns} for n, t in tables.items()},
            always=always,
        )
        if not structured_first:
            filters = {k: TableFilter(k, f.columns, None) for k, f in filters.items()}
        return filters

    def run(self, sql: str | Query, *, mode: Any = "E", emit: Emit = ignore, cancel: threading.Event | None = None,
            order_predicates: bool | None = None, verify: str | None = None, settle: frozenset[Any] = frozenset(),
            known: Any = None) -> Any:  # fmt: skip
        engine, local, query = self._local(sql, mode, emit, cancel)
        try:
            return engine.run(
                query,
                mode=mode,
                emit=emit,
                cancel=cancel,
                order_predicates=order_predicates,
                verify=verify,
                settle=settle,
                known=known,
            )
        finally:
            local.close()

    def settle(
        self, result: Any, rows: Any = None, *, emit: Emit = ignore, cancel: threading.Event | None = None
    ) -> Any:
        """:meth:`engines.suql.execute.SuqlEngine.settle`: the candidates are loaded again (the rows are named by
        their ``_id`` or primary key when the tables have one)."""
        from engines.suql.execute import settle_run

        return settle_run(self, result, rows, emit=emit, cancel=cancel)

    def estimate_calls(self, sql: str | Query, mode: Any = "E") -> int:
        engine, local, query = self._local(sql, mode, ignore, None)
        try:
            return engine.estimate_calls(query, mode)
        finally:
            local.close()
