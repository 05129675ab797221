"""Composition: every session the app and the CLI open, built from the settings and the sources.

This is the layer above the Lab and below the facade (:mod:`engines.api`), the app and the CLI (see
``[tool.importlinter]`` in pyproject.toml).  Sources come first, each behind its interface
(:mod:`engines.sources`):

* :func:`open_tables` — a :class:`~engines.sources.TableSource`: a user's own data (``--db``: files, a DuckDB
  file, PostgreSQL; :func:`engines.data.source.open_source`) or one of the built-in worlds of :data:`WORLDS` in a
  fresh sandbox (:class:`engines.data.world_source.WorldSource`);
* :func:`open_graph` — a :class:`~engines.sources.GraphSource`: a remote endpoint or a user's RDF files (given, or
  the settings' ``kg_endpoint`` / ``kg_rdf``), else the built-in world's graph, built only then.  The SPARQL
  console runs on this, and so does ``cs224v-tui sparql`` (:func:`sparql_once`): one path for SPARQL.

Then the sessions over them:

* :func:`open_restaurants` / :func:`open_source_agent` — the Text-to-SQL agent, or with ``suql=True`` the SUQL agent
  over the SUQL compiler, over the restaurants or a user's data (packages sql, suql, data);
* :func:`open_suql` — a SUQL session over one of :data:`WORLDS` or a user's data;
* :func:`open_spinach`, :func:`open_hybridqa`, :func:`open_courses_agent` — the sessions of one agent package
  (built in :mod:`engines.spinach.session`, :mod:`engines.hybridqa.session` and :mod:`engines.courses`, where the
  Lab uses them too), re-exported here so the app and the CLI find every session in one place.

On a user's own data, the schema the parser is shown and the enumerations classify() uses come from the engine's
own description of the data, and the sim backend reads it with its generic reader, without the seeded mistakes it
makes on the lecture's worlds (on unknown data a seeded "Yes" would be a claim from nothing).

No world is built when this module is imported: each world, and the examples drawn from it, is built when a
session first asks for it.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engines.data.source import agent_schema, open_source
from engines.data.world_source import World, WorldSource
from engines.errors import ConfigurationError, EngineError
from engines.llm.client import LLM, llm_from_settings
from engines.settings import Settings
from engines.sources import GraphSource, SqlGate, SuqlRunner, TableSource
from engines.sql.agent import TextToSQLAgent
from engines.suql.agent import SuqlAgent
from engines.suql.compiler.semantic import check_ranker
from engines.suql.examples import LECTURE, Example
from worlds import restaurants

if TYPE_CHECKING:
    from engines.courses import CourseSession, open_courses_agent
    from engines.hybridqa.session import HybridSession, open_hybridqa
    from engines.kg.rdf_files import RdfSource
    from engines.kg.results import QueryResult as GraphResult
    from engines.kg.sparql import Dialect
    from engines.spinach.session import SpinachSession, open_spinach
    from engines.sql.classify import EnumSpec

__all__ = [
    "COURSE_EXAMPLES",
    "OWN_DATA_SIM",
    "WORLDS",
    "arguments_graph",
    "CourseSession",
    "HybridSession",
    "RestaurantSession",
    "SpinachSession",
    "SuqlSession",
    "SuqlWorld",
    "open_courses_agent",
    "open_graph",
    "open_hybridqa",
    "open_restaurants",
    "open_source_agent",
    "open_spinach",
    "open_suql",
    "open_tables",
    "sparql_once",
    "table_agent",
]

# The sessions of one agent package, re-exported: imported when first asked for (the KG and HybridQA packages load
# rdflib, the graph workers and the readers, which a session over tables never needs).
_PACKAGE_SESSIONS = {
    "CourseSession": "engines.courses",
    "open_courses_agent": "engines.courses",
    "HybridSession": "engines.hybridqa.session",
    "open_hybridqa": "engines.hybridqa.session",
    "SpinachSession": "engines.spinach.session",
    "open_spinach": "engines.spinach.session",
}


def __getattr__(name: str) -> Any:
    module = _PACKAGE_SESSIONS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)  # at each import: the package's attribute is the truth


# --- tables: the built-in worlds, or a user's own data ---------------------------------------------------


def _no_enums(world: Any) -> Mapping[str, EnumSpec]:
    return {}


@dataclass(frozen=True)
class SuqlWorld:
    name: str
    title: str
    build: Callable[[], World]  # the visible world only (a session never holds a world's hidden truth)
    example_source: Callable[[], tuple[Example, ...]] = tuple
    enums: Callable[[Any], Mapping[str, EnumSpec]] = _no_enums  # the enumerations an agent over it classifies

    @property
    def examples(self) -> tuple[Example, ...]:
        """The world's example queries (built on first use: some are drawn from the world itself)."""
        return self.example_source()

    def open(self, settings: Settings, world: World | None = None) -> WorldSource:
        """The world (built now unless given) in a fresh sandbox, as a :class:`~engines.sources.TableSource`."""
        world = world if world is not None else self.build()
        return WorldSource.open(self.name, world, settings, enum_fields=self.enums(world), examples=self.example_source)


