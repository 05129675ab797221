"""The SPARQL endpoint: Wikidata's dialect over an rdflib graph, answering with one of four feedbacks.

SPINACH (§1.5, paper §4.1) names the four things executing a query can tell you: rows, no rows,
a syntax error, a timeout.  :meth:`Endpoint.execute` returns exactly one of them as a
:class:`QueryResult`; a query the endpoint will not run at all (an update, ``LOAD``, a remote
``SERVICE``, …) raises :class:`~engines.kg.dialect.SparqlRefused` instead.  Every query runs
under a timeout and a row cap.  Literals come back exactly as stored (``2023-01-01T00:00:00Z``
stays that), in the SPARQL 1.1 JSON results format.

Usage::

    endpoint = Endpoint.from_world(kg.build(), store="memory")
    result = endpoint.execute("SELECT ?m ?mLabel WHERE { ?m wdt:P31 wd:Q1007 . "
                              'SERVICE wikibase:label { bd:serviceParam wikibase:language "en". } }')
    result.feedback, result.columns, result.records()
"""
from __future__ import annotations

import threading
from collections import OrderedDict
import time
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

from rdflib import BNode, Graph, Literal, URIRef

from engines.kg import dialect
from engines.kg.dialect import Prepared, SparqlRefused, SparqlSyntaxError
from engines.kg.prefixes import PREFIXES, entity_id
from engines.kg.store import QueryTimeout, deadline, make_graph, oxigraph_store

if TYPE_CHECKING:
    from engines.kg.pages import Browser, EntityPage, PropertyExample, SearchHit

__all__ = ["Feedback", "QueryResult", "Endpoint", "term_json", "SparqlRefused", "SparqlSyntaxError"]

Binding = Mapping[str, Mapping[str, str]]  # {var: {"type", "value", "datatype"? | "xml:lang"?}}


class Feedback(str, Enum):
    ROWS = "rows"
    EMPTY = "empty"
    SYNTAX_ERROR = "syntax_error"
    TIMEOUT = "timeout"


@dataclass(frozen=True)
class QueryResult:
    """What executing one query told us."""

    query: str
    feedback: Feedback
    columns: tuple[str, ...] = ()
    bindings: tuple[Binding, ...] = ()  # SPARQL JSON bindings, in result order
    message: str = ""  # the error for syntax_error / timeout
    truncated: bool = False  # stopped at the row cap
    elapsed_s: float = 0.0
    boolean: bool | None = None  # the answer of an ASK query
    notes: tuple[str, ...] = field(default=(), compare=False)  # dialect rewrites applied
    standard: str = field(default="", compare=False, repr=False)  # the standard SPARQL that ran

    @property
    def has_rows(self) -> bool:
        return self.feedback is Feedback.ROWS

    def __len__(self) -> int:
        return len(self.bindings)

    def records(self) -> list[dict[str, str | None]]:
        """One ``{variable: value}`` per row (the plain value; ``None`` when unbound)."""
        return [{c: (b[c]["value"] if c in b else None) for c in self.columns} for b in self.bindings]

    def rows(self) -> list[tuple[str | None, ...]]:
        return [tuple(b[c]["value"] if c in b else None for c in self.columns) for b in self.bindings]

    def sparql_json(self) -> dict[str, Any]:
        """The W3C SPARQL 1.1 JSON results document."""
        if self.boolean is not None:
            return {"head": {}, "boolean": self.boolean}
        return {"head": {"vars": list(self.columns)}, "results": {"bindings": [dict(b) for b in self.bindings]}}

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"feedback": self.feedback.value, "columns": list(self.columns), "rows": self.records()}
        if self.boolean is not None:
            out["boolean"] = self.boolean
        if self.message:
            out["message"] = self.message
        if self.truncated:
            out["truncated"] = True
        return out


def term_json(term: Any) -> dict[str, str]:
    """An rdflib term in the SPARQL JSON results format (lexical forms untouched)."""
    if isinstance(term, URIRef):
        return {"type": "uri", "value": str(term)}
    if isinstance(term, BNode):
        return {"type": "bnode", "value": str(term)}
    if isinstance(term, Literal):
        out = {"type": "literal", "value": str(term)}
        if term.language:
            out["xml:lang"] = term.language
        elif term.datatype is not None:
            out["datatype"] = str(term.datatype)
        return out
    return {"type": "literal", "value": str(term)}


def _ox_json(term: Any) -> dict[str, str]:
    import pyoxigraph as ox

    if isinstance(term, ox.NamedNode):
        return {"type": "uri", "value": term.value}
    if isinstance(term, ox.BlankNode):
        return {"type": "bnode", "value": term.value}
    if isinstance(term, ox.Literal):
        out = {"type": "literal", "value": term.value}
        if term.language:
            out["xml:lang"] = term.language
        elif term.datatype is not None and term.datatype.value != "http://www.w3.org/2001/XMLSchema#string":
            out["datatype"] = term.datatype.value
        return out
    return {"type": "literal", "value": str(term)}


