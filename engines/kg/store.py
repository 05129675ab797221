"""The triple store behind the endpoint: rdflib's memory store or Oxigraph (through oxrdflib's Graph).

``make_graph(triples, store)`` loads triples into an rdflib :class:`~rdflib.Graph` over either
store (Oxigraph bulk-loads them: ``Store.bulk_extend``); ``graph_from_rdf`` loads RDF documents.  A graph over
Oxigraph is an :class:`OxigraphGraph`: it keeps the pyoxigraph ``Store`` it hands to oxrdflib (through oxrdflib's
public ``store=`` argument), so the fast paths reach the store without oxrdflib's private attributes.  The memory store here is rdflib's own ``Memory`` with one addition: every triple lookup
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
from rdflib.term import Node

from engines.errors import ConfigurationError

STORES = ("memory", "oxigraph")
DEFAULT_STORE = "oxigraph"  # faster at every size measured (benchmarks/kg_latency.py); memory stays selectable

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


def make_graph(triples: Iterable[tuple[Node, Node, Node]], store: str = "memory") -> Graph:
    """An rdflib Graph over ``store`` ("memory" or "oxigraph") holding ``triples``."""
    if store == "memory":
        graph = Graph(store=TimedMemory())
        graph.addN((s, p, o, graph) for s, p, o in triples)
        return graph
    if store == "oxigraph":
        import pyoxigraph as ox

        ox_graph = OxigraphGraph()
        convert = to_oxigraph
        ox_graph.oxigraph.bulk_extend(ox.Quad(convert(s), convert(p), convert(o)) for s, p, o in triples)
        return ox_graph
    raise ConfigurationError(f"Unknown triple store {store!r}: choose one of {', '.join(STORES)}.")


def to_oxigraph(term: Any) -> Any:
    """An rdflib term as a pyoxigraph term (a literal's lexical form as it is)."""
    import pyoxigraph as ox
    from rdflib import BNode, Literal, URIRef

    if isinstance(term, URIRef):
        return ox.NamedNode(str(term))
    if isinstance(term, BNode):
        return ox.BlankNode(str(term))
    if isinstance(term, Literal):
        if term.language:
            return ox.Literal(str(term), language=term.language)
        if term.datatype is not None:
            return ox.Literal(str(term), datatype=ox.NamedNode(str(term.datatype)))
        return ox.Literal(str(term))
    raise ValueError(f"unsupported RDF term {term!r}")


_XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"


def from_oxigraph(term: Any) -> Any:
    """A pyoxigraph term as an rdflib term, a literal's lexical form exactly as written (a plain
    string stays plain: xsd:string is not added)."""
    import pyoxigraph as ox
    from rdflib import BNode, Literal, URIRef

    if isinstance(term, ox.NamedNode):
        return URIRef(term.value)
    if isinstance(term, ox.BlankNode):
        return BNode(term.value)
    if isinstance(term, ox.Literal):
        if term.language:
            return Literal(term.value, lang=term.language)
        datatype = term.datatype.value
        return Literal(term.value, datatype=None if datatype == _XSD_STRING else URIRef(datatype), normalize=False)
    raise ValueError(f"unsupported RDF term {term!r} (RDF-star triples are not supported)")


def graph_from_rdf(documents: Iterable[tuple[bytes, str]], store: str = "memory") -> Graph:
    """An rdflib Graph over ``store`` holding RDF documents (``(content, media type)``, already
    checked by :func:`engines.kg.rdf_files.read_rdf`).  Oxigraph bulk-loads them; the memory store
    gets them through pyoxigraph's parsers.  Named graphs are read into the one graph."""
    import pyoxigraph as ox

    if store == "oxigraph":
        ox_graph = OxigraphGraph()
        for content, kind in documents:
            ox_graph.oxigraph.bulk_load(content, ox.RdfFormat.from_media_type(kind))
        return ox_graph
    if store == "memory":
        graph = Graph(store=TimedMemory())
        for content, kind in documents:
            graph.addN(
                (from_oxigraph(q.subject), from_oxigraph(q.predicate), from_oxigraph(q.object), graph)
                for q in ox.parse(content, ox.RdfFormat.from_media_type(kind))
            )
        return graph
    raise ConfigurationError(f"Unknown triple store {store!r}: choose one of {', '.join(STORES)}.")


class OxigraphGraph(Graph):
    """An rdflib Graph over Oxigraph whose pyoxigraph ``Store`` we keep ourselves (``oxigraph``): oxrdflib is
    given it through its public ``OxigraphStore(store=...)``, never read back from the plugin's private state."""

    def __init__(self) -> None:
        import pyoxigraph as ox
        from oxrdflib import OxigraphStore

        self.oxigraph: ox.Store = ox.Store()
        super().__init__(store=OxigraphStore(store=self.oxigraph))


def oxigraph_store(graph: Graph) -> Any:
    """The pyoxigraph ``Store`` of a graph over Oxigraph (:class:`OxigraphGraph`), or None for any other graph."""
    return graph.oxigraph if isinstance(graph, OxigraphGraph) else None
