"""Entity pages, search and property examples through a remote SPARQL endpoint.

A remote graph (Wikidata's has billions of statements) cannot be indexed here.  Each request is
answered instead by fetching the few statements it needs with SPARQL queries to the endpoint the
user gave — an entity's statements and their qualifiers, the labels of what they link to; the
labels that match a search — into a small local graph, and reading that graph with the same
browser as a local graph (:class:`~engines.kg.pages.Browser` for Wikidata's vocabulary,
:class:`~engines.kg.generic_pages.GenericBrowser` otherwise).  So a page or a search over an
endpoint reads exactly as it does over the same graph loaded locally.

The queries are built from RDF terms (rdflib's ``n3()``: IRIs checked, strings escaped), never by
pasting text; they go through :meth:`engines.kg.remote.RemoteEndpoint.send` after the same preparation and check as
a user's query.  What the endpoint answers is not trusted: a row holding a term that could not go
into a query as a term (an IRI that is not one or over 4 KB, a blank node label that is not a plain
name, a malformed language tag) is dropped, as a row that does not bind what was asked is.

Which vocabulary: an endpoint's address does not say whether its graph is Wikidata-shaped (an
``oxigraph serve`` may hold a Wikidata extract, or a FOAF / SKOS / schema.org vocabulary).  So the
first page, search or label asks it once (:meth:`RemoteBrowser.uses_wikidata`, one ``LIMIT 1``
query of three index lookups): a graph that types properties ``wikibase:Property`` or states
``wdt:P31`` / ``p:P31`` (instance of) is read with the Wikidata browser, any other with the generic
one — labels by ``rdfs:label``, ``skos:prefLabel`` and ``schema:name``, IDs written with the
endpoint's prefixes or as ``<IRI>``, as ``--rdf`` reads the same graph from a file.  Wikidata's own
endpoint is not asked; a dialect without Wikidata's vocabulary means the generic browser.  When the
endpoint cannot answer that question, the dialect decides.  A QID or PID (``Q42``, ``wd:P31``) is read
with Wikidata's vocabulary whatever the graph (no other vocabulary writes an ID so).

Search on Wikidata's own endpoint: matching labels by SPARQL is far too slow over all of
Wikidata, so there the search asks the endpoint's built-in ``SERVICE wikibase:mwapi``
(``EntitySearch``, the API behind ``wbsearchentities``) — still a query to the same address, and
the only SERVICE this program ever sends (a fixed query of its own, not a user's).  Every other
endpoint is searched by SPARQL over the label predicates, ranked on the endpoint before its LIMIT
(:data:`SEARCH_CANDIDATES` entities): a label equal to the searched text first, then one starting
with it, then one in which every word of the text starts a word, then one merely containing them,
each tier in IRI order — the order the local browsers
rank in (:func:`~engines.kg.pages.match_names`), so the best matches are the ones kept when more
labels match than the LIMIT lets through; the candidates are then described and ranked exactly as
a local graph is.  Every query is bounded: a LIMIT, the endpoint's timeout and its reply caps.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from rdflib import RDF, RDFS, BNode, Graph, Literal, URIRef

from engines.kg.pages import Browser, EntityPage, PropertyExample, SearchHit, UnknownEntity, _num, _words
from engines.kg.prefixes import PREFIXES, entity_id, iri_characters_valid
from engines.kg.results import Feedback, QueryResult
from engines.kg.sparql import Dialect

if TYPE_CHECKING:
    from engines.kg.dialect import Prepared
    from engines.kg.generic_pages import GenericBrowser

__all__ = ["RemoteBrowser", "SEARCH_CANDIDATES", "SparqlSender"]


class SparqlSender(Protocol):
    """What the pages ask of the endpoint they read (:class:`engines.kg.remote.RemoteEndpoint`): its dialect,
    whether it is Wikidata's own query service, and a way to send a query already prepared and checked."""

    @property
    def dialect(self) -> Dialect: ...

    @property
    def is_wikidata(self) -> bool: ...

    def send(self, prepared: Prepared) -> QueryResult: ...


WD, P, PS, PQ = PREFIXES["wd"], PREFIXES["p"], PREFIXES["ps"], PREFIXES["pq"]
WIKIBASE = PREFIXES["wikibase"]
SCHEMA_DESCRIPTION = URIRef(PREFIXES["schema"] + "description")
ALT_LABEL = URIRef(PREFIXES["skos"] + "altLabel")
_ID = re.compile(r"^[QP]\d+$")
_OPTIONAL = re.compile(r"^[qv]$")  # the qualifier columns of a page's query may be unbound
_BATCH = 100
_STATEMENTS_CAP = 5000
#: The entities a search over the label predicates fetches at most (the best ranked ones, see the module's doc).
SEARCH_CANDIDATES = 200
_WORD_START = "(^|\\W)"  # a regex: the start of the text or of a word


