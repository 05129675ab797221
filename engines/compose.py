"""Composition: the sessions that wire a world, a sandbox, an LLM and engines of several packages.

This is the layer above the Lab and below the app and the CLI (see ``[tool.importlinter]`` in
pyproject.toml).  A session that needs only its own agent package lives there
(``engines.hybridqa.session``, ``engines.spinach.session``); the ones here combine packages:

* :func:`open_restaurants` — the restaurant world in a sandbox with the Text-to-SQL agent, or with
  ``suql=True`` the SUQL agent over the SUQL compiler (packages sql and suql);
* :func:`open_suql` — a SUQL session over one of :data:`WORLDS` (restaurants, courses, the HybridQA
  tables, whose examples come from ``engines.hybridqa``).

No world is built when this module is imported: each world, and the examples drawn from it, is built
when a session first asks for it.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engines.errors import ConfigurationError, EngineError
from engines.llm.client import LLM, llm_from_settings
from engines.settings import Settings
from engines.sql.agent import TextToSQLAgent
from engines.sql.sandbox import Limits, Sandbox
from engines.suql.agent import SuqlAgent
from engines.suql.examples import LECTURE, Example
from engines.suql.execute import SuqlEngine
from worlds import restaurants

# --- the restaurant tab: Text-to-SQL or SUQL over the same world --------------------------------------------


@dataclass
class RestaurantSession:
    settings: Settings
    world: restaurants.RestaurantWorld
    sandbox: Sandbox
    llm: LLM
    agent: TextToSQLAgent

    def close(self) -> None:
        self.sandbox.close()


def open_restaurants(
    settings: Settings | None = None,
    *,
    world: restaurants.RestaurantWorld | None = None,
    clock: Callable[[], float] | None = None,
    suql: bool = False,
) -> RestaurantSession:
    """Build (or reuse) the world, load it into a fresh sandbox and make the agent: the
    Text-to-SQL agent, or with ``suql`` the SUQL agent of lecture 7 §4 (text-only wishes become
    answer() conditions, run by the SUQL compiler in mode E).

    Raises ``ConfigurationError`` when the settings choose a backend that cannot run
    (``claude`` without an API key).
    """
    settings = settings or Settings()
    llm = llm_from_settings(settings, clock=clock or time.perf_counter)
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

    return hybridqa.build()


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

    def schema(self) -> str:
        return self.world.schema()

    def agent(self, mode: str = "E"):
        """A SUQL dialogue agent over this session's world (restaurants)."""
        return SuqlAgent.over(
            self.engine,
            self.world.schema(),
            enum_fields=getattr(self.world, "enum_fields", {}),
            classify_method=self.settings.classify_method,
            mode=mode,
        )

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
        self.sandbox.close()


def open_suql(
    settings: Settings | None = None,
    *,
    world: str = "restaurants",
    clock: Callable[[], float] | None = None,
    pool: int | None = None,
) -> SuqlSession:
    """``pool``: parallel answer() checks; by default the setting when calls take time, else 1
    (with instant calls a pool only makes call counts depend on thread timing)."""
    settings = settings or Settings()
    if pool is None:
        pool = settings.effective_suql_pool
    spec = WORLDS.get(world)
    if spec is None:
        raise ConfigurationError(f"Unknown world {world!r}: choose one of {', '.join(WORLDS)}.")
    llm = llm_from_settings(settings, clock=clock or time.perf_counter)
    data = spec.build()
    sandbox = Sandbox.create(
        data.load, row_cap=settings.row_cap, timeout_s=settings.query_timeout_s, limits=Limits.from_settings(settings)
    )
    engine = SuqlEngine(sandbox, llm, pool=pool, cap=settings.suql_cap, call_budget=settings.suql_call_budget)
    return SuqlSession(settings, world, data, sandbox, llm, engine, spec.examples)
