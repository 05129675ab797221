"""The SPARQL console's examples: each quirk of lecture 8 §1.4 as the right query, then the naive one; the dialect;
the four feedbacks of §1.5 and what the endpoint refuses.

Data for the console (the Knowledge-graph tab) and for anyone who wants the same queries: each
:class:`SparqlExample` says which feedback it gets (``expect``), which the tests check on the real
endpoint.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engines.settings import Settings

_LABELS = 'SERVICE wikibase:label { bd:serviceParam wikibase:language "[AUTO_LANGUAGE],en". }'


@dataclass(frozen=True)
class SparqlExample:
    """A query for the console: what it shows, where it comes from and the feedback it gets."""

    title: str
    source: str
    query: str
    expect: str  # rows | empty | syntax_error | timeout | refused


EXAMPLES: tuple[SparqlExample, ...] = (
    SparqlExample(
        "string instrumentalists: P279*",
        "quirk 3",
        f"""\
SELECT DISTINCT ?musician ?musicianLabel ?instrumentLabel WHERE {{
  ?musician wdt:P106 wd:Q1014 ;
            wdt:P1303 ?instrument .
  ?instrument wdt:P279* wd:Q1020 .
  {_LABELS}
}}
ORDER BY ?instrumentLabel ?musicianLabel""",
        "rows",
    ),
    SparqlExample(
        "↳ naive: P279 without *",
        "quirk 3",
        f"""\
SELECT DISTINCT ?musician ?musicianLabel ?instrumentLabel WHERE {{
  ?musician wdt:P106 wd:Q1014 ;
            wdt:P1303 ?instrument .
  ?instrument wdt:P279 wd:Q1020 .
  {_LABELS}
}}""",
        "empty",
    ),
    SparqlExample(
        "highest mountains: P2044",
        "quirk 2",
        f"""\
SELECT ?mountain ?mountainLabel ?elevation WHERE {{
  ?mountain wdt:P31 wd:Q1007 ;
            wdt:P2044 ?elevation .
  {_LABELS}
}}
ORDER BY DESC(?elevation)
LIMIT 5""",
        "rows",
    ),
    SparqlExample(
        "↳ naive: P2048 (height)",
        "quirk 2",
        f"""\
SELECT ?mountain ?mountainLabel ?height WHERE {{
  ?mountain wdt:P31 wd:Q1007 ;
            wdt:P2048 ?height .
  {_LABELS}
}}
ORDER BY DESC(?height)
LIMIT 5""",
        "empty",
    ),
    SparqlExample(
        "award years: pq:P585",
        "quirk 5",
        f"""\
SELECT ?laureate ?laureateLabel ?awardLabel ?date WHERE {{
  ?laureate p:P166 ?statement .
  ?statement ps:P166 ?award ;
             pq:P585 ?date .
  {_LABELS}
}}
ORDER BY ?date""",
        "rows",
    ),
    SparqlExample(
        "↳ naive: P585 on the person",
        "quirk 5",
        f"""\
SELECT ?laureate ?laureateLabel ?date WHERE {{
  ?laureate wdt:P166 ?award ;
            wdt:P585 ?date .
  {_LABELS}
}}""",
        "empty",
    ),
    SparqlExample(
        "Kestavia's cities: P131 chain",
        "quirk 6",
        f"""\
SELECT ?city ?cityLabel WHERE {{
  ?city wdt:P31 wd:Q1003 ;
        wdt:P131*/wdt:P17 wd:Q1047 .
  {_LABELS}
}}
ORDER BY ?cityLabel""",
        "rows",
    ),
    SparqlExample(
        "↳ naive: P17 only, too few",
        "quirk 6",
        f"""\
SELECT ?city ?cityLabel WHERE {{
  ?city wdt:P31 wd:Q1003 ;
        wdt:P17 wd:Q1047 .
  {_LABELS}
}}
ORDER BY ?cityLabel""",
        "rows",
    ),
    SparqlExample(
        "students per advisor: P184",
        "quirk 4",
        f"""\
SELECT ?advisorLabel (COUNT(?student) AS ?students) WHERE {{
  ?student wdt:P184 ?advisor .
  {_LABELS}
}}
GROUP BY ?advisorLabel
ORDER BY DESC(?students)""",
        "rows",
    ),
    SparqlExample(
        "two cities called Ashford",
        "quirk 7",
        f"""\
SELECT ?city ?cityDescription WHERE {{
  ?city rdfs:label "Ashford"@en .
  {_LABELS}
}}""",
        "rows",
    ),
    SparqlExample(
        "named subquery and a hint",
        "Blazegraph",
        f"""\