def _restaurants() -> restaurants.RestaurantWorld:
    return restaurants.build().world  # the visible world only: a session never holds the hidden truth


def _restaurants_large() -> restaurants.RestaurantWorld:
    return restaurants.build(n=restaurants.LARGE).world  # mode G's larger world: the same generator, 5,000 rows


def _restaurant_enums(world: Any) -> Mapping[str, EnumSpec]:
    return dict(world.enum_fields)


def _courses() -> World:
    from worlds import courses

    return courses.build()


def _hybridqa() -> World:
    from worlds import hybridqa

    return hybridqa.build().world  # the visible tables only: the SUQL tab never holds the hidden truth


@functools.cache
def _hybridqa_examples() -> tuple[Example, ...]:
    from engines.hybridqa.examples import type_examples
    from worlds import hybridqa

    return type_examples(hybridqa.build().world)


COURSE_EXAMPLES: tuple[Example, ...] = (
    Example(
        "autumn courses with no conflicting meeting (NOT EXISTS)",
        "SELECT o.course_id FROM offerings AS o WHERE o.term = 'autumn' AND NOT EXISTS (SELECT 1 FROM meetings AS m "
        "JOIN busy AS b ON m.day = b.day WHERE m.offering_id = o.id AND m.start_min < b.end_min AND b.start_min < m.end_min) ORDER BY 1",
        "note 003",
    ),
    Example(
        "is it practical? (Unknown is not No)",
        "SELECT course_id, answer(reviews, 'is it practical?') AS practical FROM course_reviews ORDER BY course_id",
        "note 002",
    ),
    Example(
        "(autumn and practical) or exactly C4",
        "SELECT DISTINCT o.course_id FROM offerings o JOIN course_reviews r ON r.course_id = o.course_id "
        "WHERE (o.term = 'autumn' AND answer(r.reviews, 'is it practical?') = 'Yes') OR o.course_id = 'C4' ORDER BY 1",
        "note 002",
    ),
    Example(
        "join fan-out: review rows are not courses",
        "SELECT COUNT(*) AS review_rows, COUNT(DISTINCT c.id) AS courses FROM courses c JOIN reviews r ON r.course_id = c.id",
        "note 003",
    ),
    Example(
        "prerequisites in three states",
        "SELECT p.course_id, p.prerequisite_id, COALESCE(c.status::VARCHAR, 'unknown') AS status FROM prerequisites p "
        "LEFT JOIN completed c ON c.course_id = p.prerequisite_id ORDER BY 1, 2",
        "note 003",
    ),
)


WORLDS: dict[str, SuqlWorld] = {
    "restaurants": SuqlWorld(
        "restaurants", "600 restaurants (lectures 6-7)", _restaurants, lambda: LECTURE, _restaurant_enums
    ),
    "restaurants-5000": SuqlWorld(
        "restaurants-5000",
        "5,000 restaurants from the same generator (mode G's cascade pays on many candidates)",
        _restaurants_large,
        lambda: LECTURE,
        _restaurant_enums,
    ),
    "courses": SuqlWorld("courses", "the course assistant's C1-C6 (notes 002-003)", _courses, lambda: COURSE_EXAMPLES),
    "hybridqa": SuqlWorld(
        "hybridqa",
        "50 flag-bearer tables with linked passages (HybridQA, lecture 7 §2.3, §6)",
        _hybridqa,
        _hybridqa_examples,
    ),
}


