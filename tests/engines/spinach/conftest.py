"""Fixtures shared by the SPINACH tests (``built`` and ``world`` come from tests/engines/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engines.kg import Endpoint
from worlds import kg as K


@pytest.fixture(scope="module")
def endpoint(world: K.KGWorld) -> Iterator[Endpoint]:
    """The built-in graph in an Oxigraph store (test_incremental and test_prune use a cached memory store)."""
    ep = Endpoint.from_world(world, store="oxigraph")
    yield ep
    ep.close()


@pytest.fixture(scope="session")
def qsets(built: K.Built) -> K.QuestionSets:
    """The question sets of the built-in graph (frozen: no test changes them)."""
    return K.questions(*built)
