"""The prefixes the Wikidata Query Service declares for every query, so queries need no PREFIX lines."""

from __future__ import annotations

import re
from collections.abc import Mapping

_DECLARED: Mapping[str, str] = {
    "wd": "http://www.wikidata.org/entity/",
    "wds": "http://www.wikidata.org/entity/statement/",
    "wdv": "http://www.wikidata.org/value/",
    "wdref": "http://www.wikidata.org/reference/",
    "wdt": "http://www.wikidata.org/prop/direct/",
    "wdtn": "http://www.wikidata.org/prop/direct-normalized/",
    "wdno": "http://www.wikidata.org/prop/novalue/",
    "wdata": "http://www.wikidata.org/wiki/Special:EntityData/",
    "p": "http://www.wikidata.org/prop/",
    "ps": "http://www.wikidata.org/prop/statement/",
    "psv": "http://www.wikidata.org/prop/statement/value/",
    "psn": "http://www.wikidata.org/prop/statement/value-normalized/",
    "pq": "http://www.wikidata.org/prop/qualifier/",
    "pqv": "http://www.wikidata.org/prop/qualifier/value/",
    "pqn": "http://www.wikidata.org/prop/qualifier/value-normalized/",
    "pr": "http://www.wikidata.org/prop/reference/",
    "prv": "http://www.wikidata.org/prop/reference/value/",
    "prn": "http://www.wikidata.org/prop/reference/value-normalized/",
    "wikibase": "http://wikiba.se/ontology#",
    "bd": "http://www.bigdata.com/rdf#",
    "hint": "http://www.bigdata.com/queryHints#",
    "gas": "http://www.bigdata.com/rdf/gas#",
    "mwapi": "https://www.mediawiki.org/ontology#API/",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "schema": "http://schema.org/",
    "prov": "http://www.w3.org/ns/prov#",
    "geo": "http://www.opengis.net/ont/geosparql#",
    "geof": "http://www.opengis.net/def/function/geosparql/",
    "ontolex": "http://www.w3.org/ns/lemon/ontolex#",
    "dct": "http://purl.org/dc/terms/",
    "cc": "http://creativecommons.org/ns#",
    "fn": "http://www.w3.org/2005/xpath-functions#",
}

# The most specific namespace first, so that whoever takes the first match shortens a statement
# IRI to wds:… and a statement property to ps:… (never wd:statement/… or p:statement/…).
PREFIXES: Mapping[str, str] = dict(sorted(_DECLARED.items(), key=lambda kv: -len(kv[1])))

WD = PREFIXES["wd"]

# The local names written after a prefix: SPARQL 1.1's PN_LOCAL without its backslash escapes
# (rdflib's parser keeps the backslash in the IRI) — ASCII letters, digits, '_', '-', inner '.'.
_PLAIN_LOCAL = re.compile(r"(?:[A-Za-z0-9_](?:[\w.-]*[\w-])?)?", re.ASCII)


def compact(iri: str, prefixes: Mapping[str, str] | None = None) -> str:
    """``http://www.wikidata.org/entity/Q42`` → ``wd:Q42``: the longest matching namespace wins
    (``wds:Q42-…`` for a statement, ``ps:P31`` for a statement property), and the result always
    reads back as the same IRI in a query (an IRI whose local name cannot be written plainly stays in ``<…>``).
    ``prefixes``: the graph's own (a user's file's ``@prefix``es, which its queries may use), instead of Wikidata's."""
    table = PREFIXES if prefixes is None else dict(sorted(prefixes.items(), key=lambda kv: -len(kv[1])))
    for prefix, ns in table.items():  # longest namespace first
        if ns and iri.startswith(ns):
            local = iri[len(ns) :]
            if _PLAIN_LOCAL.fullmatch(local):
                return f"{prefix}:{local}"
    return f"<{iri}>"


def entity_id(iri: str) -> str:
    """The QID or PID of an entity IRI (``wd:Q42`` → ``Q42``); other IRIs unchanged."""
    return iri[len(WD) :] if iri.startswith(WD) else iri


_NOT_IN_AN_IRI = frozenset('<>" {}|\\^`')  # the characters an IRI may not hold (RDF 1.1, as rdflib checks them)


def iri_characters_valid(iri: str) -> bool:
    """Whether ``iri`` holds none of the characters an IRI may not hold (a space, a quote, a backslash or one of
    ``<>{}|^```), as rdflib checks a ``URIRef`` (ours, not rdflib's private helper)."""
    return not _NOT_IN_AN_IRI.intersection(iri)