_MAX_IRI = 4096  # an IRI from the endpoint longer than this is not used (it would go into our next queries)
_BNODE_LABEL = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,199}$")
_LANGUAGE_TAG = re.compile(r"^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8}){0,8}$")


def _iri(value: str) -> URIRef | None:
    if len(value) > _MAX_IRI or not iri_characters_valid(value):
        return None
    return URIRef(value)


def _term(cell: Mapping[str, str]) -> Any:
    """An endpoint's SPARQL JSON term as an rdflib term, or None when it cannot be used safely: an IRI
    that is not one (``http://e/> } …``: rdflib would refuse to write it into our next query) or over
    4 KB, a blank node label that is not a plain name, a malformed language tag or datatype."""
    kind, value = cell["type"], cell["value"]
    if kind == "uri":
        return _iri(value)
    if kind == "bnode":
        return BNode(value) if _BNODE_LABEL.match(value) else None
    if "xml:lang" in cell:
        return Literal(value, lang=cell["xml:lang"]) if _LANGUAGE_TAG.match(cell["xml:lang"]) else None
    dt = cell.get("datatype")
    if not dt:
        return Literal(value)
    datatype = _iri(dt)
    return Literal(value, datatype=datatype, normalize=False) if datatype is not None else None


def _values(var: str, terms: Iterable[Any]) -> str:
    return f"VALUES ?{var} {{ " + " ".join(t.n3() for t in terms) + " }"


