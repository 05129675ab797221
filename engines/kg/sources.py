"""Which graph to query: the built-in world, a user's RDF files, or a remote SPARQL endpoint.

    open_graph(settings)                                   # settings.kg_endpoint / kg_rdf, else None
    open_graph(settings, rdf=["my.ttl"])                   # Endpoint over the files (Oxigraph, bulk-loaded;
                                                           # bounded by the settings' rdf_* and sparql_memory_limit_mb)
    open_graph(settings, endpoint="https://query.wikidata.org/sparql")   # RemoteEndpoint
    found = read_files(settings, ["my.ttl"])               # the files read and checked, nothing loaded yet
    open_graph(settings, checked=found)                    # then loaded (after a query was parsed with
                                                           # found.dialect(): a bad query costs no load)

``None`` means "the built-in world" (the caller builds it, with its questions).  Errors are
EngineErrors: :class:`~engines.kg.rdf_files.RdfFileError` for a file, :class:`~engines.kg.remote.RemoteError`
for a URL that cannot be an endpoint.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engines.kg.endpoint import EndpointOptions
    from engines.kg.rdf_files import RdfSource
    from engines.settings import Settings
    from engines.sources import GraphSource

__all__ = ["open_graph", "read_files", "REMOTE_TIMEOUT_S"]

REMOTE_TIMEOUT_S = 60.0  # Wikidata's own limit on a query


def open_graph(
    settings: Settings,
    *,
    rdf: Sequence[str | Path] | None = None,
    endpoint: str | None = None,
    store: str | None = None,
    timeout_s: float | None = None,
    checked: RdfSource | None = None,
) -> GraphSource | None:
    """The endpoint over the graph the arguments (else the settings) name, or None for the built-in world.
    ``checked``: a user's RDF files already read and checked (:func:`read_files`), to load."""
    if checked is not None:
        from engines.kg.endpoint import Endpoint

        return Endpoint.from_rdf_source(checked, store=store or "oxigraph", **_local(settings))
    endpoint = endpoint or settings.kg_endpoint
    rdf = list(rdf or ()) or (list(settings.kg_rdf or ()) if not endpoint else [])
    if endpoint:
        from engines.kg.remote import RemoteEndpoint

        return RemoteEndpoint(endpoint, timeout_s=timeout_s or REMOTE_TIMEOUT_S, row_cap=settings.row_cap)
    if rdf:
        from engines.kg.endpoint import Endpoint
        from engines.kg.rdf_files import RdfLimits

        return Endpoint.from_rdf(
            rdf, store=store or "oxigraph", limits=RdfLimits.from_settings(settings), **_local(settings)
        )
    return None


def read_files(settings: Settings, rdf: Sequence[str | Path]) -> RdfSource:
    """A user's RDF files read and checked under the settings' bounds (:func:`~engines.kg.rdf_files.read_rdf`): the
    :class:`~engines.kg.rdf_files.RdfSource` (its prefixes, its dialect), not yet loaded into any store.
    Raises :class:`~engines.kg.rdf_files.RdfFileError`."""
    from engines.kg.rdf_files import RdfLimits, read_rdf

    return read_rdf(list(rdf), RdfLimits.from_settings(settings))


def _local(settings: Settings) -> EndpointOptions:
    """The bounds of a local endpoint's queries, from the settings."""
    return {
        "timeout_s": settings.query_timeout_s,
        "row_cap": settings.row_cap,
        "memory_limit_mb": settings.sparql_memory_limit_mb,
    }
