"""The SUQL compiler as a pipeline of passes, in the shape of sqlglot's optimizer.

Each module holds one idea; a run threads one frozen :class:`~engines.suql.compiler.context.RunContext`
through them (``engines.suql.execute.SuqlEngine.run`` is the public entry and the thin orchestrator):

- ``context``      the frozen run context, the per-SELECT context, and what a run found out (``RunState``);
- ``asker``        the one way an LLM value is asked: once per (function, text, question), within the budget;
- ``kleene``       three-valued AND / OR / NOT, the lazy truth of a predicate, CASE, the WHERE as written;
- ``cost``         the cost model (one dataclass): predicate cost, selectivity from retrieval, re-estimation;
- ``estimate``     an upper bound on a query's calls, without making any;
- ``sqlparts``     small SQL-tree helpers (sources, row keys, literals, ORDER BY resolution);
- ``identity``     what a row is called (rowid, ``_id`` / primary key, a label column);
- ``materialise``  CTEs, subqueries and derived tables with LLM calls into scratch tables, and their wide twins;
- ``visit``        laziness, retrieval scores, the visit order and the cap (mode F);
- ``rows``         the candidate rows, the row loop and its pool;
- ``substitute``   LLM calls replaced by value columns: the final query and the rows to verify;
- ``udf``          the B-duckdb rewrite: LLM calls as DuckDB scalar functions;
- ``precheck``     what is refused before any call (the query binds; answer() reads text);
- ``pipeline``     the passes in order: a statement (set operations, CTEs, subqueries), then each SELECT.

Nothing here imports ``engines.suql.execute``; it imports this package.
"""
