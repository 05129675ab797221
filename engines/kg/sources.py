"""Which graph to query: the built-in world, a user's RDF files, or a remote SPARQL endpoint.

    open_graph(settings)                                   # settings.kg_endpoint / kg_rdf, else None
    open_graph(settings, rdf=["my.ttl"])                   # Endpoint over the files (Oxigraph, bulk-loaded;
                                                           # bounded by the settings' rdf_* and sparql_memory_limit_mb)
    open_graph(settings, endpoint="https://query.wikidata.org/sparql")   # RemoteEndpoint

``None`` means "the built-in world" (the caller builds it, with its questions).  Errors are
EngineErrors: :class:`~engines.kg.rdf_files.RdfFileError` for a file, :class:`~engines.kg.remote.RemoteError`
for a URL that cannot be an endpoint.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["open_graph", "REMOTE_TIMEOUT_S"]

REMOTE_TIMEOUT_S = 60.0  # Wikidata's own limit on a query


def open_graph(
    settings: Any,
    *,
    rdf: Sequence[str | Path] | None = None,
    endpoint: str | None = None,
    store: str | None = None,
    timeout_s: float | None = None,
) -> Any:
    """The endpoint over the graph the arguments (else the settings) name, or None for the built-in world."""
    endpoint = endpoint or getattr(settings, "kg_endpoint", None)
    rdf = list(rdf or ()) or (list(getattr(settings, "kg_rdf", ()) or ()) if not endpoint else [])
    if endpoint:
        from engines.kg.remote import RemoteEndpoint

        return RemoteEndpoint(endpoint, timeout_s=timeout_s or REMOTE_TIMEOUT_S, row_cap=settings.row_cap)
    if rdf:
        from engines.kg.endpoint import Endpoint
        from engines.kg.rdf_files import RdfLimits

        return Endpoint.from_rdf(
            rdf,
            store=store or "oxigraph",
            limits=RdfLimits.from_settings(settings),
            timeout_s=settings.query_timeout_s,
            row_cap=settings.row_cap,
            memory_limit_mb=settings.sparql_memory_limit_mb,
        )
    return None
