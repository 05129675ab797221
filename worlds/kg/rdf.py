"""The graph in Wikidata's RDF model: truthy ``wdt:`` triples and ``p:``/``ps:``/``pq:`` statement nodes (qualifiers
such as P585 on P166 live there only), labels, descriptions and aliases, literals in Wikidata's lexical forms."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from worlds.kg.model import Claim, KGWorld, Value

if TYPE_CHECKING:  # rdflib is imported when triples are made, not with the world
    from rdflib.term import Literal, Node, URIRef

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
P_NS = "http://www.wikidata.org/prop/"
PS = "http://www.wikidata.org/prop/statement/"
PQ = "http://www.wikidata.org/prop/qualifier/"
WDS = "http://www.wikidata.org/entity/statement/"
WIKIBASE = "http://wikiba.se/ontology#"
SCHEMA = "http://schema.org/"
SKOS = "http://www.w3.org/2004/02/skos/core#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
XSD = "http://www.w3.org/2001/XMLSchema#"


def rdf_triples(world: KGWorld) -> Iterator[tuple[Node, Node, Node]]:
    """Every triple of the graph as rdflib terms, in Wikidata's RDF model.

    Items and properties get ``rdfs:label``, ``schema:description`` and ``skos:altLabel`` in
    English.  Each claim becomes a truthy ``wdt:`` triple and a statement node
    (``p:`` → node, ``ps:`` → value, ``pq:`` → qualifier values, ``wikibase:rank``).  Literals
    keep Wikidata's lexical forms (dates as ``1959-03-14T00:00:00Z``) and are never normalised.
    """
    from rdflib import Literal, URIRef

    def lit(text: str, *, lang: str | None = None, datatype: str | None = None) -> Literal:
        return Literal(text, lang=lang, datatype=URIRef(datatype) if datatype else None, normalize=False)

    a = URIRef(RDF + "type")
    label, desc, alt = URIRef(RDFS + "label"), URIRef(SCHEMA + "description"), URIRef(SKOS + "altLabel")
    rank, normal = URIRef(WIKIBASE + "rank"), URIRef(WIKIBASE + "NormalRank")
    statement_class = URIRef(WIKIBASE + "Statement")
    kinds = {"item": "WikibaseItem", "quantity": "Quantity", "time": "Time", "string": "String"}

    def value_term(v: Value) -> URIRef | Literal:
        if v.kind == "item":
            return URIRef(WD + v.value)
        if v.kind == "quantity":
            return lit(v.value, datatype=XSD + "decimal")
        if v.kind == "time":
            return lit(v.value, datatype=XSD + "dateTime")
        return lit(v.value)

    for p in world.properties.values():
        s = URIRef(WD + p.pid)
        yield (s, a, URIRef(WIKIBASE + "Property"))
        yield (s, label, lit(p.label, lang="en"))
        yield (s, desc, lit(p.description, lang="en"))
        for al in p.aliases:
            yield (s, alt, lit(al, lang="en"))
        yield (s, URIRef(WIKIBASE + "propertyType"), URIRef(WIKIBASE + kinds[p.datatype]))
        yield (s, URIRef(WIKIBASE + "directClaim"), URIRef(WDT + p.pid))
        yield (s, URIRef(WIKIBASE + "claim"), URIRef(P_NS + p.pid))
        yield (s, URIRef(WIKIBASE + "statementProperty"), URIRef(PS + p.pid))
        yield (s, URIRef(WIKIBASE + "qualifier"), URIRef(PQ + p.pid))
    for e in world.entities.values():
        s = URIRef(WD + e.qid)
        yield (s, label, lit(e.label, lang="en"))
        yield (s, desc, lit(e.description, lang="en"))
        for al in e.aliases:
            yield (s, alt, lit(al, lang="en"))
    for n, c in enumerate(world.claims):
        s = URIRef(WD + c.subject)
        o = value_term(c.value)
        yield (s, URIRef(WDT + c.pid), o)
        node = URIRef(WDS + f"{c.subject}-{_statement_id(c, n)}")
        yield (s, URIRef(P_NS + c.pid), node)
        yield (node, a, statement_class)
        yield (node, URIRef(PS + c.pid), o)
        yield (node, rank, normal)
        for qp, qv in c.qualifiers:
            yield (node, URIRef(PQ + qp), value_term(qv))


def _statement_id(c: Claim, n: int) -> str:
    h = hashlib.blake2b(f"{n}|{c.subject}|{c.pid}|{c.value.value}".encode(), digest_size=8).hexdigest().upper()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}"
