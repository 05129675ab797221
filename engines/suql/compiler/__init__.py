"""The SUQL compiler: a planner of pure passes, in the shape of sqlglot's optimizer, and an executor.

The planner (:mod:`~engines.suql.compiler.passes`, its passes in order in ``PASSES``) turns one SELECT into a
plan: normalise → split conjuncts → push down the structured part → order predicates → plan.  Each pass is a
function from a value (and a ``PlanContext``) to a new value; none changes its input, queries DuckDB or asks
the LLM.  The executor runs what the plan says.  ``engines.suql.execute.SuqlEngine.run`` is the public entry.

- ``records``      the records the modules exchange (a candidate row, a compiled statement) and the events;
- ``kleene``       three-valued AND / OR / NOT, the lazy truth of a predicate, CASE, the WHERE as written;
- ``cost``         the cost model (one dataclass): predicate cost, selectivity from retrieval, re-estimation;
- ``sqlparts``     small SQL-tree helpers (sources, row keys, literals, ORDER BY resolution);
- ``passes``       the planner: the five passes, the values they hand each other, the plan;
- ``asker``        the one way an LLM value is asked: once per (function, text, question), within the budget;
- ``identity``     what a row is called (rowid, ``_id`` / primary key, a label column);
- ``context``      the executor's frozen run context, the per-SELECT context, and what a run found out;
- ``evidence``     what the last passes read: the pushed-down query's candidate rows, their retrieval scores;
- ``rows``         the truth of the WHERE on one row, and the static row loop with its pool;
- ``adaptive``     the row loop of the retrieval modes, which learns from the answers as they arrive;
- ``substitute``   LLM calls replaced by value columns: the final query and the rows to verify;
- ``executor``     runs one SELECT's plan;
- ``materialise``  CTEs, subqueries and derived tables with LLM calls into scratch tables, and their wide twins;
- ``pipeline``     a statement (set operations, CTEs, subqueries), then each SELECT: plan, then execute;
- ``estimate``     an upper bound on a query's calls, without making any;
- ``udf``          the B-duckdb rewrite: LLM calls as DuckDB scalar functions;
- ``precheck``     what is refused before any call (the query binds; answer() reads text);
- ``semantic``     the adaptive ranker's embeddings.

Nothing here imports ``engines.suql.execute``; the modules import each other one way (no cycle: the
``acyclic_siblings`` contract of pyproject.toml).
"""
