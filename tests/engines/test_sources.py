"""Every source behind its interface (engines/sources.py): each table source and each graph source satisfies its
Protocol, at run time (``isinstance`` on a runtime-checkable Protocol: the members are there) and for mypy
(:func:`_typed`: the signatures agree; :func:`test_mypy_agrees_that_every_source_implements_its_protocol` runs mypy
on this module), and each answers through the Protocol's own methods: the same calls for every source.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from engines.compose import WORLDS, open_graph, open_tables
from engines.data.postgres import PostgresSource, open_postgres
from engines.data.source import DataSource
from engines.data.world_source import WorldSource
from engines.kg.endpoint import Endpoint
from engines.kg.remote import RemoteEndpoint
from engines.kg.results import Feedback
from engines.kg.store import STORES
from engines.llm.client import LLM, llm_from_settings
from engines.settings import Settings
from engines.sources import TABLE_KINDS, GraphSource, SqlGate, SuqlRunner, TableSource
from tests.loopback_http import LoopbackServer, Reply
from tests.pg_server import PgServer, pg_server  # noqa: F401 - the fixture

ROOT = Path(__file__).resolve().parents[2]
TTL = b"""@prefix ex: <http://example.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:ada rdfs:label "Ada" ; ex:knows ex:bob .
ex:bob rdfs:label "Bob" .
"""


def _typed(
    world: WorldSource, data: DataSource, pg: PostgresSource, local: Endpoint, remote: RemoteEndpoint, llm: LLM
) -> None:
    """Never run: mypy checks that each implementation is assignable to its Protocol (the signatures agree)."""
    tables: list[TableSource] = [world, data, pg]
    graphs: list[GraphSource] = [local, remote]
    gates: list[SqlGate] = [world.sandbox, data.sandbox, pg.gate]
    runners: list[SuqlRunner] = [world.suql_engine(llm, Settings()), pg.suql_engine(llm, Settings())]
    del tables, graphs, gates, runners


def sim() -> LLM:
    return llm_from_settings(Settings())


def answers_as_a_table_source(source: object, table: str) -> None:
    """The calls an agent, the SQL console, the schema pane and the SUQL tab make, through the Protocol alone."""
    assert isinstance(source, TableSource)
    assert source.kind in TABLE_KINDS and source.name
    assert isinstance(source.sandbox, SqlGate)
    described = source.described([table])
    assert table in [t.name for t in described.tables]
    assert table in source.parser_schema() and "answer(" in source.parser_schema(suql=True)
    result = source.run_sql(f"SELECT COUNT(*) AS n FROM {table}")
    assert result.columns == ("n",) and result.rows[0][0] > 0
    engine = source.suql_engine(sim(), Settings(suql_cap=3), pool=1)
    assert isinstance(engine, SuqlRunner)
    assert engine.run(f"SELECT * FROM {table} LIMIT 2").rows
    assert isinstance(source.examples(), tuple)


def test_a_built_in_world_is_a_table_source() -> None:
    source = open_tables(Settings(), world="courses")
    try:
        assert isinstance(source, WorldSource) and source.kind == "world" and source.name == "courses"
        answers_as_a_table_source(source, "courses")
        assert source.examples() == WORLDS["courses"].examples
    finally:
        source.close()


def test_a_file_is_a_table_source(tmp_path: Path) -> None:
    path = tmp_path / "pets.csv"
    path.write_text("name,kind,age\nRex,dog,3\nTom,cat,5\nMia,cat,2\n")
    source = open_tables(Settings(), db=str(path))
    try:
        assert isinstance(source, DataSource) and source.kind == "csv"
        answers_as_a_table_source(source, "pets")
    finally:
        source.close()
    assert path.read_bytes() == b"name,kind,age\nRex,dog,3\nTom,cat,5\nMia,cat,2\n"  # read, never written


def test_a_duckdb_file_is_a_table_source(tmp_path: Path) -> None:
    path = tmp_path / "shop.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE items AS SELECT i AS id, 'thing ' || i AS label FROM range(5) t(i)")
    con.close()
    source = open_tables(Settings(), db=str(path))
    try:
        assert source.kind == "duckdb"
        answers_as_a_table_source(source, "items")
    finally:
        source.close()


def test_postgresql_is_a_table_source(pg_server: PgServer) -> None:  # noqa: F811 - the fixture imported above
    url = pg_server.create_database("cs224v_sources")
    with pg_server.admin("cs224v_sources") as con:
        con.execute("CREATE TABLE notes (id integer PRIMARY KEY, kind text, body text)")
        con.execute("INSERT INTO notes VALUES (1, 'a', 'Friendly staff.'), (2, 'b', 'Slow.'), (3, 'a', 'Kind.')")
    source = open_postgres(url, Settings())
    try:
        assert isinstance(source, PostgresSource) and source.kind == "postgresql" and source.lazy
        answers_as_a_table_source(source, "notes")
        # the engine it builds is bounded by the settings given, the ranker included
        engine = source.suql_engine(sim(), Settings(suql_cap=2, suql_call_budget=7), pool=1)
        assert (engine.cap, engine.call_budget) == (2, 7)
    finally:
        source.close()


# --- graphs ---------------------------------------------------------------------------------------------------


def answers_as_a_graph_source(graph: object, select: str) -> None:
    """The calls the SPARQL console, the agent and the entity browser make, through the Protocol alone."""
    assert isinstance(graph, GraphSource)
    assert graph.dialect is not None and isinstance(graph.wikidata, bool)
    result = graph.execute(select)
    assert result.feedback == Feedback.ROWS and len(result.rows()) == 2
    capped = graph.query(select, row_cap=1)
    assert len(capped.rows()) == 1 and capped.truncated
    assert graph.describe()


@pytest.mark.parametrize("store", STORES)
def test_a_local_store_is_a_graph_source(store: str) -> None:
    triples = [
        ("http://example.org/ada", "http://www.w3.org/2000/01/rdf-schema#label", "Ada"),
        ("http://example.org/bob", "http://www.w3.org/2000/01/rdf-schema#label", "Bob"),
    ]
    from rdflib import Literal, URIRef

    graph = Endpoint.from_triples([(URIRef(s), URIRef(p), Literal(o)) for s, p, o in triples], store=store)
    try:
        answers_as_a_graph_source(graph, "SELECT ?s ?l WHERE { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?l }")
    finally:
        graph.close()


def test_rdf_files_are_a_graph_source_without_the_built_in_world(tmp_path: Path, monkeypatch) -> None:
    from worlds import kg

    def no_world(*_a: object, **_k: object) -> None:
        raise AssertionError("the built-in world was built for a user's files")

    monkeypatch.setattr(kg, "build", no_world)
    path = tmp_path / "people.ttl"
    path.write_bytes(TTL)
    graph = open_graph(Settings(), rdf=[path])
    try:
        assert isinstance(graph, Endpoint) and "people.ttl" in graph.describe()
        answers_as_a_graph_source(graph, "SELECT ?s ?l WHERE { ?s rdfs:label ?l }")
        assert graph.search("Ada")
    finally:
        graph.close()
    assert path.read_bytes() == TTL


class SparqlJson(LoopbackServer):
    """A SPARQL endpoint on 127.0.0.1 answering every query with two rows."""

    name = "sources-sparql"

    def handle(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Reply:
        body = {
            "head": {"vars": ["s"]},
            "results": {
                "bindings": [{"s": {"type": "uri", "value": f"http://example.org/{n}"}} for n in ("ada", "bob")]
            },
        }
        return Reply(body, content_type="application/sparql-results+json")


def test_a_remote_endpoint_is_a_graph_source_without_the_built_in_world(monkeypatch) -> None:
    from worlds import kg

    def no_world(*_a: object, **_k: object) -> None:
        raise AssertionError("the built-in world was built for a remote endpoint")

    monkeypatch.setattr(kg, "build", no_world)
    server = SparqlJson()
    try:
        graph = open_graph(Settings(), endpoint=server.url + "/sparql", timeout_s=10.0)
        try:
            assert isinstance(graph, RemoteEndpoint) and server.url in graph.describe()
            answers_as_a_graph_source(graph, "SELECT ?s WHERE { ?s ?p ?o }")
        finally:
            graph.close()
    finally:
        server.close()


def test_the_settings_graph_is_the_console_s_without_the_built_in_world(tmp_path: Path, monkeypatch) -> None:
    """The app's graph (settings kg_rdf) is what open_graph opens; the built-in world is never built for it."""
    from worlds import kg

    def no_world(*_a: object, **_k: object) -> None:
        raise AssertionError("the built-in world was built for the settings' files")

    monkeypatch.setattr(kg, "build", no_world)
    path = tmp_path / "people.ttl"
    path.write_bytes(TTL)
    graph = open_graph(Settings(kg_rdf=(path,)))
    try:
        assert isinstance(graph, GraphSource) and "people.ttl" in graph.describe()
    finally:
        graph.close()