class RemoteBrowser:
    """Pages, search and property examples of a :class:`RemoteEndpoint`'s graph."""

    def __init__(self, endpoint: SparqlSender) -> None:
        self.endpoint = endpoint
        # None: not known yet (asked on first use)
        self._wikidata: bool | None = False if not endpoint.dialect.wikidata else True if endpoint.is_wikidata else None
        self._labels: dict[str, str | None] = {}

    # --- which vocabulary --------------------------------------------------------------------

    @property
    def wikidata(self) -> bool:
        """The graph uses Wikidata's vocabulary (see :meth:`uses_wikidata`)."""
        return self.uses_wikidata()

    def uses_wikidata(self) -> bool:
        """Whether the endpoint's graph is Wikidata-shaped: Wikidata's own endpoint is; a dialect without
        Wikidata's vocabulary is not; any other endpoint is asked once whether it types a property
        ``wikibase:Property`` or states ``wdt:P31`` / ``p:P31`` (three index lookups, ``LIMIT 1``).  When it
        cannot answer, the dialect decides (for the rest of the session: the app reads this on its own thread)."""
        if self._wikidata is not None:
            return self._wikidata
        probe = (
            f"SELECT ?x WHERE {{ {{ ?x {RDF.type.n3()} {URIRef(WIKIBASE + 'Property').n3()} }} "
            f"UNION {{ ?x {URIRef(PREFIXES['wdt'] + 'P31').n3()} ?y }} UNION {{ ?x {URIRef(P + 'P31').n3()} ?y }} }} LIMIT 1"
        )
        try:
            found = bool(self._select(probe))
        except UnknownEntity:  # the endpoint could not answer: the dialect decides
            found = self.endpoint.dialect.wikidata
        self._wikidata = found
        return found

    # --- running our own queries -------------------------------------------------------------

    def _select(self, query: str) -> list[dict[str, Any]]:
        """The rows of one of our own queries; a row that does not bind every variable the query
        selects is dropped (an endpoint is not trusted to answer what was asked)."""
        from engines.kg.dialect import prepare

        prepared = prepare(query, self.endpoint.dialect)
        result = self.endpoint.send(prepared)
        if result.feedback in (Feedback.SYNTAX_ERROR, Feedback.TIMEOUT):
            raise UnknownEntity(f"The endpoint could not answer: {result.message}")
        needed = [str(v) for v in prepared.algebra.algebra.get("PV", ()) if not _OPTIONAL.match(str(v))]
        rows = []
        for b in result.bindings:
            row = {k: _term(v) for k, v in b.items()}
            if all(t is not None for t in row.values()) and all(n in row for n in needed):
                rows.append(row)
        return rows

    def _reads_wikidata(self, id_: str) -> bool:
        """Whether an ID is read with Wikidata's vocabulary: a QID or PID (``Q42``, ``wd:P31``: no other graph's ID
        is written so) without asking the endpoint; any other ID as the graph's vocabulary (:meth:`uses_wikidata`)."""
        text = id_.strip()
        text = text.split(":", 1)[1] if text.startswith(("wd:", "wdt:", "p:", "ps:", "pq:")) else text
        return bool(_ID.match(entity_id(text))) or self.wikidata

    def _browser(self, graph: Graph, wd: bool, properties: Iterable[str] = ()) -> Browser | GenericBrowser:
        """The local browser over the statements fetched into ``graph`` (``wd``: Wikidata's); ``properties``: IRIs
        the endpoint uses as predicates although ``graph`` does not (a generic graph's page of a property says so)."""
        if wd:
            return Browser(graph)
        from engines.kg.generic_pages import GenericBrowser

        return GenericBrowser(graph, self.endpoint.dialect.namespaces, properties=properties)

    def _add_labels(self, graph: Graph, iris: Iterable[URIRef], wd: bool) -> None:
        """Labels (and, for the generic browser, the label predicates) of ``iris``, into ``graph``."""
        iris = sorted({i for i in iris if isinstance(i, URIRef)})
        if wd:
            predicates = [RDFS.label]
        else:
            from engines.kg.generic_pages import LABEL_PREDICATES

            predicates = [URIRef(p) for p in LABEL_PREDICATES]
        for i in range(0, len(iris), _BATCH):
            chunk = iris[i : i + _BATCH]
            rows = self._select(
                f"SELECT ?e ?lp ?l WHERE {{ {_values('e', chunk)} {_values('lp', predicates)} ?e ?lp ?l . }}"
            )
            for r in rows:
                graph.add((r["e"], r["lp"], r["l"]))

    # --- labels --------------------------------------------------------------------------------

    def label(self, id_: str) -> str | None:
        if id_ in self._labels:
            return self._labels[id_]
        wd = self._reads_wikidata(id_)
        iri = self._iri(id_, wd)
        found = None
        if iri is not None:
            graph = Graph()
            self._add_labels(graph, [URIRef(iri)], wd)
            b = self._browser(graph, wd)
            found = b.label(id_ if wd else iri)
        if len(self._labels) > 10_000:
            self._labels.clear()
        self._labels[id_] = found
        return found

    def _iri(self, id_: str, wd: bool) -> str | None:
        id_ = id_.strip()
        if wd:
            id_ = entity_id(id_[3:] if id_.startswith("wd:") else id_)
            return WD + id_ if _ID.match(id_) else None
        from engines.kg.generic_pages import GenericBrowser

        try:
            return GenericBrowser(Graph(), self.endpoint.dialect.namespaces).expand(id_)
        except UnknownEntity:
            return None

    # --- pages -------------------------------------------------------------------------------

    def page(self, id_: str) -> EntityPage:
        wd = self._reads_wikidata(id_)
        iri = self._iri(id_, wd)
        if iri is None:
            return self._browser(Graph(), wd).page(id_)  # the local browser's message for a malformed ID
        subject = URIRef(iri)
        graph = Graph()
        rows = self._select(
            f"SELECT ?p ?o ?q ?v WHERE {{ {subject.n3()} ?p ?o . "
            f"OPTIONAL {{ ?o ?q ?v . FILTER(isBlank(?o) || STRSTARTS(STR(?p), {Literal(P + 'P').n3()})) }} }}"
            f" LIMIT {_STATEMENTS_CAP}"
        )
        linked: set[URIRef] = set()
        for r in rows:
            graph.add((subject, r["p"], r["o"]))
            linked.update(t for t in (r["p"], r["o"]) if isinstance(t, URIRef))
            if "q" in r and "v" in r:
                graph.add((r["o"], r["q"], r["v"]))
                linked.update(t for t in (r["q"], r["v"]) if isinstance(t, URIRef))
        properties: list[str] = []
        if wd:
            linked = {e for e in (self._entity_of(t) for t in linked) if e is not None}
        else:
            # used as a predicate anywhere (the page says "Property", as a local graph's does); named by a
            # statement at all (an entity with no statements of its own still has a page)
            if self._select(f"SELECT ?x WHERE {{ ?x {subject.n3()} ?y }} LIMIT 1"):
                properties.append(str(subject))
            elif not rows and self._select(f"SELECT ?x WHERE {{ ?x ?y {subject.n3()} }} LIMIT 1"):
                graph.add((URIRef("urn:x-cs224v:somewhere"), RDFS.seeAlso, subject))
        self._add_labels(graph, linked - {subject}, wd)
        return self._browser(graph, wd, properties).page(id_)

    @staticmethod
    def _entity_of(term: URIRef) -> URIRef | None:
        """The wd: entity a Wikidata IRI stands for (``p:P31`` → ``wd:P31``), for its label."""
        s = str(term)
        if s.startswith(WD) and _ID.match(s[len(WD) :]):
            return term
        for ns in (PS, PQ, P, PREFIXES["wdt"]):
            if s.startswith(ns) and _ID.match(s[len(ns) :]):
                return URIRef(WD + s[len(ns) :])
        return None

    # --- search --------------------------------------------------------------------------------

    def search(self, text: str, *, items: int = 8, properties: int = 4) -> tuple[SearchHit, ...]:
        words = _words(text)
        if not words:
            return ()
        wd = self.wikidata
        if wd and self.endpoint.is_wikidata:
            candidates = self._entity_search(" ".join(words), items, properties)
        else:
            candidates = self._label_candidates(words, wd)
        if not candidates:
            return ()
        graph = Graph()
        self._describe(graph, candidates, wd)
        return self._browser(graph, wd).search(text, items=items, properties=properties)

    def _label_candidates(self, words: Sequence[str], wd: bool) -> list[URIRef]:
        """The entities with a label or alias containing every word (a superset of what matches), the best
        :data:`SEARCH_CANDIDATES` of them: ranked on the endpoint as the local browsers rank (a label equal to
        the text, then one starting with it, then the rest; IRI order within a tier) before the LIMIT."""
        if wd:
            predicates = [RDFS.label, ALT_LABEL]
        else:
            from engines.kg.generic_pages import ALIAS_PREDICATES, LABEL_PREDICATES

            predicates = [URIRef(p) for p in (*LABEL_PREDICATES, *ALIAS_PREDICATES)]
        text = Literal(" ".join(words)).n3()
        contains = " && ".join(f"CONTAINS(?n, {Literal(w).n3()})" for w in words)
        # a word of the text at the start of a word of the label (the words are \w+: nothing in them is a regex's)
        starts = " && ".join("REGEX(?n, " + Literal(_WORD_START + w).n3() + ")" for w in words)
        rows = self._select(
            f"SELECT ?e (MIN(?t) AS ?tier) WHERE {{ {_values('lp', predicates)} ?e ?lp ?l . "
            f"FILTER(isIRI(?e) && isLiteral(?l)) BIND(LCASE(STR(?l)) AS ?n) FILTER({contains}) "
            f"BIND(IF(?n = {text}, 0, IF(STRSTARTS(?n, {text}), 1, IF({starts}, 2, 3))) AS ?t) }} "
            f"GROUP BY ?e ORDER BY ?tier STR(?e) LIMIT {int(SEARCH_CANDIDATES)}"
        )
        return [r["e"] for r in rows if isinstance(r.get("e"), URIRef)]

    def _entity_search(self, text: str, items: int, properties: int) -> list[URIRef]:
        """Wikidata's own entity search, through the endpoint's ``SERVICE wikibase:mwapi``."""
        from engines.kg.dialect import Prepared

        out: list[URIRef] = []
        for kind, limit in (("item", items), ("property", properties)):
            query = (
                "SELECT ?e WHERE { SERVICE wikibase:mwapi { "
                'bd:serviceParam wikibase:api "EntitySearch" ; wikibase:endpoint "www.wikidata.org" ; '
                f'mwapi:search {Literal(text).n3()} ; mwapi:language "en" ; mwapi:type {Literal(kind).n3()} ; '
                f'mwapi:limit "{int(limit)}" . ?e wikibase:apiOutputItem mwapi:item . }} }}'
            )
            # our own fixed query (the text only as an escaped literal): sent as written, not through the user's check
            result = self.endpoint.send(Prepared(query, query, "SELECT"))
            found = (_iri(b["e"]["value"]) for b in result.bindings if b.get("e", {}).get("type") == "uri")
            out += [iri for iri in found if iri is not None]
        return out

    def _describe(self, graph: Graph, entities: Sequence[URIRef], wd: bool) -> None:
        """Labels, descriptions, aliases and property types of ``entities``, into ``graph``."""
        if wd:
            predicates = [RDFS.label, SCHEMA_DESCRIPTION, ALT_LABEL, RDF.type, URIRef(WIKIBASE + "propertyType")]
        else:
            from engines.kg.generic_pages import ALIAS_PREDICATES, DESCRIPTION_PREDICATES, LABEL_PREDICATES

            predicates = [URIRef(p) for p in (*LABEL_PREDICATES, *DESCRIPTION_PREDICATES, *ALIAS_PREDICATES)]
            predicates.append(RDF.type)
        entities = list(dict.fromkeys(entities))
        for i in range(0, len(entities), _BATCH):
            chunk = entities[i : i + _BATCH]
            for r in self._select(
                f"SELECT ?e ?p ?o WHERE {{ {_values('e', chunk)} {_values('p', predicates)} ?e ?p ?o . }}"
            ):
                graph.add((r["e"], r["p"], r["o"]))
            if not wd:  # which of them are used as predicates (properties, for the generic browser)
                for r in self._select(
                    f"SELECT DISTINCT ?e WHERE {{ {_values('e', chunk)} FILTER EXISTS {{ ?x ?e ?y }} }}"
                ):
                    graph.add((r["e"], RDF.type, RDF.Property))

    # --- property examples -------------------------------------------------------------------

    def property_examples(self, pid: str, n: int = 5) -> tuple[PropertyExample, ...]:
        if not self._reads_wikidata(pid):
            return self._generic_examples(pid, n)
        pid = pid.strip()
        pid = pid.split(":", 1)[1] if ":" in pid else pid
        if not re.fullmatch(r"P\d+", pid):
            raise UnknownEntity(f"{pid!r} is not a property ID: use a PID such as P31.")
        prop = URIRef(WD + pid)
        graph = Graph()
        for r in self._select(f"SELECT ?p ?o WHERE {{ {prop.n3()} ?p ?o . }}"):
            graph.add((prop, r["p"], r["o"]))
        if (prop, RDF.type, URIRef(WIKIBASE + "Property")) not in graph:
            raise UnknownEntity(f"There is no property {pid} in the graph.")
        statements = self._select(f"SELECT ?s ?st WHERE {{ ?s {URIRef(P + pid).n3()} ?st . }} LIMIT {_STATEMENTS_CAP}")
        # a statement node is an IRI (or a blank node): a literal there (up to the reply's 32 MB) never goes
        # into the next query, whose parse it would slow for seconds
        statements = [r for r in statements if not isinstance(r["st"], Literal)]
        statements.sort(key=lambda r: (_num(entity_id(str(r["s"]))), str(r["st"])))
        if not statements:
            return ()
        step = max(1, len(statements) // n)
        chosen = statements[::step][:n]
        linked: set[URIRef] = {prop}
        for r in chosen:
            graph.add((r["s"], URIRef(P + pid), r["st"]))
            linked.add(r["s"])
        for r in self._select(f"SELECT ?st ?q ?v WHERE {{ {_values('st', [r['st'] for r in chosen])} ?st ?q ?v . }}"):
            if "q" not in r or "v" not in r:  # ?q ?v may be missing from a page's rows, not from these
                continue
            graph.add((r["st"], r["q"], r["v"]))
            linked.update(t for t in (r["q"], r["v"]) if isinstance(t, URIRef))
        self._add_labels(graph, {e for e in (self._entity_of(t) for t in linked) if e is not None}, True)
        return Browser(graph).property_examples(pid, len(chosen))

    def _generic_examples(self, pid: str, n: int) -> tuple[PropertyExample, ...]:
        iri = self._iri(pid, False)
        if iri is None:
            return self._browser(Graph(), False).property_examples(pid, n)
        prop = URIRef(iri)
        rows = self._select(f"SELECT ?s ?o WHERE {{ ?s {prop.n3()} ?o . }} LIMIT {_STATEMENTS_CAP}")
        graph = Graph()
        rows.sort(key=lambda r: (str(r["s"]), str(r["o"])))
        chosen = rows[:: max(1, len(rows) // n)][:n] if rows else []
        for r in chosen:
            graph.add((r["s"], prop, r["o"]))
        if not rows:
            return self._browser(graph, False).property_examples(pid, n)  # "no property …"
        self._add_labels(graph, {prop, *(t for r in chosen for t in (r["s"], r["o"]) if isinstance(t, URIRef))}, False)
        return self._browser(graph, False).property_examples(pid, len(chosen))
