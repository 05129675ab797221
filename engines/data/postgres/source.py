"""A PostgreSQL database as a data source: connect read-only, read the catalog; tables are described lazily.

Opening reads the catalogue alone (:func:`~engines.data.postgres.describe.outline`): ``schema`` starts as the
relations, their columns and types and PostgreSQL's row estimates, no row read.  :meth:`PostgresSource.described`
describes the tables something needs from their data the first time (the parser's schema for a question that
mentions them, :meth:`PostgresSource.described_for`; the schema pane when one is expanded), and keeps them for
the session: ``schema`` then holds them, described.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from engines.data.describe import SchemaDescription, TableInfo
from engines.data.postgres.catalog import _catalog
from engines.data.postgres.connection import _IMPORT_ERROR, _Connection, _message, psycopg, redact
from engines.data.postgres.describe import describe_tables, mentioned, outline
from engines.data.postgres.gate import PostgresGate
from engines.data.postgres.suql import PostgresSuqlEngine
from engines.data.source import DataSource, DataSourceError
from engines.settings import Settings

if TYPE_CHECKING:
    from engines.llm.client import LLM


@dataclass(kw_only=True)
class PostgresSource(DataSource):
    settings: Settings  # what it was opened with
    _described: dict[str, TableInfo] = field(default_factory=dict, repr=False)  # the tables described so far
    _describing: threading.Lock = field(default_factory=threading.Lock, repr=False)

    lazy = True

    def described(self, tables: Iterable[str] | None = None) -> SchemaDescription:
        """The description with ``tables`` (every relation when None) described from their data: each the first
        time it is needed, then kept for the session (``schema`` holds it from then on)."""
        gate = self.gate
        with self._describing:
            names = list(gate.catalog.tables if tables is None else tables)
            if any(n in gate.catalog.tables and n not in self._described for n in names):
                notes = list(self.schema.notes)
                describe_tables(gate, names, self._described, notes)
                self.schema = replace(
                    self.schema,
                    tables=tuple(self._described.get(t.name, t) for t in self.schema.tables),
                    notes=tuple(dict.fromkeys(notes)),
                )
            return self.schema

    def described_for(self, question: str) -> SchemaDescription:
        """The description with the tables ``question`` mentions described (at most a few; every table of a
        database of one)."""
        return self.described(mentioned(question, self.schema))

    def suql_engine(self, llm: LLM, settings: Settings | None = None, *, pool: int = 1) -> PostgresSuqlEngine:
        """SUQL with the structured part on PostgreSQL (:class:`PostgresSuqlEngine`): bounded by ``settings``
        (``suql_cap``, ``suql_call_budget``, ``suql_ranker``; by default the settings the source was opened with),
        its candidate rows by the source's own settings (``postgres_candidate_rows``, ``row_cap``)."""
        s = settings if settings is not None else self.settings
        return PostgresSuqlEngine(
            self.gate,
            llm,
            settings=self.settings,
            pool=pool,
            cap=s.suql_cap,
            call_budget=s.suql_call_budget,
            ranker=s.suql_ranker,
            verify=s.suql_verify,
        )

    @property
    def gate(self) -> PostgresGate:
        """The gate over PostgreSQL (``sandbox``, typed)."""
        gate = self.sandbox
        if not isinstance(gate, PostgresGate):
            raise TypeError(f"{self.name}: not a PostgreSQL gate")
        return gate


def open_postgres(url: str, settings: Settings) -> PostgresSource:
    """Connect (read-only, search_path pg_catalog) and read the catalog of the URL's current schema: its outline,
    no table's rows read (they are described when needed, :meth:`PostgresSource.described`), under ``settings``'
    bounds."""
    if psycopg is None:
        raise DataSourceError(f"PostgreSQL sources need psycopg: pip install 'psycopg[binary]' ({_IMPORT_ERROR}).")
    name = redact(url)
    conn = _Connection(url, settings.query_timeout_s)
    try:
        try:
            catalog = _catalog(conn)
        except psycopg.Error as e:
            raise DataSourceError(f"Could not read the tables of {name}: {_message(e)}") from e
        if not catalog.tables:
            raise DataSourceError(
                f"{name} has no table this user may read in its current schema (set search_path, e.g. "
                "?options=-csearch_path%3Dmyschema, or GRANT SELECT)."
            )
        gate = PostgresGate(conn, catalog, row_cap=settings.row_cap, timeout_s=settings.query_timeout_s)
        schema = outline(catalog, name)
    except BaseException:
        conn.close()
        raise
    return PostgresSource(name, "postgresql", gate, schema, settings=settings)