# mypy reads the sources, the Protocols and the modules whose types their signatures name; every other engines module
# and the big third-party packages are skipped (their names are Any), which keeps this check to a few seconds.
# The pydantic plugin reads Settings.
CHECKED = (
    "engines.sources",
    "engines.settings",
    "engines.errors",
    "engines.events",
    "engines.data.source",
    "engines.data.world_source",
    "engines.data.postgres.source",
    "engines.data.postgres.gate",
    "engines.data.postgres.suql",
    "engines.data.describe",
    "engines.kg.endpoint",
    "engines.kg.remote",
    "engines.kg.results",
    "engines.kg.pages",
    "engines.kg.sparql",
    "engines.kg.dialect",
    "engines.sql.sandbox",
    "engines.sql.sandbox.*",
    "engines.sql.classify",
    "engines.suql.execute",
    "engines.suql.plan",
    "engines.suql.examples",
    "engines.llm.client",
)
SKIPPED = "sqlglot rdflib duckdb pyoxigraph httpx httpcore psycopg anthropic openai numpy pandas tree_sitter tree_sitter_sparql oxrdflib pyarrow"
MYPY_CONFIG = f"""[mypy]
plugins = pydantic.mypy
follow_imports = silent
ignore_missing_imports = True
[mypy-engines.*]
follow_imports = skip
[mypy-{",".join(CHECKED)}]
follow_imports = silent
[mypy-{",".join(f"{p}.*" for p in SKIPPED.split())},textual.*,rich.*,pytest.*,_pytest.*]
follow_imports = skip
"""


