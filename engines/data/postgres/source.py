"""A PostgreSQL database as a data source: connect read-only, read the catalog, describe it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engines.data.postgres.catalog import _catalog
from engines.data.postgres.connection import _IMPORT_ERROR, _Connection, _message, psycopg, redact
from engines.data.postgres.describe import _describe
from engines.data.postgres.gate import PostgresGate
from engines.data.postgres.suql import PostgresSuqlEngine
from engines.data.source import DataSource, DataSourceError
from engines.settings import Settings


@dataclass
class PostgresSource(DataSource):
    settings: Settings = field(default_factory=Settings)

    def __post_init__(self) -> None:
        if self.make_engine is None:  # engines.compose builds the SUQL engine through this

            def make_engine(llm: Any, settings: Settings | None = None, *, pool: int = 1) -> PostgresSuqlEngine:
                s = settings or self.settings
                return PostgresSuqlEngine(
                    self, llm, pool=pool, cap=s.suql_cap, call_budget=s.suql_call_budget, ranker=s.suql_ranker
                )

            self.make_engine = make_engine

    def suql_engine(self, llm: Any, *, pool: int = 1, cap: int = 20, call_budget: int = 2000) -> PostgresSuqlEngine:
        return PostgresSuqlEngine(self, llm, pool=pool, cap=cap, call_budget=call_budget)


def open_postgres(url: str, settings: Settings | None = None) -> PostgresSource:
    """Connect (read-only, search_path pg_catalog), read the catalog of the URL's current schema and describe it."""
    settings = settings or Settings()
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
        schema = _describe(gate, name)
    except BaseException:
        conn.close()
        raise
    return PostgresSource(name, "postgresql", gate, schema, settings=settings)
