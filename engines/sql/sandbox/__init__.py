"""The SQL gate: the one way SQL written by users or models reaches DuckDB.

Every query goes through the same steps:

1. **Split** — the text is tokenized (sqlglot) and split on ``;``.  More than one
   statement is refused, and so is a statement that starts with a keyword that can
   only begin a non-query (``DROP``, ``ATTACH``, ``COPY``, ``SET``, ``PRAGMA`` ...).
2. **Parse** — with sqlglot, as PostgreSQL first (what users and models write:
   ``'x' = ANY(cuisines)``, ``cuisines @> ARRAY['x']``, ``'2024-01-01'::date``),
   then as DuckDB.  If neither dialect reads it, the query fails with a syntax error
   and a position; it never reaches DuckDB.
3. **Validate** (:func:`validate`, pure) — the tree must be one read-only
   ``SELECT`` (``WITH`` and ``UNION``/``INTERSECT``/``EXCEPT`` included).  Anywhere
   in the tree, it refuses nested statements (``WITH d AS (DELETE ...)``),
   ``SELECT ... INTO``, functions that read files, the network, the environment or
   the configuration or that have side effects (``read_csv``, ``glob``,
   ``getenv``, ``query`` ...), and table names that look like files
   (``FROM '/etc/passwd'``, ``FROM 'x.csv'``).
4. **Transpile** — to DuckDB SQL, without comments.  The result is parsed and
   validated once more, so the check applies to what actually runs, and DuckDB's own
   parser must see exactly one ``SELECT`` in it.
5. **Execute** — on a fresh cursor of a connection opened with
   ``enable_external_access=false`` and locked with ``lock_configuration=true`` once
   the world's data is loaded, so even SQL that slipped past the gate can neither
   reach the file system nor turn access back on.  At most ``row_cap`` rows are
   fetched, and a watchdog interrupts the query after ``timeout_s`` seconds.

Usage::

    sandbox = Sandbox.create(world.load, row_cap=settings.row_cap,
                             timeout_s=settings.query_timeout_s)
    result = sandbox.run("SELECT name FROM restaurants WHERE 'thai' = ANY(cuisines)")
    print(result.columns, result.records())

Errors are :class:`SqlRefused` (the policy said no; nothing ran) and
:class:`SqlFailed` (syntax error, DuckDB error, time-out); both carry ``message``,
``line`` and ``column`` (1-based, in the text held in ``sql``).  No raw DuckDB or
sqlglot exception leaves :meth:`Sandbox.run`.

The package, one idea a module:

* :mod:`~engines.sql.sandbox.gate` — split, parse, check, transpile and the re-check of what runs;
* :mod:`~engines.sql.sandbox.policy` — what the parsed tree may hold (:func:`validate`);
* :mod:`~engines.sql.sandbox.bounds` — size guards on calls that build one huge list or string;
* :mod:`~engines.sql.sandbox.connection` — hardened DuckDB connections and their :class:`Limits`;
* :mod:`~engines.sql.sandbox.opening` — worlds and users' databases attached read-only;
* :mod:`~engines.sql.sandbox.statements` — statements the engine builds itself, checked column types;
* :mod:`~engines.sql.sandbox.scratch` — compilers' scratch tables and functions;
* :mod:`~engines.sql.sandbox.running` — one checked SELECT on a cursor, with its watchdog and row cap;
* :mod:`~engines.sql.sandbox.results` and :mod:`~engines.sql.sandbox.errors`;
* :mod:`~engines.sql.sandbox.core` — the :class:`Sandbox` that ties them together.

Everything public is imported from here: ``from engines.sql.sandbox import Sandbox, SqlRefused``.
"""

from __future__ import annotations

from engines.sql.sandbox.bounds import MAX_LIST_ELEMENTS, MAX_STRING_CHARS, bound
from engines.sql.sandbox.connection import (
    DEFAULT_MEMORY_LIMIT,
    DEFAULT_TEMP_LIMIT,
    DEFAULT_THREADS,
    Limits,
    connect,
    duckdb_limits,
    lock,
)
from engines.sql.sandbox.core import DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S, Sandbox
from engines.sql.sandbox.errors import SqlError, SqlFailed, SqlRefused, SqlTimedOut
from engines.sql.sandbox.gate import DIALECTS, MAX_SQL_CHARS, check, parse, transpile
from engines.sql.sandbox.opening import WORLD_DATABASE, Loader, attach_config, attach_statement
from engines.sql.sandbox.policy import validate
from engines.sql.sandbox.results import QueryResult, to_jsonable
from engines.sql.sandbox.scratch import SCRATCH_CATALOG, SCRATCH_SCHEMA
from engines.sql.sandbox.statements import columns_insert, plain_type

__all__ = [
    "DEFAULT_MEMORY_LIMIT",
    "DEFAULT_ROW_CAP",
    "DEFAULT_TEMP_LIMIT",
    "DEFAULT_THREADS",
    "DEFAULT_TIMEOUT_S",
    "DIALECTS",
    "MAX_LIST_ELEMENTS",
    "MAX_SQL_CHARS",
    "MAX_STRING_CHARS",
    "SCRATCH_CATALOG",
    "SCRATCH_SCHEMA",
    "WORLD_DATABASE",
    "Limits",
    "Loader",
    "QueryResult",
    "Sandbox",
    "SqlError",
    "SqlFailed",
    "SqlRefused",
    "SqlTimedOut",
    "attach_config",
    "attach_statement",
    "bound",
    "check",
    "columns_insert",
    "connect",
    "duckdb_limits",
    "lock",
    "parse",
    "plain_type",
    "to_jsonable",
    "transpile",
    "validate",
]
