"""Entity pages, search and property examples over any RDF graph (one that does not use Wikidata's vocabulary).

The Wikidata browser (:mod:`engines.kg.pages`) reads QIDs, statement nodes and qualifiers; a
user's own graph has none of these.  Here:

* an entity is any IRI; its ID is the IRI written with the graph's prefixes (``ex:alice``), or
  ``<…>`` when no prefix fits; :meth:`GenericBrowser.page` accepts either form or the bare IRI;
* the label index reads ``rdfs:label``, ``skos:prefLabel`` and ``schema:name`` (English or
  untagged first, then in that order, then the alphabetically first: the same label whatever order
  a store yields its statements in), descriptions from ``rdfs:comment``, ``schema:description``,
  ``skos:definition`` and ``dcterms:description``, aliases from ``skos:altLabel``;
* a page lists every statement of the entity (``predicate: value``); a blank-node value is shown
  through its own statements, as qualifiers;
* search ranks labels and aliases as Wikidata's ``wbsearchentities`` does (exact, then prefix,
  then word by word), items before properties (the IRIs used as predicates);
* property examples are statements using the property, spread over its subjects.

The same dataclasses as the Wikidata browser (:class:`~engines.kg.pages.EntityPage`, …), so the
console, the entity browser and SPINACH's tools work unchanged.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from rdflib import RDF, BNode, Graph, Literal, URIRef

from engines.kg.pages import (
    EntityPage,
    PageClaim,
    PageValue,
    PropertyExample,
    SearchHit,
    UnknownEntity,
    _words,
    match_names,
)
from engines.kg.prefixes import iri_characters_valid
from engines.kg.store import oxigraph_store

__all__ = ["GenericBrowser", "LABEL_PREDICATES"]

_RDFS = "http://www.w3.org/2000/01/rdf-schema#"
_SKOS = "http://www.w3.org/2004/02/skos/core#"
_SCHEMA = ("http://schema.org/", "https://schema.org/")
_OWL = "http://www.w3.org/2002/07/owl#"

LABEL_PREDICATES = (_RDFS + "label", _SKOS + "prefLabel", *(s + "name" for s in _SCHEMA))
DESCRIPTION_PREDICATES = (
    _RDFS + "comment",
    *(s + "description" for s in _SCHEMA),
    _SKOS + "definition",
    "http://purl.org/dc/terms/description",
)
ALIAS_PREDICATES = (_SKOS + "altLabel",)
_PROPERTY_TYPES = {
    RDF.Property,
    URIRef(_OWL + "ObjectProperty"),
    URIRef(_OWL + "DatatypeProperty"),
    URIRef(_OWL + "AnnotationProperty"),
}
_LOCAL = re.compile(r"[A-Za-z_][\w.-]*[\w-]|[A-Za-z_]", re.ASCII)
_ABSOLUTE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")  # an IRI has a scheme
_MAX_IRI = 4096  # an ID longer than this is not looked up


def _english_first(lit: Literal) -> int:
    lang = (lit.language or "").lower()
    return 0 if lang in ("", "en") or lang.startswith("en-") else 1


class GenericBrowser:
    """Pages, search and property examples over one rdflib graph with prefixes of its own."""

    def __init__(self, graph: Graph, prefixes: Mapping[str, str], *, properties: Iterable[str] = ()) -> None:
        """``properties``: IRIs to count as properties besides those ``graph`` uses as predicates (a remote
        graph's page is read from a few of its statements: the endpoint says which IRIs it uses so)."""
        self.graph = graph
        self._extra_properties = frozenset(properties)
        # the longest namespace first, so the most specific prefix names an IRI
        self.prefixes = dict(sorted(prefixes.items(), key=lambda kv: -len(kv[1])))
        self._lock = threading.Lock()
        self._index: dict[str, Any] | None = None
        self._ox = oxigraph_store(graph)

    # --- IDs ---------------------------------------------------------------------------------

    def compact(self, iri: str) -> str:
        for prefix, ns in self.prefixes.items():
            if ns and iri.startswith(ns):
                local = iri[len(ns) :]
                if local == "" or _LOCAL.fullmatch(local):
                    return f"{prefix}:{local}"
        return f"<{iri}>"

    def expand(self, id_: str) -> str:
        """The IRI an ID names (``ex:alice``, ``<http://…>`` or a bare IRI).  Raises UnknownEntity, also for
        an IRI that is not one (relative, over 4 KB, holding a space, a quote, a backslash or one of ``<>{}|^``):
        it could be neither looked up nor written into a query."""
        text = id_.strip()
        iri = self._expanded(text)
        if len(iri) > _MAX_IRI or not _ABSOLUTE.match(iri) or not iri_characters_valid(iri):
            raise UnknownEntity(
                f"{text[:200]!r} is not an IRI: an IRI starts with a scheme (http:, urn:, …) and holds no spaces, "
                "quotes or <>{}|^`\\ characters."
            )
        return iri

    def _expanded(self, text: str) -> str:
        if text.startswith("<") and text.endswith(">"):
            return text[1:-1]
        if re.match(r"^[A-Za-z][\w+.-]*://", text) or text.startswith("urn:"):
            return text
        if ":" in text:
            prefix, local = text.split(":", 1)
            if prefix in self.prefixes:
                return self.prefixes[prefix] + local
            raise UnknownEntity(f"{text[:200]!r}: the prefix {prefix[:60]!r} is not declared in the graph's files.")
        raise UnknownEntity(f"{text[:200]!r} is not an entity ID here: write it as prefix:name or <IRI>.")

    # --- triples -----------------------------------------------------------------------------

    def _triples(self, s: Any = None, p: Any = None, o: Any = None) -> Iterator[tuple[Any, Any, Any]]:
        if self._ox is None:
            yield from self.graph.triples((s, p, o))
            return
        import pyoxigraph as ox

        from engines.kg.store import from_oxigraph

        def to_ox(t: Any) -> Any:
            if t is None:
                return None
            return ox.BlankNode(str(t)) if isinstance(t, BNode) else ox.NamedNode(str(t))

        for q in self._ox.quads_for_pattern(to_ox(s), to_ox(p), to_ox(o), None):
            yield from_oxigraph(q.subject), from_oxigraph(q.predicate), from_oxigraph(q.object)

    def _idx(self) -> dict[str, Any]:
        with self._lock:
            if self._index is None:
                self._index = self._build_index()
            return self._index

    def _build_index(self) -> dict[str, Any]:
        def collect(predicates: tuple[str, ...]) -> dict[str, list[tuple[int, int, str]]]:
            """Each subject's values: (English or untagged first, the predicate's rank, the text) — so the one
            chosen is the same whatever order a store yields its triples in."""
            out: dict[str, list[tuple[int, int, str]]] = {}
            for rank, pred in enumerate(predicates):
                for s, _p, o in self._triples(None, URIRef(pred), None):
                    if isinstance(s, URIRef) and isinstance(o, Literal):
                        out.setdefault(str(s), []).append((_english_first(o), rank, str(o)))
            return out

        labels = {s: min(v)[2] for s, v in collect(LABEL_PREDICATES).items()}
        descriptions = {s: min(v)[2] for s, v in collect(DESCRIPTION_PREDICATES).items()}
        aliases = {s: sorted({x[2] for x in v if x[0] == 0}) for s, v in collect(ALIAS_PREDICATES).items()}
        properties: set[str] = set(self._extra_properties)
        for _s, p, _o in self._triples():
            properties.add(str(p))
        for t in _PROPERTY_TYPES:
            for s, _p, _o in self._triples(None, RDF.type, t):
                properties.add(str(s))
        return {"labels": labels, "descriptions": descriptions, "aliases": aliases, "properties": properties}

    def label(self, id_: str) -> str | None:
        try:
            iri = self.expand(id_)
        except UnknownEntity:
            return None
        labels: dict[str, str] = self._idx()["labels"]
        return labels.get(iri)

    def value(self, term: Any) -> PageValue:
        if isinstance(term, URIRef):
            iri = str(term)
            cid = self.compact(iri)
            return PageValue(self._idx()["labels"].get(iri) or cid, cid)
        if isinstance(term, BNode):
            return PageValue("(a blank node)")
        return PageValue(str(term))

    def _property_label(self, iri: str) -> str:
        return self._idx()["labels"].get(iri) or self.compact(iri)

    # --- pages -------------------------------------------------------------------------------

    def page(self, id_: str) -> EntityPage:
        iri = self.expand(id_)
        subject = URIRef(iri)
        idx = self._idx()
        shown = set(LABEL_PREDICATES) | set(DESCRIPTION_PREDICATES) | set(ALIAS_PREDICATES)
        claims: list[PageClaim] = []
        anything = False
        for _s, pred, obj in self._triples(subject):
            anything = True
            if str(pred) in shown:
                continue
            quals: tuple[tuple[str, str, PageValue], ...] = ()
            if isinstance(obj, BNode):
                quals = tuple(
                    sorted(
                        (self.compact(str(qp)), self._property_label(str(qp)), self.value(qv))
                        for _n, qp, qv in self._triples(obj)
                    )
                )
            claims.append(PageClaim(self.compact(str(pred)), self._property_label(str(pred)), self.value(obj), quals))
        if not anything and iri not in idx["properties"] and not any(True for _ in self._triples(None, None, subject)):
            raise UnknownEntity(f"There is no entity {self.compact(iri)} in the graph.")
        claims.sort(key=lambda c: (c.pid, c.value.text))
        return EntityPage(
            self.compact(iri),
            idx["labels"].get(iri, self.compact(iri)),
            idx["descriptions"].get(iri, ""),
            tuple(idx["aliases"].get(iri, ())),
            tuple(claims),
            "Property" if iri in idx["properties"] else None,
        )

    # --- search --------------------------------------------------------------------------------

    def search(self, text: str, *, items: int = 8, properties: int = 4) -> tuple[SearchHit, ...]:
        query = " ".join(_words(text))
        if not query:
            return ()
        idx = self._idx()
        found = match_names(query, idx["labels"], idx["aliases"])
        ranked = sorted(found.items(), key=lambda kv: (kv[1][0], kv[0]))
        out_items = [i for i, _ in ranked if i not in idx["properties"]][:items]
        out_props = [i for i, _ in ranked if i in idx["properties"]][:properties]
        return tuple(
            SearchHit(
                self.compact(i),
                idx["labels"].get(i, self.compact(i)),
                idx["descriptions"].get(i, ""),
                "property" if i in idx["properties"] else "item",
                "Property" if i in idx["properties"] else None,
                found[i][1],
            )
            for i in out_items + out_props
        )

    # --- property examples -------------------------------------------------------------------

    def property_examples(self, pid: str, n: int = 5) -> tuple[PropertyExample, ...]:
        iri = self.expand(pid)
        if iri not in self._idx()["properties"]:
            raise UnknownEntity(f"There is no property {self.compact(iri)} in the graph.")
        statements = sorted(
            ((s, o) for s, _p, o in self._triples(None, URIRef(iri), None)), key=lambda so: (str(so[0]), str(so[1]))
        )
        if not statements:
            return ()
        step = max(1, len(statements) // n)
        label = self._property_label(iri)
        return tuple(
            PropertyExample(self.value(s), self.compact(iri), label, self.value(o)) for s, o in statements[::step][:n]
        )
