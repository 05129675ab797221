"""A PostgreSQL database as a data source (``--db postgresql://user@host:port/db``).

The engine never writes to the database, and PostgreSQL never sees text it did not build itself:

* **Read-only.**  Every transaction is ``BEGIN READ ONLY`` (psycopg's ``read_only``) on a session whose
  ``default_transaction_read_only`` is on, and every statement runs under ``statement_timeout`` (the
  ``query_timeout_s`` setting), set with ``set_config()`` and a parameter.  A write that got past every
  other check still fails in PostgreSQL itself (but not one a function makes on another connection, through
  ``dblink``: hence the next two points).  For data you care about, connect as a role that only has
  ``SELECT`` (the README shows how).
* **PostgreSQL's own names.**  The session's first act is ``search_path = pg_catalog, pg_temp``: an
  unqualified function, operator or type resolves to PostgreSQL's own, never to a ``public.lower()`` or an
  ``=`` the database defines (CVE-2018-1058); the engine names the schema's relations with their schema.
* **The gate first.**  What the user (or a model) writes passes the sandbox's gate
  (:func:`engines.sql.sandbox.check`: one SELECT, no statements, no file readers ...) and then this
  module's PostgreSQL rules (:func:`pg_policy`): only the schema's own relations (never ``pg_catalog``
  or ``information_schema``), only PostgreSQL's own functions (``pg_catalog``'s, looked up by OID), and of
  those none that run SQL hidden in a string (``query_to_xml``, ``dblink``, ``ts_stat``), change settings
  (``set_config``) or reach the server's files and processes (``pg_*`` admin functions, ``lo_*``); no
  relation whose reading runs a function the database defines (a view's, a row-level security policy's,
  an index's), no expression over a column whose type has a cast through one, no row locks, no
  parameters of its own.
* **Described without running anything.**  A view is described from the catalogue; only tables' stored
  rows are sampled to describe them (:mod:`~engines.data.postgres.describe`).
* **Built, not pasted.**  Statements are sqlglot trees transpiled to PostgreSQL with every identifier
  quoted; string values become ``$n`` parameters (psycopg's raw cursors send them apart from the text).

Two ways a query runs:

* Plain ``sql``/``ask`` queries run **entirely on PostgreSQL** (:meth:`PostgresGate.run`): an aggregate
  over millions of rows returns one row, not millions.  The result streams through a server-side
  cursor and stops at the row cap.
* SUQL (:class:`PostgresSuqlEngine`): the structured part runs on PostgreSQL — for each base table the
  query reads, :mod:`engines.data.postgres_pushdown` computes the filter every row the query can use
  must pass and the columns it reads; that SELECT streams its candidate rows into a fresh local DuckDB
  sandbox, where the unchanged :class:`engines.suql.execute.SuqlEngine` runs the query: only answer()
  values and the final projection are computed locally, and answer() only ever sees filtered rows.

Whose semantics: a plain query is PostgreSQL's (an enum orders by its labels, text by the database's
collation).  A SUQL query is DuckDB's, exactly as over a DuckDB copy of the same tables: the pushed
filter is written so PostgreSQL never rejects a row DuckDB would keep (enums compared as text, text
order under ``COLLATE "C"``, nothing pushed whose reading differs), and a filter PostgreSQL cannot run
falls back to every row.  In the retrieval modes (E, F) BM25 scores the loaded candidates, so the
visit order can differ from a DuckDB copy's, which indexes the whole table.

The package, one idea a module: :mod:`~engines.data.postgres.connection` (the read-only session, its
settings and errors), :mod:`~engines.data.postgres.catalog` (tables, columns and their DuckDB types),
:mod:`~engines.data.postgres.policy` (what may reach PostgreSQL and how the text sent is built),
:mod:`~engines.data.postgres.gate` (plain queries on the server), :mod:`~engines.data.postgres.candidates`
(SUQL's candidate rows into a local sandbox), :mod:`~engines.data.postgres.suql` (the SUQL engine),
:mod:`~engines.data.postgres.describe` (the schema description) and :mod:`~engines.data.postgres.source`
(:func:`open_postgres`).
"""

from __future__ import annotations

from engines.data.postgres.candidates import CandidatesLoaded, TooManyCandidates
from engines.data.postgres.catalog import PgCatalog, PgColumn, PgTable
from engines.data.postgres.connection import redact
from engines.data.postgres.gate import PostgresGate
from engines.data.postgres.policy import pg_policy
from engines.data.postgres.source import PostgresSource, open_postgres
from engines.data.postgres.suql import PostgresSuqlEngine

__all__ = [
    "CandidatesLoaded",
    "PgCatalog",
    "PgColumn",
    "PgTable",
    "PostgresGate",
    "PostgresSource",
    "PostgresSuqlEngine",
    "TooManyCandidates",
    "open_postgres",
    "pg_policy",
    "redact",
]
