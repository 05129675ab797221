"""The SPARQL endpoint: Wikidata's dialect over an rdflib graph, answering with one of four feedbacks.

SPINACH (§1.5, paper §4.1) names the four things executing a query can tell you: rows, no rows,
a syntax error, a timeout.  :meth:`Endpoint.execute` returns exactly one of them as a
:class:`QueryResult`; a query the endpoint will not run at all (an update, ``LOAD``, a remote
``SERVICE``, ``FROM``, …: decided on the plan, see :mod:`engines.kg.dialect`) raises
:class:`~engines.kg.dialect.SparqlRefused` instead.  Every query runs under a timeout and a row
cap, in a worker process (:mod:`engines.kg.worker`) that is killed at the deadline, capped in
memory and cut off from the network and the file system; a worker that dies (an Oxigraph panic)
is an error result, and the next query starts a new one.  Literals come back exactly as stored (``2023-01-01T00:00:00Z``
stays that), in the SPARQL 1.1 JSON results format.

Usage::

    endpoint = Endpoint.from_world(kg.build().world)        # Oxigraph; store="memory" for rdflib's own
    result = endpoint.execute("SELECT ?m ?mLabel WHERE { ?m wdt:P31 wd:Q1007 . "
                              'SERVICE wikibase:label { bd:serviceParam wikibase:language "en". } }')
    result.feedback, result.columns, result.records()
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from rdflib import Graph

from engines.kg import dialect as _dialect
from engines.kg.dialect import Prepared, SparqlRefused, SparqlSyntaxError
from engines.kg.prefixes import entity_id
from engines.kg.results import (
    Binding,
    Feedback,
    QueryResult,
    columns_of,
    results_from_json,
    term_json,
    tighter_bounds,
)
from engines.kg.store import DEFAULT_STORE, OxigraphGraph, make_graph
from engines.kg.worker import PrepareFailed, QueryWorker, Triple, WorkerUnavailable, prepared_from

if TYPE_CHECKING:
    from engines.kg.generic_pages import GenericBrowser
    from engines.kg.pages import Browser, EntityPage, PropertyExample, SearchHit
    from engines.kg.rdf_files import RdfLimits, RdfSource


class EndpointOptions(TypedDict, total=False):
    """The bounds and options an endpoint is built with (:class:`Endpoint`'s keyword arguments of the same names),
    passed on by its ``from_*`` constructors."""

    timeout_s: float
    row_cap: int
    clock: Callable[[], float]
    cache_size: int
    memory_limit_mb: int | None
    isolate_network: bool


DEFAULT_MEMORY_LIMIT_MB = 2048
"""The query worker's address-space cap when the endpoint is given none: the default of the setting
``sparql_memory_limit_mb`` (what the settings say is passed in by :mod:`engines.compose`)."""

__all__ = [
    "Binding",
    "Endpoint",
    "EndpointOptions",
    "Feedback",
    "QueryResult",
    "SparqlRefused",
    "SparqlSyntaxError",
    "columns_of",
    "results_from_json",
    "term_json",
]


class Endpoint:
    """Wikidata-dialect SPARQL over one graph.  Thread-safe for queries."""

    def __init__(
        self,
        graph: Graph | None,
        *,
        store: str = DEFAULT_STORE,
        timeout_s: float = 5.0,
        row_cap: int = 10_000,
        clock: Callable[[], float] = time.perf_counter,
        cache_size: int = 256,
        memory_limit_mb: int | None = None,
        isolate_network: bool = True,
        triples: Callable[[], Iterable[Triple]] | None = None,
        dialect: _dialect.Dialect | None = None,
        rdf: Callable[[], list[tuple[bytes, str]]] | None = None,
        source: str = "",
        graph_factory: Callable[[], Graph] | None = None,
        load_timeout_s: float | None = None,
    ) -> None:
        """``cache_size``: results kept per query text (the graph is read-only; most of a query's
        cost is parsing it, and agents repeat queries); 0 turns the cache off (benchmarks).

        Queries run in a worker process (:mod:`engines.kg.worker`) holding a copy of the graph:
        ``memory_limit_mb`` caps its address space (default :data:`DEFAULT_MEMORY_LIMIT_MB`, the setting
        ``sparql_memory_limit_mb``'s default);
        ``isolate_network`` puts it in a network namespace of its own where the OS allows (only
        tests switch it off, to show the checks hold without it); ``triples`` gives the statements
        the worker loads (by default the graph's own, read back); ``rdf`` instead gives RDF
        documents the worker bulk-loads.  ``dialect``: Wikidata's unless given (a user's graph
        that does not use Wikidata's vocabulary gets standard SPARQL with its own prefixes).
        ``source`` says what the graph is, for people.  ``graph`` None: ``graph_factory`` builds it
        in this process on first use (pages and search; queries never need it).
        ``load_timeout_s``: the deadline of loading the graph into the worker (default 300 s)."""
        self._graph = graph
        self._graph_factory = graph_factory
        self._graph_lock = threading.Lock()
        self.load_timeout_s = load_timeout_s
        self.dialect = dialect or _dialect.WIKIDATA
        self._rdf = rdf
        self.source = source
        self.cache_size = cache_size
        self._results: OrderedDict[str, QueryResult] = OrderedDict()
        self._cache_lock = threading.Lock()
        self.store = store
        self.timeout_s = timeout_s
        self.row_cap = row_cap
        self.clock = clock
        self._labels: dict[str, str] | None = None
        self._browser: Browser | GenericBrowser | None = None
        self._lock = threading.Lock()
        self.memory_limit_mb = memory_limit_mb
        self.isolate_network = isolate_network
        self._worker: QueryWorker | None = None
        self._triples = triples
        self._finalizer: weakref.finalize[[], Endpoint] | None = None
        self.rdf_source: RdfSource | None = None  # the user's RDF files it was made from (their dialect, prefixes)

    @classmethod
    def from_triples(
        cls,
        triples: Iterable[Triple],
        *,
        store: str = DEFAULT_STORE,
        source: Callable[[], Iterable[Triple]] | None = None,
        **kwargs: Unpack[EndpointOptions],
    ) -> Endpoint:
        """An endpoint over ``triples``; ``source``, if given, produces them again for the worker
        (otherwise they are kept)."""
        if source is None:
            kept = tuple(triples)
            triples, source = kept, (lambda: kept)
        return cls(make_graph(triples, store), store=store, triples=source, **kwargs)

    @classmethod
    def from_world(cls, world: Any, *, store: str = DEFAULT_STORE, **kwargs: Unpack[EndpointOptions]) -> Endpoint:
        """An endpoint over a :class:`worlds.kg.KGWorld` (its graph only; never its hidden truth)."""
        from worlds.kg import rdf_triples

        endpoint = cls.from_triples(rdf_triples(world), store=store, source=lambda: rdf_triples(world), **kwargs)
        endpoint.source = endpoint.source or "the built-in knowledge graph (the lectures' fictional world)"
        return endpoint

    @classmethod
    def from_rdf(
        cls,
        paths: Iterable[Any],
        *,
        store: str = "oxigraph",
        limits: RdfLimits | None = None,
        **kwargs: Unpack[EndpointOptions],
    ) -> Endpoint:
        """An endpoint over a user's RDF files (Turtle, N-Triples, N-Quads, TriG, RDF/XML), bulk-loaded.

        The files are read and checked (:func:`~engines.kg.rdf_files.read_rdf`, under ``limits``:
        default from the settings), then loaded into the endpoint's worker process at once, under the
        same deadline (``limits.timeout_s``) and the worker's memory cap.  This process parses them only
        when pages or search first need the graph, and only bytes that passed both.

        Raises :class:`~engines.kg.rdf_files.RdfFileError` for a file that cannot be used (one that
        does not load by the deadline or within the worker's memory, too)."""
        from engines.kg.rdf_files import RdfLimits, read_rdf

        if limits is None:  # the settings' defaults (the caller's settings: RdfLimits.from_settings)
            limits = RdfLimits()
            if memory_limit_mb := kwargs.get("memory_limit_mb"):
                limits = dataclasses.replace(limits, memory_limit_mb=memory_limit_mb)
        return cls.from_rdf_source(read_rdf(paths, limits), store=store, **kwargs)

    @classmethod
    def from_rdf_source(
        cls, found: RdfSource, *, store: str = "oxigraph", **kwargs: Unpack[EndpointOptions]
    ) -> Endpoint:
        """An endpoint over RDF files already read and checked (:func:`~engines.kg.rdf_files.read_rdf`'s
        :class:`~engines.kg.rdf_files.RdfSource`): loaded into the worker now, under the deadline of the limits they
        were checked with.  So a caller can decide on what the check found (the dialect, to parse a query with)
        before it pays for the load.  Raises :class:`~engines.kg.rdf_files.RdfFileError` as :meth:`from_rdf`."""
        from engines.kg.rdf_files import RdfFileError
        from engines.kg.store import graph_from_rdf

        limits = found.limits
        documents = list(found.documents)
        endpoint = cls(
            None,
            store=store,
            dialect=found.dialect(),
            rdf=lambda: documents,
            source=found.describe(),
            graph_factory=lambda: graph_from_rdf(documents, store),
            load_timeout_s=limits.timeout_s,
            **kwargs,
        )
        endpoint.rdf_source = found
        try:
            endpoint.worker.start()
        except WorkerUnavailable as e:
            endpoint.close()
            names = ", ".join(os.fsencode(p).decode("utf-8", "backslashreplace") for p in found.paths)
            hint = " (settings: rdf_load_timeout_s)" if "did not load the graph within" in str(e) else ""
            raise RdfFileError(f"{names}: {e}{hint}") from None
        return endpoint

    @property
    def graph(self) -> Graph:
        """The graph in this process (pages, search): built on first use when the endpoint was made
        from a factory (a user's RDF files)."""
        graph = self._graph
        if graph is None:
            with self._graph_lock:
                graph = self._graph
                if graph is None:
                    if self._graph_factory is None:
                        raise ValueError("this endpoint has no graph")
                    graph = self._graph = self._graph_factory()
        return graph

    @property
    def wikidata(self) -> bool:
        """Whether the graph speaks Wikidata's vocabulary (the dialect, QIDs, pages with qualifiers)."""
        return self.dialect.wikidata

    # --- queries -------------------------------------------------------------------------

    def prepare(self, query: str) -> Prepared:
        """Dialect handling, parse and plan, without running, in the worker under the query timeout.
        Raises SparqlRefused, SparqlSyntaxError or :class:`~engines.kg.worker.PrepareFailed` (its
        ``algebra`` stays in the worker: None)."""
        try:
            answer = self.worker.prepare(query, self.timeout_s)
        except WorkerUnavailable as e:
            raise PrepareFailed(f"Query error: {e}.") from None
        return prepared_from(answer, query, self.timeout_s)

    def execute(self, query: str) -> QueryResult:
        """Run ``query``; one of the four feedbacks.  Raises SparqlRefused for what is never run.

        A query seen before returns its kept result (timeouts are never kept)."""
        return self.query(query)

    def query(self, sparql: str, *, timeout_s: float | None = None, row_cap: int | None = None) -> QueryResult:
        """Run ``sparql`` as :meth:`execute` does, under ``timeout_s`` and ``row_cap`` when given: bounds tighter
        than the endpoint's own (a looser one is the endpoint's).  Only a query under the endpoint's own bounds
        is kept or answered from the results kept."""
        timeout, cap = tighter_bounds(self.timeout_s, self.row_cap, timeout_s, row_cap)
        kept = self.cache_size and (timeout, cap) == (self.timeout_s, self.row_cap)
        if kept:
            with self._cache_lock:
                hit = self._results.get(sparql)
                if hit is not None:
                    self._results.move_to_end(sparql)
                    return hit
        result = self._execute(sparql, timeout, cap)
        if kept and result.feedback is not Feedback.TIMEOUT:
            with self._cache_lock:
                self._results[sparql] = result
                while len(self._results) > self.cache_size:
                    self._results.popitem(last=False)
        return result

    def _execute(self, query: str, timeout_s: float, row_cap: int) -> QueryResult:
        if not isinstance(query, str) or not query.strip():
            return QueryResult(query, Feedback.SYNTAX_ERROR, message="Syntax error: the query is empty.")
        start = self.clock()
        try:
            worker = self.worker
            worker.start()  # loading the graph is not the query's time
            start = self.clock()
            answer = worker.run(query, timeout_s, row_cap)
        except WorkerUnavailable as e:
            return QueryResult(
                query, Feedback.SYNTAX_ERROR, message=f"Query error: {e}.", elapsed_s=self.clock() - start
            )
        elapsed = self.clock() - start
        kind = answer.get("kind")
        notes: tuple[str, ...] = tuple(answer.get("notes") or ())
        standard: str = answer.get("standard") or ""
        if kind == "refused":
            raise SparqlRefused(answer["message"])
        if kind == "syntax":
            return QueryResult(query, Feedback.SYNTAX_ERROR, message=answer["message"], elapsed_s=elapsed)
        if kind == "timeout":
            return QueryResult(
                query,
                Feedback.TIMEOUT,
                message=f"Query execution timed out after {timeout_s:g} s.",
                elapsed_s=elapsed,
                notes=notes,
                standard=standard,
            )
        if kind == "error":
            return QueryResult(
                query,
                Feedback.SYNTAX_ERROR,
                message=answer["message"],
                elapsed_s=elapsed,
                notes=notes,
                standard=standard,
            )
        if kind == "crash":
            detail = answer.get("message") or "stopped"
            return QueryResult(
                query,
                Feedback.SYNTAX_ERROR,
                elapsed_s=elapsed,
                message=(
                    f"Query error: the triple store failed on this query (its worker process {detail}); "
                    "the endpoint is fine and the next query starts a new worker."
                ),
            )
        boolean = answer.get("boolean")
        if boolean is not None:
            return QueryResult(
                query,
                Feedback.ROWS,
                ("ASK",),
                (
                    {
                        "ASK": {
                            "type": "literal",
                            "value": str(boolean).lower(),
                            "datatype": "http://www.w3.org/2001/XMLSchema#boolean",
                        }
                    },
                ),
                elapsed_s=elapsed,
                boolean=boolean,
                notes=notes,
                standard=standard,
            )
        bindings = tuple(answer["bindings"])
        feedback = Feedback.ROWS if bindings else Feedback.EMPTY
        return QueryResult(
            query,
            feedback,
            tuple(answer["columns"]),
            bindings,
            truncated=bool(answer["truncated"]),
            elapsed_s=elapsed,
            notes=notes,
            standard=standard,
        )

    # --- the worker process ------------------------------------------------------------------

    @property
    def worker(self) -> QueryWorker:
        """The process that runs this endpoint's queries (started on first use)."""
        with self._lock:
            if self._worker is None:
                limit = self.memory_limit_mb if self.memory_limit_mb is not None else DEFAULT_MEMORY_LIMIT_MB
                rdf = self._rdf
                if rdf is not None:  # the worker loads the documents: the graph here is not built for it
                    source = self._triples or tuple
                else:
                    graph = self.graph
                    source = self._triples or (lambda: ((s, p, o) for s, p, o in graph))
                    if self.store == "oxigraph":  # Oxigraph writes its graph out and bulk-loads it again
                        rdf = lambda: [(_oxigraph_dump(graph), "application/n-quads")]  # noqa: E731
                self._worker = QueryWorker(
                    source,
                    self.store,
                    memory_limit_mb=limit,
                    isolate_network=self.isolate_network,
                    language=self.dialect,
                    rdf=rdf,
                    load_timeout_s=self.load_timeout_s,
                )
                self._finalizer = weakref.finalize(self, self._worker.close)
            return self._worker

    def describe(self) -> str:
        """What the graph is, for people: a user's RDF files (their names, statements, prefixes and dialect), the
        built-in world's graph, or what the endpoint was made with."""
        return self.source or "a graph loaded in this process"

    def close(self) -> None:
        """Stop the worker process (the endpoint starts a new one if queried again)."""
        with self._lock:
            worker = self._worker
        if worker is not None:
            worker.close()

    def __enter__(self) -> Endpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- browsing: pages, search, property examples --------------------------------------------

    @property
    def browser(self) -> Browser | GenericBrowser:
        with self._lock:
            if self._browser is None:
                if self.dialect.wikidata:
                    from engines.kg.pages import Browser

                    self._browser = Browser(self.graph)
                else:
                    from engines.kg.generic_pages import GenericBrowser

                    self._browser = GenericBrowser(self.graph, self.dialect.namespaces)
            return self._browser

    def page(self, entity: str) -> EntityPage:
        """An entity's page (get_wikidata_entry).  Raises UnknownEntity."""
        return self.browser.page(entity)

    def search(self, text: str, *, items: int = 8, properties: int = 4) -> tuple[SearchHit, ...]:
        """Items and properties matching ``text`` (search_wikidata)."""
        return self.browser.search(text, items=items, properties=properties)

    def property_examples(self, pid: str, n: int = 5) -> tuple[PropertyExample, ...]:
        """A few statements using ``pid`` (get_property_examples).  Raises UnknownEntity."""
        return self.browser.property_examples(pid, n)

    # --- labels ------------------------------------------------------------------------------

    def label(self, iri_or_id: str) -> str | None:
        """The English label of an entity (QID, PID or IRI), if it has one."""
        return self.browser.label(entity_id(iri_or_id))


def _oxigraph_dump(graph: Graph) -> bytes:
    """The statements of an Oxigraph-backed graph as N-Quads, written by Oxigraph itself."""
    import pyoxigraph as ox

    if not isinstance(graph, OxigraphGraph):
        raise TypeError("the graph is not over Oxigraph")
    dumped = graph.oxigraph.dump(format=ox.RdfFormat.N_QUADS)  # bytes: no output file was given
    assert dumped is not None
    return dumped
