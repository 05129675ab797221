"""Wikidata-dialect SPARQL over Oxigraph or rdflib's memory store, a user's RDF files or a remote endpoint, with entity pages, search and property examples.

The public surface:

* :class:`Endpoint` — ``execute(query) -> QueryResult`` (one of the four feedbacks of §1.5:
  rows, empty, syntax_error, timeout; refused queries raise :class:`SparqlRefused`; every query
  runs in a killable worker process, see :mod:`engines.kg.worker`), ``close()``,
  ``prepare(query)`` (dialect handling, parse and plan only), ``page(id)``, ``search(text)``,
  ``property_examples(pid)``, ``label(id)``.  Build one with ``Endpoint.from_world(world, store=…)``
  (Oxigraph by default, ``store="memory"`` for rdflib's own) or over a user's RDF files with
  ``Endpoint.from_rdf(paths)`` (:mod:`engines.kg.rdf_files`; the Wikidata dialect only for a graph in
  Wikidata's vocabulary, :mod:`engines.kg.generic_pages` for pages and search otherwise).
* :class:`engines.kg.remote.RemoteEndpoint` — the same interface over a remote SPARQL 1.1 endpoint
  (:mod:`engines.kg.remote_pages` for its pages and search); :func:`engines.kg.sources.open_graph`
  picks the graph from ``--rdf`` / ``--endpoint`` or the settings.
* :func:`open_kg` — the endpoint over the lecture's world, from the settings.

Both local stores answer a query alike, as Wikidata would (:mod:`engines.kg.agreement`): a variable bound
again, a zero-length path from a constant, ``SELECT *``'s columns and a function a store lacks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engines.kg.dialect import Prepared, SparqlRefused, SparqlSyntaxError, prepare
from engines.kg.endpoint import Endpoint, Feedback, QueryResult
from engines.kg.pages import EntityPage, PageClaim, PageValue, PropertyExample, SearchHit, UnknownEntity
from engines.kg.store import DEFAULT_STORE as STORE_DEFAULT
from engines.kg.store import STORES

if TYPE_CHECKING:
    from engines.settings import Settings
    from worlds.kg import KGWorld

__all__ = [
    "Endpoint",
    "Feedback",
    "QueryResult",
    "Prepared",
    "SparqlRefused",
    "SparqlSyntaxError",
    "prepare",
    "EntityPage",
    "PageClaim",
    "PageValue",
    "PropertyExample",
    "SearchHit",
    "UnknownEntity",
    "STORES",
    "STORE_DEFAULT",
    "open_kg",
]


def open_kg(settings: Settings, *, store: str = STORE_DEFAULT, world: KGWorld | None = None) -> Endpoint:
    """The endpoint over the knowledge-graph world (built with its default seed unless given), bounded by
    ``settings`` (``query_timeout_s``, ``row_cap``, ``sparql_memory_limit_mb``).  Which graph a session queries
    (this one, a user's RDF files or a remote endpoint) is :func:`engines.compose.open_graph`'s choice."""
    from worlds import kg

    world = world or kg.build(kg.DEFAULT_SEED).world
    return Endpoint.from_world(
        world,
        store=store,
        timeout_s=settings.query_timeout_s,
        row_cap=settings.row_cap,
        memory_limit_mb=settings.sparql_memory_limit_mb,
    )