WITH {{
  SELECT ?mountain WHERE {{ ?mountain wdt:P31 wd:Q1007 . }}
}} AS %mountains
SELECT ?mountain ?mountainLabel ?elevation WHERE {{
  INCLUDE %mountains .
  ?mountain wdt:P2044 ?elevation .
  hint:Prior hint:runLast true .
  {_LABELS}
}}
ORDER BY ?elevation
LIMIT 3""",
        "rows",
    ),
    SparqlExample(
        "syntax error: a missing brace",
        "§1.5",
        """\
SELECT ?mountain ?elevation WHERE {
  ?mountain wdt:P31 wd:Q1007 ;
            wdt:P2044 ?elevation .
ORDER BY DESC(?elevation)
LIMIT 1""",
        "syntax_error",
    ),
    SparqlExample(
        "timeout: count a cross product",
        "§1.5",
        """\
SELECT (COUNT(*) AS ?n) WHERE {
  ?a ?p ?b .
  ?c ?q ?d .
}""",
        "timeout",
    ),
    SparqlExample(
        "refused: an update",
        "read-only",
        """\
INSERT DATA { wd:Q1007 rdfs:label "hill"@en . }""",
        "refused",
    ),
    SparqlExample(
        "refused: a remote SERVICE",
        "read-only",
        """\
SELECT ?s WHERE {
  SERVICE <https://dbpedia.org/sparql> { ?s ?p ?o . }
}
LIMIT 1""",
        "refused",
    ),
)
"""The console's examples: each quirk of §1.4 as the right query, then the naive one; the dialect; the feedbacks."""

# Queries that mean something on any graph (a user's RDF files, a remote endpoint): no vocabulary of the built-in
# world, no prefix a graph may lack.  The quirks of §1.4 are about the built-in world's entities and answer nothing
# on another graph, so a user's graph gets these instead, and the four feedbacks shown with plain IRIs.
_WHAT_IS_HERE = (
    SparqlExample(
        "classes by instance count",
        "any graph",
        """\
SELECT ?class (COUNT(?x) AS ?instances) WHERE {
  ?x a ?class .
}
GROUP BY ?class
ORDER BY DESC(?instances)
LIMIT 25""",
        "rows",
    ),
    SparqlExample(
        "properties by use",
        "any graph",
        """\
SELECT ?property (COUNT(*) AS ?uses) WHERE {
  ?s ?property ?o .
}
GROUP BY ?property
ORDER BY DESC(?uses)
LIMIT 25""",
        "rows",
    ),
)
_SAMPLE = SparqlExample(
    "a sample of statements",
    "any graph",
    """\
SELECT ?s ?p ?o WHERE {
  ?s ?p ?o .
}
LIMIT 25""",
    "rows",
)
_ANY_GRAPH_FEEDBACK = (
    SparqlExample(
        "syntax error: a missing brace",
        "§1.5",
        """\
SELECT ?s ?p WHERE {
  ?s ?p ?o .
ORDER BY ?s
LIMIT 1""",
        "syntax_error",
    ),
    SparqlExample(
        "refused: an update",
        "read-only",
        """\
INSERT DATA { <urn:example:a> <urn:example:b> "c" . }""",
        "refused",
    ),
    next(e for e in EXAMPLES if e.title == "refused: a remote SERVICE"),
)
RDF_EXAMPLES: tuple[SparqlExample, ...] = (*_WHAT_IS_HERE, _SAMPLE, *_ANY_GRAPH_FEEDBACK)
"""A user's RDF files: what is in them, a sample, and the feedbacks (no timeout example: on a small file the cross
product of §1.5 finishes, so it would show rows, not the timeout it is named for)."""
# A remote endpoint is somebody else's server: no query that scans its whole graph (counting, grouping or a cross
# product would use its time for minutes, and Wikidata's own limit is 60 s).
REMOTE_EXAMPLES: tuple[SparqlExample, ...] = (_SAMPLE, *_ANY_GRAPH_FEEDBACK)
"""A remote endpoint: a sample of statements and the feedbacks that cost it nothing (refused before it is asked)."""


def examples_for(settings: Settings) -> tuple[SparqlExample, ...]:
    """The examples for the graph the settings name: the built-in world's, a user's RDF files', a remote endpoint's."""
    if settings.kg_endpoint:
        return REMOTE_EXAMPLES
    if settings.kg_rdf:
        return RDF_EXAMPLES
    return EXAMPLES


def example(key: str) -> SparqlExample:
    """The first example whose title contains ``key``."""
    for candidate in EXAMPLES:
        if key in candidate.title:
            return candidate
    raise KeyError(f"no example {key!r}")


__all__ = ["EXAMPLES", "RDF_EXAMPLES", "REMOTE_EXAMPLES", "SparqlExample", "example", "examples_for"]