def test_mypy_agrees_that_every_source_implements_its_protocol(tmp_path: Path) -> None:
    """mypy on this module (its :func:`_typed` assigns each implementation to its Protocol), engines/sources.py and
    engines/data/world_source.py.  The modules of :data:`CHECKED` are read for their types, their own errors not
    reported (the types part of issue 27 checks them); an assignment of a source that does not fit fails here."""
    pytest.importorskip("mypy")
    config = tmp_path / "mypy.ini"
    config.write_text(MYPY_CONFIG)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(config),
            "--no-error-summary",
            "--cache-dir",
            str(tmp_path / "cache"),
            "engines/sources.py",
            "engines/data/world_source.py",
            "tests/engines/test_sources.py",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_agent_session_and_sparql_once_on_a_user_s_files_build_no_world(tmp_path: Path, monkeypatch) -> None:
    """The KG tab's session over the settings' files (the agent and the console on one GraphSource) and the CLI's
    one query (sparql_once) take the same path, open_graph, and neither builds the built-in world."""
    from engines.compose import open_spinach, sparql_once
    from worlds import kg

    def no_world(*_a: object, **_k: object) -> None:
        raise AssertionError("the built-in world was built for a user's files")

    monkeypatch.setattr(kg, "build", no_world)
    path = tmp_path / "people.ttl"
    path.write_bytes(TTL)
    settings = Settings(kg_rdf=(path,))
    session = open_spinach(settings)
    try:
        assert session.world is None and isinstance(session.endpoint, GraphSource)
        assert "people.ttl" in session.endpoint.describe()
    finally:
        session.close()
    result = sparql_once(Settings(), "SELECT ?s WHERE { ?s rdfs:label ?l }", rdf=[path])
    assert result.feedback == Feedback.ROWS and len(result.rows()) == 2