def open_tables(settings: Settings, *, db: TableSource | str | None = None, world: str = "restaurants") -> TableSource:
    """The tables a session reads: the user's data (``db``: a path, a ``postgresql://`` URL, or a source already
    opened) or else the built-in world ``world`` of :data:`WORLDS`, loaded into a fresh sandbox.  Raises
    ``DataSourceError`` for data that cannot be opened, ``ConfigurationError`` for an unknown world."""
    if db is not None:
        return open_source(db, settings) if isinstance(db, str) else db
    spec = WORLDS.get(world)
    if spec is None:
        raise ConfigurationError(f"Unknown world {world!r}: choose one of {', '.join(WORLDS)}.")
    return spec.open(settings)


# --- agents over tables: the Restaurants (agent) tab and ``ask`` -------------------------------------------


# The sim's seeded mistakes model an LLM's error rates on the lecture's worlds; on a user's own data the
# generic reader makes none (its weakness is what it cannot read, never a Yes from nothing).
OWN_DATA_SIM = {"error_on_topic": 0.0, "error_off_topic": 0.0, "parse_drop_rate": 0.0, "misread_rate": 0.0}


def _llm(settings: Settings, clock: Callable[[], float] | None, *, own_data: bool) -> LLM:
    extra: dict[str, Any] = OWN_DATA_SIM if own_data and settings.backend == "sim" else {}
    return llm_from_settings(settings, clock=clock or time.perf_counter, **extra)


def table_agent(
    tables: TableSource,
    llm: LLM,
    settings: Settings,
    *,
    engine: SuqlRunner | None = None,
    mode: str = "E",
) -> TextToSQLAgent:
    """The Text-to-SQL agent over ``tables``, or with ``engine`` the SUQL agent (lecture 7 §4: text-only wishes
    become answer() conditions, run by ``engine`` in ``mode``): shown the source's schema text and enumerations
    (for a source described lazily, those of the tables each question mentions)."""
    if engine is not None:
        return SuqlAgent(
            sandbox=tables.sandbox,
            llm=llm,
            schema=tables.parser_schema(suql=True),
            enum_fields=tables.enum_fields,
            classify_method=settings.classify_method,
            engine=engine,
            mode=mode,
            schema_for=agent_schema(tables, suql=True),
        )
    return TextToSQLAgent(
        sandbox=tables.sandbox,
        llm=llm,
        schema=tables.parser_schema(),
        enum_fields=tables.enum_fields,
        classify_method=settings.classify_method,
        schema_for=agent_schema(tables),
    )


class _OverTables:
    """What a session over a :class:`TableSource` derives from it: its gate, and the user's data (if any)."""

    tables: TableSource

    @property
    def sandbox(self) -> SqlGate:
        return self.tables.sandbox

    @property
    def source(self) -> TableSource | None:
        """A user's own data (None over a built-in world)."""
        return None if self.tables.kind == "world" else self.tables


@dataclass
class RestaurantSession(_OverTables):
    settings: Settings
    tables: TableSource  # the world's tables or the user's data, behind one interface
    llm: LLM
    agent: TextToSQLAgent
    world: object  # the built-in world (restaurants.RestaurantWorld), or the user's data source

    def close(self) -> None:
        self.tables.close()


def open_source_agent(
    source: TableSource | str,
    settings: Settings,
    *,
    clock: Callable[[], float] | None = None,
    suql: bool = False,
) -> RestaurantSession:
    """The Text-to-SQL agent (or with ``suql`` the SUQL agent) over a user's own data: a path or
    ``postgresql://`` URL (opened here, closed with the session) or an opened source (closed with the session
    too)."""
    tables = open_tables(settings, db=source)
    try:
        llm = _llm(settings, clock, own_data=True)
        engine = tables.suql_engine(llm, settings, pool=settings.effective_suql_pool) if suql else None
        agent = table_agent(tables, llm, settings, engine=engine)
    except BaseException:
        tables.close()
        raise
    return RestaurantSession(settings, tables, llm, agent, tables)


