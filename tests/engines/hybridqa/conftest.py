from __future__ import annotations

import pytest

from engines.hybridqa.pipeline import HybridQA
from engines.hybridqa.sim_hybrid import HybridRates
from engines.hybridqa.tasks import HYBRID_PARSE
from engines.llm.client import LLM
from engines.llm.protocol import Output
from engines.llm.sim import SimBackend
from engines.sql.sandbox import Sandbox
from worlds import hybridqa as W

NO_MISTAKES = HybridRates(wrong_column=0, no_result=0, semantic=0, format_rate=0)


@pytest.fixture(scope="session")
def built() -> W.Built:
    return W.build()


@pytest.fixture(scope="session")
def world(built) -> W.GeneratedWorld:
    """The visible world (what engines are handed)."""
    return built.world


@pytest.fixture(scope="session")
def truth(built) -> W.HiddenTruth:
    """The hidden truth of ``world``, apart from it (what evaluators are handed)."""
    return built.truth


@pytest.fixture(scope="session")
def sandbox(world):
    sb = Sandbox.create(world.load)
    yield sb
    sb.close()


def careful_backend() -> SimBackend:
    """A simulated LLM that makes none of its seeded mistakes."""
    b = SimBackend(seed=224, error_on_topic=0, error_off_topic=0)
    b.hybrid_params = NO_MISTAKES
    b.misread_rate = 0
    return b


class Scripted(SimBackend):
    """The simulated LLM, but its parser writes the queries a test gives (one per attempt)."""

    def __init__(self, *queries: str) -> None:
        super().__init__(seed=224, error_on_topic=0, error_off_topic=0)
        self.hybrid_params = NO_MISTAKES
        self.misread_rate = 0
        self.queries = list(queries)
        self.shown: list[tuple[str, ...]] = []

    def run(self, task, input):
        if task is not HYBRID_PARSE:
            return super().run(task, input)
        self.shown.append(tuple(input.failed))
        return Output(self.queries[min(len(input.failed), len(self.queries) - 1)])


@pytest.fixture
def pipeline(sandbox) -> HybridQA:
    return HybridQA(sandbox, LLM(careful_backend()))
