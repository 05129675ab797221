"""Composition: the sessions that wire a world, a sandbox, an LLM and engines of several packages.

This is the layer above the Lab and below the app and the CLI (see ``[tool.importlinter]`` in
pyproject.toml).  A session that needs only its own agent package lives there
(``engines.hybridqa.session``, ``engines.spinach.session``); the ones here combine packages:

* :func:`open_restaurants` — the restaurant world in a sandbox with the Text-to-SQL agent, or with
  ``suql=True`` the SUQL agent over the SUQL compiler (packages sql and suql);
* :func:`open_suql` — a SUQL session over one of :data:`WORLDS` (restaurants, courses, the HybridQA
  tables, whose examples come from ``engines.hybridqa``);
* both with ``source=`` — the same over a user's own data (:func:`engines.data.source.open_source`):
  the schema the parser is shown and the enumerations classify() uses come from the engine's own
  description of the data, and the sim backend reads it with its generic reader, without the seeded
  mistakes it makes on the lecture's worlds (on unknown data a seeded "Yes" would be a claim from nothing).

No world is built when this module is imported: each world, and the examples drawn from it, is built
when a session first asks for it.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engines.data.source import DataSource, agent_schema, open_source
from engines.errors import ConfigurationError, EngineError
from engines.llm.client import LLM, llm_from_settings
from engines.settings import Settings
from engines.sql.agent import TextToSQLAgent
from engines.sql.sandbox import Limits, Sandbox
from engines.suql.agent import SuqlAgent
from engines.suql.compiler.semantic import check_ranker
from engines.suql.examples import LECTURE, Example
from engines.suql.execute import SuqlEngine
from worlds import restaurants

# --- the restaurant tab: Text-to-SQL or SUQL over the same world --------------------------------------------


@dataclass
class RestaurantSession:
    settings: Settings
    world: Any  # restaurants.RestaurantWorld, or the DataSource of a user's own data
    sandbox: Sandbox
    llm: LLM
    agent: TextToSQLAgent
    source: DataSource | None = None  # a user's own data (then ``world`` is it too)

    def close(self) -> None:
        if self.source is not None:
            self.source.close()
        else:
            self.sandbox.close()


# The sim's seeded mistakes model an LLM's error rates on the lecture's worlds; on a user's own data the
# generic reader makes none (its weakness is what it cannot read, never a Yes from nothing).
OWN_DATA_SIM = {"error_on_topic": 0.0, "error_off_topic": 0.0, "parse_drop_rate": 0.0, "misread_rate": 0.0}


def _own_llm(settings: Settings, clock: Callable[[], float] | None) -> LLM:
    extra = OWN_DATA_SIM if settings.backend == "sim" else {}
    return llm_from_settings(settings, clock=clock or time.perf_counter, **extra)


def _source(source: DataSource | str, settings: Settings) -> DataSource:
    return source if isinstance(source, DataSource) else open_source(source, settings)


def _own_engine(data: DataSource, llm: LLM, settings: Settings, pool: int) -> SuqlEngine:
    if data.make_engine is not None:  # the source runs the structured part itself (PostgreSQL)
        return data.make_engine(llm, settings, pool=pool)
    return SuqlEngine(
        data.sandbox,
        llm,
        pool=pool,
        cap=settings.suql_cap,
        call_budget=settings.suql_call_budget,
        ranker=settings.suql_ranker,
    )


def open_source_agent(
    source: DataSource | str,
    settings: Settings | None = None,
    *,
    clock: Callable[[], float] | None = None,
    suql: bool = False,
) -> RestaurantSession:
    """The Text-to-SQL agent (or with ``suql`` the SUQL agent) over a user's own data: a path or
    ``postgresql://`` URL (opened here, closed with the session) or an opened :class:`DataSource`
    (closed with the session too)."""
    settings = settings or Settings()
    data = _source(source, settings)
    try:
        llm = _own_llm(settings, clock)
        description = data.schema
        if suql:
            engine = _own_engine(data, llm, settings, settings.effective_suql_pool)
            agent: TextToSQLAgent = SuqlAgent(
                sandbox=data.sandbox,
                llm=llm,
                schema=description.render(suql=True),  # answer()/summary() and the free-text columns described
                enum_fields=description.enum_fields,
                classify_method=settings.classify_method,
                engine=engine,
                schema_for=agent_schema(data, suql=True),  # PostgreSQL: the tables a question mentions, described
            )
        else:
            agent = TextToSQLAgent(
                sandbox=data.sandbox,
                llm=llm,
                schema=description.render(),
                enum_fields=description.enum_fields,
                classify_method=settings.classify_method,
                schema_for=agent_schema(data),
            )
    except BaseException:
        data.close()
        raise
    return RestaurantSession(settings, data, data.sandbox, llm, agent, source=data)


def open_restaurants(
    settings: Settings | None = None,
    *,
    world: restaurants.RestaurantWorld | None = None,
    clock: Callable[[], float] | None = None,
    suql: bool = False,
    source: DataSource | str | None = None,
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
    settings = settings or Settings()
    llm = llm_from_settings(settings, clock=clock or time.perf_counter)
    if suql:
        check_ranker(settings.suql_ranker)  # before the sandbox is opened
    world = world or restaurants.build(restaurants.DEFAULT_SEED).world
    sandbox = Sandbox.create(
        world.load, row_cap=settings.row_cap, timeout_s=settings.query_timeout_s, limits=Limits.from_settings(settings)
    )
    if suql:
        engine = SuqlEngine(
            sandbox,
            llm,
            pool=settings.effective_suql_pool,
            cap=settings.suql_cap,
            call_budget=settings.suql_call_budget,
            ranker=settings.suql_ranker,
        )
        agent: TextToSQLAgent = SuqlAgent.over(
            engine, world.schema(), enum_fields=world.enum_fields, classify_method=settings.classify_method
        )
    else:
        agent = TextToSQLAgent(
            sandbox=sandbox,
            llm=llm,
            schema=world.schema(),
            enum_fields=world.enum_fields,
            classify_method=settings.classify_method,
        )
    return RestaurantSession(settings, world, sandbox, llm, agent)


# --- the SUQL tab: the compiler over one of several worlds ---------------------------------------------------


@dataclass(frozen=True)
class SuqlWorld:
    name: str
    title: str
    build: Callable[[], Any]  # -> a world object with .load(con) and .schema()
    example_source: Callable[[], tuple[Example, ...]] = tuple

    @property
    def examples(self) -> tuple[Example, ...]:
        """The world's example queries (built on first use: some are drawn from the world itself)."""
        return self.example_source()


