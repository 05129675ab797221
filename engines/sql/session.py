"""Wiring: a restaurant world in a sandbox, an LLM from the settings, and the agent over both.

The app, the CLI and the tests all open the restaurant database through here, so
they run the same engines on the same data.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from engines.llm.client import LLM, llm_from_settings
from engines.settings import Settings
from engines.sql.agent import TextToSQLAgent
from engines.sql.sandbox import Limits, Sandbox
from worlds import restaurants


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
    world = world or restaurants.build(restaurants.DEFAULT_SEED)
    sandbox = Sandbox.create(world.load, row_cap=settings.row_cap, timeout_s=settings.query_timeout_s,
                             limits=Limits.from_settings(settings))
    if suql:
        from engines.suql.agent import SuqlAgent
        from engines.suql.execute import SuqlEngine

        engine = SuqlEngine(sandbox, llm, pool=settings.effective_suql_pool, cap=settings.suql_cap, call_budget=settings.suql_call_budget)
        agent: TextToSQLAgent = SuqlAgent.over(engine, world.schema(), enum_fields=world.enum_fields,
                                               classify_method=settings.classify_method)
    else:
        agent = TextToSQLAgent(
            sandbox=sandbox,
            llm=llm,
            schema=world.schema(),
            enum_fields=world.enum_fields,
            classify_method=settings.classify_method,
        )
    return RestaurantSession(settings, world, sandbox, llm, agent)