def _is_internal(var: str) -> bool:
    return var.startswith("__")  # helper variables of the label-service emulation


class Endpoint:
    """Wikidata-dialect SPARQL over one graph.  Thread-safe for queries."""

    def __init__(self, graph: Graph, *, store: str = "memory", timeout_s: float = 5.0, row_cap: int = 10_000,
                 clock: Callable[[], float] = time.perf_counter, cache_size: int = 256) -> None:
        """``cache_size``: results kept per query text (the graph is read-only; most of a query's
        cost is parsing it, and agents repeat queries); 0 turns the cache off (benchmarks)."""
        self.graph = graph
        self.cache_size = cache_size
        self._results: OrderedDict[str, QueryResult] = OrderedDict()
        self._cache_lock = threading.Lock()
        self.store = store
        self.timeout_s = timeout_s
        self.row_cap = row_cap
        self.clock = clock
        self._labels: dict[str, str] | None = None
        self._browser: Any = None
        self._lock = threading.Lock()

    @classmethod
    def from_triples(cls, triples: Iterable[tuple], *, store: str = "memory", **kwargs: Any) -> "Endpoint":
        return cls(make_graph(triples, store), store=store, **kwargs)

    @classmethod
    def from_world(cls, world: Any, *, store: str = "memory", **kwargs: Any) -> "Endpoint":
        """An endpoint over a :class:`worlds.kg.KGWorld` (its graph only; never its hidden truth)."""
        from worlds.kg import rdf_triples

        return cls.from_triples(rdf_triples(world), store=store, **kwargs)

    # --- queries -------------------------------------------------------------------------

    def prepare(self, query: str) -> Prepared:
        """Dialect handling, parse and plan, without running.  Raises SparqlRefused or SparqlSyntaxError."""
        return dialect.prepare(query)

    def execute(self, query: str) -> QueryResult:
        """Run ``query``; one of the four feedbacks.  Raises SparqlRefused for what is never run.

        A query seen before returns its kept result (timeouts are never kept)."""
        if self.cache_size:
            with self._cache_lock:
                hit = self._results.get(query)
                if hit is not None:
                    self._results.move_to_end(query)
                    return hit
        result = self._execute(query)
        if self.cache_size and result.feedback is not Feedback.TIMEOUT:
            with self._cache_lock:
                self._results[query] = result
                while len(self._results) > self.cache_size:
                    self._results.popitem(last=False)
        return result

    def _execute(self, query: str) -> QueryResult:
        start = self.clock()
        try:
            prepared = dialect.prepare(query)
        except SparqlSyntaxError as e:
            return QueryResult(query, Feedback.SYNTAX_ERROR, message=str(e), elapsed_s=self.clock() - start)
        if prepared.unsupported:
            raise SparqlRefused(prepared.unsupported)
        try:
            if self.store == "oxigraph":
                columns, bindings, truncated, boolean = self._run_oxigraph(prepared)
            else:
                columns, bindings, truncated, boolean = self._run_rdflib(prepared)
        except QueryTimeout:
            return QueryResult(query, Feedback.TIMEOUT, message=f"Query execution timed out after {self.timeout_s:g} s.",
                               elapsed_s=self.clock() - start, notes=prepared.notes, standard=prepared.text)
        except _QueryError as e:
            return QueryResult(query, Feedback.SYNTAX_ERROR, message=str(e), elapsed_s=self.clock() - start,
                               notes=prepared.notes, standard=prepared.text)
        elapsed = self.clock() - start
        if boolean is not None:
            return QueryResult(query, Feedback.ROWS, ("ASK",), ({"ASK": {"type": "literal", "value": str(boolean).lower(),
                               "datatype": "http://www.w3.org/2001/XMLSchema#boolean"}},), elapsed_s=elapsed,
                               boolean=boolean, notes=prepared.notes, standard=prepared.text)
        feedback = Feedback.ROWS if bindings else Feedback.EMPTY
        return QueryResult(query, feedback, columns, bindings, truncated=truncated, elapsed_s=elapsed,
                           notes=prepared.notes, standard=prepared.text)

    def _run_rdflib(self, prepared: Prepared) -> tuple[tuple[str, ...], tuple[Binding, ...], bool, bool | None]:
        with deadline(self.timeout_s):
            try:
                result = self.graph.query(prepared.algebra)
                if result.type == "ASK":
                    return (), (), False, bool(result.askAnswer)
                if result.type in ("CONSTRUCT", "DESCRIBE"):
                    cols = ("subject", "predicate", "object")
                    rows: list[Binding] = []
                    for s, p, o in result.graph:  # type: ignore[union-attr]
                        rows.append({"subject": term_json(s), "predicate": term_json(p), "object": term_json(o)})
                        if len(rows) >= self.row_cap:
                            return cols, tuple(rows), True, None
                    return cols, tuple(rows), False, None
                columns = tuple(str(v) for v in (result.vars or ()) if not _is_internal(str(v)))
                out: list[Binding] = []
                truncated = False
                for row in result:
                    b = {str(v): term_json(t) for v, t in row.asdict().items() if t is not None and not _is_internal(str(v))}  # type: ignore[union-attr]
                    out.append(b)
                    if len(out) >= self.row_cap:
                        truncated = True
                        break
                return columns, tuple(out), truncated, None
            except QueryTimeout:
                raise
            except RecursionError:
                raise _QueryError("Query error: the query is nested too deeply to evaluate.") from None
            except Exception as e:  # rdflib's evaluation errors (type errors, unknown functions …)
                raise _QueryError(f"Query error: {str(e).strip() or type(e).__name__}") from None

    def _run_oxigraph(self, prepared: Prepared) -> tuple[tuple[str, ...], tuple[Binding, ...], bool, bool | None]:
        import pyoxigraph as ox

        store = oxigraph_store(self.graph)
        box: dict[str, Any] = {}
        limit = time.monotonic() + self.timeout_s

        def work() -> None:
            try:
                res = store.query(prepared.text, prefixes=dict(PREFIXES), use_default_graph_as_union=True)
                if isinstance(res, ox.QueryBoolean):
                    box["value"] = ((), (), False, bool(res))
                    return
                if isinstance(res, ox.QueryTriples):
                    rows = []
                    for t in res:
                        rows.append({"subject": _ox_json(t.subject), "predicate": _ox_json(t.predicate), "object": _ox_json(t.object)})
                        if len(rows) >= self.row_cap or time.monotonic() > limit:
                            break
                    box["value"] = (("subject", "predicate", "object"), tuple(rows), len(rows) >= self.row_cap, None)
                    return
                names = [v.value for v in res.variables]
                keep = [n for n in names if not _is_internal(n)]
                out = []
                truncated = False
                for sol in res:
                    out.append({n: _ox_json(sol[n]) for n in keep if sol[n] is not None})
                    if len(out) >= self.row_cap:
                        truncated = True
                        break
                    if time.monotonic() > limit:
                        box["timeout"] = True
                        return
                box["value"] = (tuple(keep), tuple(out), truncated, None)
            except SyntaxError as e:
                box["error"] = f"Syntax error: {e}"
            except Exception as e:  # Oxigraph's evaluation errors
                box["error"] = f"Query error: {str(e).strip() or type(e).__name__}"

        worker = threading.Thread(target=work, name="oxigraph-query", daemon=True)
        worker.start()
        worker.join(self.timeout_s)
        if worker.is_alive() or box.get("timeout"):
            raise QueryTimeout()  # the worker finishes on its own; its result is dropped
        if "error" in box:
            raise _QueryError(box["error"])
        return box["value"]

    # --- browsing: pages, search, property examples --------------------------------------------

    @property
    def browser(self) -> "Browser":
        with self._lock:
            if self._browser is None:
                from engines.kg.pages import Browser

                self._browser = Browser(self.graph)
            return self._browser

    def page(self, entity: str) -> "EntityPage":
        """An entity's page (get_wikidata_entry).  Raises UnknownEntity."""
        return self.browser.page(entity)

    def search(self, text: str, *, items: int = 8, properties: int = 4) -> "tuple[SearchHit, ...]":
        """Items and properties matching ``text`` (search_wikidata)."""
        return self.browser.search(text, items=items, properties=properties)

    def property_examples(self, pid: str, n: int = 5) -> "tuple[PropertyExample, ...]":
        """A few statements using ``pid`` (get_property_examples).  Raises UnknownEntity."""
        return self.browser.property_examples(pid, n)

    # --- labels ------------------------------------------------------------------------------

    def label(self, iri_or_id: str) -> str | None:
        """The English label of an entity (QID, PID or IRI), if it has one."""
        return self.browser.label(entity_id(iri_or_id))


class _QueryError(Exception):
    """An error while evaluating a planned query (internal; becomes a syntax_error feedback)."""


def results_from_json(doc: Any) -> list[Binding]:
    """The bindings of a SPARQL JSON results document, or of a bare list of bindings."""
    if isinstance(doc, dict) and "results" in doc:
        doc = doc["results"].get("bindings", [])
    if not isinstance(doc, list):
        raise ValueError("expected a list of SPARQL JSON bindings or a SPARQL JSON results document")
    return doc


def columns_of(bindings: Sequence[Binding]) -> tuple[str, ...]:
    cols: list[str] = []
    for b in bindings:
        for k in b:
            if k not in cols:
                cols.append(k)
    return tuple(cols)