def _restaurants():
    return restaurants.build().world  # the visible world only: a session never holds the hidden truth


def _courses():
    from worlds import courses

    return courses.build()


def _hybridqa():
    from worlds import hybridqa

    return hybridqa.build().world  # the visible tables only: the SUQL tab never holds the hidden truth


@functools.cache
def _hybridqa_examples() -> tuple[Example, ...]:
    from engines.hybridqa.examples import type_examples

    return type_examples(_hybridqa())


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
    "restaurants": SuqlWorld("restaurants", "600 restaurants (lectures 6-7)", _restaurants, lambda: LECTURE),
    "courses": SuqlWorld("courses", "the course assistant's C1-C6 (notes 002-003)", _courses, lambda: COURSE_EXAMPLES),
    "hybridqa": SuqlWorld(
        "hybridqa",
        "50 flag-bearer tables with linked passages (HybridQA, lecture 7 §2.3, §6)",
        _hybridqa,
        _hybridqa_examples,
    ),
}


@dataclass
class SuqlSession:
    settings: Settings
    world_name: str
    world: Any
    sandbox: Sandbox
    llm: LLM
    engine: SuqlEngine
    examples: tuple[Example, ...] = field(default_factory=tuple)
    source: DataSource | None = None  # a user's own data (then ``world`` is it too)

    def schema(self) -> str:
        if self.source is not None:
            return self.source.schema.render(suql=True)
        return self.world.schema()

    def agent(self, mode: str = "E"):
        """A SUQL dialogue agent over this session's world (restaurants) or data source."""
        if self.source is not None:
            description = self.source.schema
            return SuqlAgent(
                sandbox=self.sandbox,
                llm=self.llm,
                schema=description.render(suql=True),
                enum_fields=description.enum_fields,
                classify_method=self.settings.classify_method,
                engine=self.engine,
                mode=mode,
                schema_for=agent_schema(self.source, suql=True),
            )
        agent = SuqlAgent.over(
            self.engine,
            self.world.schema(),
            enum_fields=getattr(self.world, "enum_fields", {}),
            classify_method=self.settings.classify_method,
            mode=mode,
        )
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
        if self.source is not None:
            self.source.close()
        else:
            self.sandbox.close()


def open_suql(
    settings: Settings | None = None,
    *,
    world: str = "restaurants",
    clock: Callable[[], float] | None = None,
    pool: int | None = None,
    source: DataSource | str | None = None,
) -> SuqlSession:
    """``pool``: parallel answer() checks; by default the setting when calls take time, else 1
    (with instant calls a pool only makes call counts depend on thread timing).

    ``source``: a user's own data (a path, a ``postgresql://`` URL or an opened :class:`DataSource`,
    closed with the session) instead of ``world``; its examples are made from the description of the data."""
    settings = settings or Settings()
    check_ranker(settings.suql_ranker)  # a ranker that cannot run fails before anything is opened
    if pool is None:
        pool = settings.effective_suql_pool
    if source is not None:
        from engines.data.examples import examples_for

        data = _source(source, settings)
        try:
            llm = _own_llm(settings, clock)
            engine = _own_engine(data, llm, settings, pool)
        except BaseException:
            data.close()
            raise
        examples = examples_for(data.schema, data.sandbox)
        return SuqlSession(settings, data.name, data, data.sandbox, llm, engine, examples, source=data)
    spec = WORLDS.get(world)
    if spec is None:
        raise ConfigurationError(f"Unknown world {world!r}: choose one of {', '.join(WORLDS)}.")
    llm = llm_from_settings(settings, clock=clock or time.perf_counter)
    data = spec.build()
    sandbox = Sandbox.create(
        data.load, row_cap=settings.row_cap, timeout_s=settings.query_timeout_s, limits=Limits.from_settings(settings)
    )
    engine = SuqlEngine(
        sandbox,
        llm,
        pool=pool,
        cap=settings.suql_cap,
        call_budget=settings.suql_call_budget,
        ranker=settings.suql_ranker,
    )
    return SuqlSession(settings, world, data, sandbox, llm, engine, spec.examples)