def open_restaurants(
    settings: Settings,
    *,
    world: restaurants.RestaurantWorld | None = None,
    clock: Callable[[], float] | None = None,
    suql: bool = False,
    source: TableSource | str | None = None,
) -> RestaurantSession:
    """Build (or reuse) the world, load it into a fresh sandbox and make the agent: the
    Text-to-SQL agent, or with ``suql`` the SUQL agent of lecture 7 §4 (text-only wishes become
    answer() conditions, run by the SUQL compiler in mode E).  With ``source``, the same over a
    user's own data instead of the restaurants (:func:`open_source_agent`).

    Raises ``ConfigurationError`` when the settings choose a backend that cannot run
    (``claude`` without an API key), ``DataSourceError`` when the source cannot be opened.
    """
    if source is not None:
        return open_source_agent(source, settings, clock=clock, suql=suql)
    llm = _llm(settings, clock, own_data=False)
    if suql:
        check_ranker(settings.suql_ranker)  # before the sandbox is opened
    world = world or restaurants.build(restaurants.DEFAULT_SEED).world
    tables = WORLDS["restaurants"].open(settings, world)
    try:
        engine = tables.suql_engine(llm, settings, pool=settings.effective_suql_pool) if suql else None
        agent = table_agent(tables, llm, settings, engine=engine)
    except BaseException:
        tables.close()
        raise
    return RestaurantSession(settings, tables, llm, agent, world)


# --- the SUQL tab and ``suql``: the compiler over one of several worlds, or a user's data ----------------------


@dataclass
class SuqlSession(_OverTables):
    settings: Settings
    world_name: str
    tables: TableSource  # the world's tables or the user's data, behind one interface
    world: object  # the built-in world, or the user's data source
    llm: LLM
    engine: SuqlRunner
    examples: tuple[Example, ...] = field(default_factory=tuple)

    def schema(self) -> str:
        """The schema the SUQL tab shows: a world's own text (the lecture's), a user's data with SUQL's functions and
        its free-text columns described."""
        return self.tables.parser_schema(suql=self.source is not None)

    def agent(self, mode: str = "E") -> TextToSQLAgent:
        """A SUQL dialogue agent over this session's world (restaurants) or data source."""
        agent = table_agent(self.tables, self.llm, self.settings, engine=self.engine, mode=mode)
        if self.world_name == "courses":  # the course world's simulated route, parse and respond
            from engines.courses.tasks import COURSE_TASKS

            agent.tasks = COURSE_TASKS
        return agent

    def calls_to_confirm(self, query: str, mode: str) -> int | None:
        """With a paid backend, the expected (upper-bound) number of LLM calls of ``query`` in ``mode`` when
        it exceeds ``suql_confirm_calls``: the run should wait for the user's consent.  ``None`` when it may
        run (the sim, the threshold 0, few calls, or a query whose errors the run itself will report)."""
        if self.settings.backend == "sim" or self.settings.suql_confirm_calls <= 0:
            return None
        try:
            expected = self.engine.estimate_calls(query, mode)
        except EngineError:
            return None
        return expected if expected > self.settings.suql_confirm_calls else None

    def close(self) -> None:
        self.tables.close()


def open_suql(
    settings: Settings,
    *,
    world: str = "restaurants",
    clock: Callable[[], float] | None = None,
    pool: int | None = None,
    source: TableSource | str | None = None,
) -> SuqlSession:
    """``pool``: parallel answer() checks; by default the setting when calls take time, else 1
    (with instant calls a pool only makes call counts depend on thread timing).

    ``source``: a user's own data (a path, a ``postgresql://`` URL or an opened source, closed with the session)
    instead of ``world``; its examples are made from the description of the data."""
    check_ranker(settings.suql_ranker)  # a ranker that cannot run fails before anything is opened
    if pool is None:
        pool = settings.effective_suql_pool
    if source is not None:
        tables = open_tables(settings, db=source)
        try:
            llm = _llm(settings, clock, own_data=True)
            engine = tables.suql_engine(llm, settings, pool=pool)
            examples = tables.examples()
        except BaseException:
            tables.close()
            raise
        return SuqlSession(settings, tables.name, tables, tables, llm, engine, examples)
    spec = WORLDS.get(world)
    if spec is None:
        raise ConfigurationError(f"Unknown world {world!r}: choose one of {', '.join(WORLDS)}.")
    llm = _llm(settings, clock, own_data=False)
    opened = spec.open(settings)
    try:
        engine = opened.suql_engine(llm, settings, pool=pool)
        examples = opened.examples()
    except BaseException:
        opened.close()
        raise
    return SuqlSession(settings, world, opened, opened.world, llm, engine, examples)


