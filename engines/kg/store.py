"""The triple store behind the endpoint: rdflib's memory store (default) or Oxigraph through oxrdflib.

``make_graph(triples, store)`` loads triples into an rdflib :class:`~rdflib.Graph` over either
store.  The memory store here is rdflib's own ``Memory`` with one addition: every triple lookup
checks the running query's deadline (:func:`deadline`), so a slow query stops with
:class:`QueryTimeout` instead of running on — rdflib evaluates in pure Python and cannot be
interrupted any other way.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from rdflib import Graph
from rdflib.plugins.stores.memory import Memory

from engines.errors import ConfigurationError

STORES = ("memory", "oxigraph")

_local = threading.local()


class QueryTimeout(Exception):
    """Raised inside a query's evaluation when its deadline passes (internal; becomes a feedback)."""


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Every triple lookup on this thread raises QueryTimeout once ``seconds`` have passed."""
    previous = getattr(_local, "deadline", None)
    _local.deadline = time.monotonic() + seconds
    try:
        yield
    finally:
        _local.deadline = previous


def check_deadline() -> None:
    limit = getattr(_local, "deadline", None)
    if limit is not None and time.monotonic() > limit:
        raise QueryTimeout()


class TimedMemory(Memory):
    """rdflib's memory store, checking the query deadline as it yields triples."""

    def triples(self, triple_pattern: Any, context: Any = None) -> Iterator[Any]:  # type: ignore[override]
        check_deadline()
        for n, found in enumerate(super().triples(triple_pattern, context)):
            if not n & 127:
                check_deadline()
            yield found


def make_graph(triples: Iterable[tuple], store: str = "memory") -> Graph:
    """An rdflib Graph over ``store`` ("memory" or "oxigraph") holding ``triples``."""
    if store == "memory":
        graph = Graph(store=TimedMemory())
        graph.addN((s, p, o, graph) for s, p, o in triples)
        return graph
    if store == "oxigraph":
        graph = Graph(store="Oxigraph")
        graph.addN([(s, p, o, graph) for s, p, o in triples])
        return graph
    raise ConfigurationError(f"Unknown triple store {store!r}: choose one of {', '.join(STORES)}.")


def oxigraph_store(graph: Graph) -> Any:
    """The pyoxigraph ``Store`` under an oxrdflib graph."""
    return graph.store._inner  # type: ignore[attr-defined]
