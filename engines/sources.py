"""The two kinds of source an agent, a console and a browser read: tables and graphs, each behind one interface.

:class:`TableSource` — tables, queried with SQL through a gate: a built-in world loaded into a sandbox
(:class:`engines.data.world_source.WorldSource`), a user's files or DuckDB file (:class:`engines.data.source.DataSource`)
and a PostgreSQL database (:class:`engines.data.postgres.PostgresSource`).  What the Text-to-SQL and SUQL agents
are shown (:meth:`~TableSource.parser_schema`, :attr:`~TableSource.enum_fields`), what the SQL console runs
(:meth:`~TableSource.run_sql`), what the schema pane lists (:attr:`~TableSource.schema`,
:meth:`~TableSource.described`), the SUQL engine over the tables (:meth:`~TableSource.suql_engine`) and the example
queries of the SUQL tab (:meth:`~TableSource.examples`).

:class:`GraphSource` — a graph, queried with SPARQL: the built-in world's store and a user's RDF files
(:class:`engines.kg.endpoint.Endpoint`, Oxigraph or rdflib's memory store) and a remote SPARQL 1.1 endpoint
(:class:`engines.kg.remote.RemoteEndpoint`).  Each query gives one of SPINACH's four feedbacks
(:class:`engines.kg.results.QueryResult`); the entity browser's pages, search and property examples; what the graph
is, for people (:meth:`~GraphSource.describe`).

:class:`SqlGate` and :class:`SuqlRunner` are what a table source hands out: the gate every query passes
(:class:`engines.sql.sandbox.Sandbox`, :class:`engines.data.postgres.PostgresGate`) and the SUQL engine
(:class:`engines.suql.execute.SuqlEngine`, :class:`engines.data.postgres.PostgresSuqlEngine`).

This module sits in the lowest layer of the engines and imports none of them at run time: the types its methods
name are the packages' own, imported for the type checker only.  ``tests/engines/test_sources.py`` checks that
every implementation satisfies its Protocol, at run time and with mypy.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    import threading

    from sqlglot import exp

    from engines.data.describe import SchemaDescription
    from engines.events import Emit
    from engines.kg.dialect import Prepared
    from engines.kg.pages import EntityPage, PropertyExample, SearchHit
    from engines.kg.results import QueryResult as GraphResult
    from engines.kg.sparql import Dialect
    from engines.llm.client import LLM
    from engines.settings import Settings
    from engines.sql.classify import EnumSpec
    from engines.sql.sandbox import QueryResult as SqlResult
    from engines.suql.examples import Example
    from engines.suql.execute import SuqlResult
    from engines.suql.plan import Mode

__all__ = ["TABLE_KINDS", "GraphSource", "SqlGate", "SuqlRunner", "TableKind", "TableSource"]

TableKind = Literal["world", "csv", "tsv", "parquet", "jsonl", "json", "directory", "duckdb", "postgresql"]
TABLE_KINDS: tuple[TableKind, ...] = (
    "world",
    "csv",
    "tsv",
    "parquet",
    "jsonl",
    "json",
    "directory",
    "duckdb",
    "postgresql",
)
"""What a table source is: a built-in world, a file of one of five formats, a folder of them, a DuckDB file, or a
PostgreSQL database."""


@runtime_checkable
class SqlGate(Protocol):
    """The gate every SQL query over a source passes: one checked, read-only SELECT at a time, under the row cap
    and the time limit.  :class:`engines.sql.sandbox.Sandbox` over DuckDB, :class:`engines.data.postgres.PostgresGate`
    over PostgreSQL."""

    def check(self, sql: str) -> exp.Expr: ...

    def run(self, sql: str) -> SqlResult: ...

    def run_tree(self, expression: exp.Expr) -> SqlResult: ...

    def column_types(self, expression: exp.Expr) -> dict[str, str]: ...

    def tables(self) -> Sequence[tuple[str | None, str, Sequence[tuple[str, str]]]]: ...

    def close(self) -> None: ...


@runtime_checkable
class SuqlRunner(Protocol):
    """SUQL over a source's tables: :class:`engines.suql.execute.SuqlEngine` (a DuckDB sandbox) or
    :class:`engines.data.postgres.PostgresSuqlEngine` (the structured part on PostgreSQL)."""

    @property
    def llm(self) -> LLM: ...

    @property
    def sandbox(self) -> SqlGate: ...

    def compile(self, sql: str) -> tuple[exp.Expr, str]: ...

    def run(
        self,
        sql: str,
        *,
        mode: str | Mode = ...,
        emit: Emit = ...,
        cancel: threading.Event | None = ...,
        order_predicates: bool | None = ...,
        verify: str | None = ...,
    ) -> SuqlResult: ...

    def settle(
        self,
        result: SuqlResult,
        rows: Iterable[int] | None = ...,
        *,
        emit: Emit = ...,
        cancel: threading.Event | None = ...,
    ) -> SuqlResult: ...

    def estimate_calls(self, sql: str, mode: str | Mode = ...) -> int: ...


@runtime_checkable
class TableSource(Protocol):
    """Tables queried with SQL: a built-in world, a user's files or DuckDB file, a PostgreSQL database."""

    @property
    def name(self) -> str:
        """What the source is called: the world's name, the path or URL the user gave (without a password)."""
        ...

    @property
    def kind(self) -> TableKind: ...

    @property
    def sandbox(self) -> SqlGate:
        """The gate every query over these tables passes."""
        ...

    @property
    def lazy(self) -> bool:
        """Whether tables are described only when needed (PostgreSQL): :attr:`schema` is what is known so far."""
        ...

    @property
    def schema(self) -> SchemaDescription:
        """The tables as described so far: columns, types, roles, statistics."""
        ...

    @property
    def enum_fields(self) -> Mapping[str, EnumSpec]:
        """The enumerations an agent's ``classify()`` maps the user's words onto."""
        ...

    def parser_schema(self, *, suql: bool = False) -> str:
        """The schema text an agent's parser is shown (with SUQL's answer() and summary() when ``suql``)."""
        ...

    def described(self, tables: Iterable[str] | None = None) -> SchemaDescription:
        """The description with ``tables`` (all when None) described from their data."""
        ...

    def described_for(self, question: str) -> SchemaDescription:
        """The description the parser is shown for ``question``: with the tables it mentions described."""
        ...

    def run_sql(self, sql: str) -> SqlResult:
        """One read-only statement through the gate (refused or failing: a :class:`~engines.sql.sandbox.SqlError`)."""
        ...

    def suql_engine(self, llm: LLM, settings: Settings, *, pool: int = 1) -> SuqlRunner:
        """The SUQL engine over these tables, bounded by ``settings`` (``suql_cap``, ``suql_call_budget``,
        ``suql_ranker``)."""
        ...

    def examples(self) -> tuple[Example, ...]:
        """Queries to start from (the SUQL tab's list)."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class GraphSource(Protocol):
    """A graph queried with SPARQL: the built-in world's store, a user's RDF files, a remote endpoint."""

    @property
    def dialect(self) -> Dialect:
        """What a query may assume: Wikidata's dialect, or standard SPARQL with the graph's own prefixes."""
        ...

    @property
    def wikidata(self) -> bool:
        """Whether the graph speaks Wikidata's vocabulary (QIDs, pages with qualifiers)."""
        ...

    def prepare(self, query: str) -> Prepared:
        """Dialect handling, parse and plan, without running (raises SparqlRefused, SparqlSyntaxError)."""
        ...

    def execute(self, query: str) -> GraphResult:
        """Run ``query`` under the source's own time limit and row cap: one of the four feedbacks."""
        ...

    def query(self, sparql: str, *, timeout_s: float | None = None, row_cap: int | None = None) -> GraphResult:
        """Run ``sparql`` under a tighter time limit or row cap than the source's own (never a looser one)."""
        ...

    def search(self, text: str, *, items: int = 8, properties: int = 4) -> tuple[SearchHit, ...]: ...

    def page(self, entity: str) -> EntityPage: ...

    def property_examples(self, pid: str, n: int = 5) -> tuple[PropertyExample, ...]: ...

    def label(self, iri_or_id: str) -> str | None: ...

    def describe(self) -> str:
        """What the graph is, for people: the built-in world, the RDF files by name, the endpoint's URL."""
        ...

    def close(self) -> None: ...
