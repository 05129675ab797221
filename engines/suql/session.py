"""Worlds the SUQL engine can run on, and the wiring of a session (world, sandbox, LLM, engine)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from engines.errors import ConfigurationError
from engines.llm.client import LLM, llm_from_settings
from engines.settings import Settings
from engines.sql.sandbox import Sandbox
from engines.suql.examples import LECTURE, Example
from engines.suql.execute import SuqlEngine


@dataclass(frozen=True)
class SuqlWorld:
    name: str
    title: str
    build: Callable[[], Any]  # -> a world object with .load(con) and .schema()
    examples: tuple[Example, ...] = ()


def _restaurants():
    from worlds import restaurants

    return restaurants.build()


WORLDS: dict[str, SuqlWorld] = {
    "restaurants": SuqlWorld("restaurants", "600 restaurants (lectures 6-7)", _restaurants, LECTURE),
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
        from engines.suql.agent import SuqlAgent, suql_schema

        return SuqlAgent(
            sandbox=self.sandbox, llm=self.llm, schema=suql_schema(self.world.schema()),
            enum_fields=getattr(self.world, "enum_fields", {}), classify_method=self.settings.classify_method,
            engine=self.engine, mode=mode,
        )

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
        slow = settings.backend == "claude" or settings.sim_latency_s > 0
        pool = settings.suql_pool if slow else 1
    spec = WORLDS.get(world)
    if spec is None:
        raise ConfigurationError(f"Unknown world {world!r}: choose one of {', '.join(WORLDS)}.")
    llm = llm_from_settings(settings, clock=clock or time.perf_counter)
    data = spec.build()
    sandbox = Sandbox.create(data.load, row_cap=settings.row_cap, timeout_s=settings.query_timeout_s)
    engine = SuqlEngine(sandbox, llm, pool=pool, cap=settings.suql_cap)
    return SuqlSession(settings, world, data, sandbox, llm, engine, spec.examples)