# --- graphs: the SPARQL console, the entity browser, ``sparql`` ------------------------------------------------


def open_graph(
    settings: Settings,
    *,
    rdf: Sequence[str | Path] | None = None,
    endpoint: str | None = None,
    store: str | None = None,
    timeout_s: float | None = None,
    checked: RdfSource | None = None,
) -> GraphSource:
    """The graph the SPARQL console, the entity browser and ``sparql`` query: ``endpoint`` (a remote SPARQL 1.1
    endpoint, ``timeout_s`` a query) or ``rdf`` (a user's files; ``checked``: already read and checked), else the
    settings' ``kg_endpoint`` / ``kg_rdf``, else the built-in world's graph on ``store`` — the world built only
    then.  Raises ``RdfFileError`` for files that cannot be used, ``RemoteError`` for a URL that is not an
    endpoint."""
    from engines.kg import sources

    theirs = sources.open_graph(settings, rdf=rdf, endpoint=endpoint, store=store, timeout_s=timeout_s, checked=checked)
    if theirs is not None:
        return theirs
    import engines.kg  # looked up at each call: the built-in world's graph is built here and only here

    return engines.kg.open_kg(settings, store=store or engines.kg.STORE_DEFAULT)


def arguments_graph(settings: Settings) -> Settings:
    """``settings`` without the app's graph (``kg_endpoint``, ``kg_rdf``): a command queries the graph its own
    arguments name (``--rdf``, ``--endpoint``), else the built-in world."""
    if settings.kg_endpoint is None and not settings.kg_rdf:
        return settings
    return settings.model_copy(update={"kg_endpoint": None, "kg_rdf": ()})


def sparql_once(
    settings: Settings,
    query: str,
    *,
    rdf: Sequence[str | Path] | None = None,
    endpoint: str | None = None,
    store: str | None = None,
    timeout_s: float | None = None,
) -> GraphResult:
    """One query on the graph :func:`open_graph` opens, parsed and planned before any store is built or loaded:
    with the built-in world's dialect (its memory store takes seconds to build); on ``rdf`` files with the dialect
    their check found (read and checked first: that gives their prefixes and whether Wikidata's vocabulary is on),
    so a malformed or refused query costs no load; a remote ``endpoint`` parses every query before it sends it.
    The graph the arguments name, else the built-in world: the settings' ``kg_endpoint`` / ``kg_rdf`` are the
    app's (:func:`arguments_graph`).  The graph is closed after.  Raises SparqlRefused, ``RdfFileError``,
    ``RemoteError``."""
    settings = arguments_graph(settings)
    if endpoint:
        graph = open_graph(settings, endpoint=endpoint, timeout_s=timeout_s)
    elif rdf:
        from engines.kg.sources import read_files

        found = read_files(settings, rdf)
        result = _parse_first(query, settings.query_timeout_s, found.dialect())
        if result is not None:
            return result
        graph = open_graph(settings, checked=found, store=store)
    else:
        result = _parse_first(query, settings.query_timeout_s)
        if result is not None:
            return result
        graph = open_graph(settings, store=store)
    try:
        return graph.execute(query)
    finally:
        graph.close()


def _parse_first(query: str, timeout_s: float, dialect: Dialect | None = None) -> GraphResult | None:
    """``query`` parsed and planned in a worker holding no graph (with ``dialect``: the built-in world's, Wikidata's,
    unless given), before any store is built or loaded: the result of a query that cannot run, or None.
    Raises SparqlRefused."""
    from engines.kg import Feedback, QueryResult, SparqlRefused, SparqlSyntaxError
    from engines.kg.worker import PrepareFailed, WorkerUnavailable, parse_worker, prepared_from

    worker = parse_worker(dialect)
    try:
        prepared = prepared_from(worker.prepare(query, timeout_s), query, timeout_s)
    except WorkerUnavailable:
        return None  # the graph's own run says why
    except SparqlSyntaxError as e:
        return QueryResult(query, Feedback.SYNTAX_ERROR, message=str(e))
    except PrepareFailed as e:
        return QueryResult(query, Feedback.TIMEOUT if e.timed_out else Feedback.SYNTAX_ERROR, message=str(e))
    finally:
        worker.close()
    if prepared.unsupported:
        raise SparqlRefused(prepared.unsupported)
    return None
