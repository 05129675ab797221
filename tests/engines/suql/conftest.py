from __future__ import annotations

import pytest

from engines.llm.client import LLM
from engines.llm.sim import SimBackend
from engines.sql.sandbox import Sandbox
from engines.suql.execute import SuqlEngine
from worlds import restaurants as W


@pytest.fixture(scope="session")
def world() -> W.RestaurantWorld:
    return W.build().world


@pytest.fixture(scope="session")
def sandbox(world):
    sb = Sandbox.create(world.load)
    yield sb
    sb.close()


@pytest.fixture
def engine(sandbox) -> SuqlEngine:
    return SuqlEngine(sandbox, LLM(SimBackend(seed=224)))


@pytest.fixture
def careful_engine(sandbox) -> SuqlEngine:
    """An LLM that makes no seeded mistakes: its verdicts are exactly what the text says."""
    return SuqlEngine(sandbox, LLM(SimBackend(seed=224, error_on_topic=0, error_off_topic=0)))
