"""Fixtures shared by the engines' tests: the built-in knowledge graph (the kg and spinach tests read it).

Built once per session: :class:`worlds.kg.KGWorld` and its hidden truth are frozen and no test changes them.
tests/engines/hybridqa/conftest.py names its own ``built``/``world`` (the HybridQA world), which win there.
"""

from __future__ import annotations

import pytest

from worlds import kg as K


@pytest.fixture(scope="session")
def built() -> K.Built:
    """The built-in graph of the default seed and its hidden truth."""
    return K.build()


@pytest.fixture(scope="session")
def world(built: K.Built) -> K.KGWorld:
    """The visible graph (what engines are handed)."""
    return built.world
